/// One package the user may buy (GET /api/v1/points/packages), in the
/// gateway's display order. The price is the backend's reference for
/// non-store display only: StoreKit's localized price is what the user pays
/// and what the app shows (`PackageOffer.displayPrice`).
public struct CreditPackage: Sendable, Hashable, Codable {
    /// The package kinds of docs/protocols/common/user-points-chat-data-protocol.md section 2; a kind added later decodes as `unrecognized`.
    public enum Kind: Sendable, Hashable, Codable {
        /// The new user pack: listed only while this email identity may buy it.
        case starter
        case regular
        case unrecognized(String)

        public init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            self =
                switch text {
                case "starter": .starter
                case "regular": .regular
                default: .unrecognized(text)
                }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(wireValue)
        }

        public var wireValue: String {
            switch self {
            case .starter: "starter"
            case .regular: "regular"
            case .unrecognized(let text): text
            }
        }
    }

    /// The backend's package code (e.g. `starter_pack`), sent back on verify.
    public let productCode: String
    /// The App Store product id StoreKit sells it as.
    public let appStoreProductId: String
    public let kind: Kind
    public let credits: Int64
    public let displayName: String
    /// Reference price as decimal text (e.g. "1.99").
    public let price: String
    /// ISO 4217 currency of `price`.
    public let currency: String

    public init(
        productCode: String, appStoreProductId: String, kind: Kind, credits: Int64, displayName: String, price: String,
        currency: String
    ) {
        self.productCode = productCode
        self.appStoreProductId = appStoreProductId
        self.kind = kind
        self.credits = credits
        self.displayName = displayName
        self.price = price
        self.currency = currency
    }
}

/// The body of GET /api/v1/points/packages.
struct PackageListBody: Decodable, Sendable {
    let packages: [CreditPackage]
}
