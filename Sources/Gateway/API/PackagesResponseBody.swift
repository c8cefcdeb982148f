import StrictJSON

/// GET /api/v1/points/packages: what this user may buy, in display order.
/// The price is a reference for non-store display; StoreKit's price wins.
public struct PackagesResponseBody: JSONResponseBody, Equatable {
    /// One purchasable package.
    public struct Package: Sendable, Equatable {
        /// The package kinds (docs/protocols/common/user-points-chat-data-protocol.md).
        public enum Kind: String, Sendable {
            case starter
            case regular
        }

        public let productCode: String
        public let appStoreProductId: String
        public let kind: Kind
        public let credits: Int64
        public let displayName: String
        /// Decimal text, e.g. "0.99" (text, so no binary rounding).
        public let price: String
        /// ISO 4217, e.g. "USD".
        public let currency: String

        public init(
            productCode: String, appStoreProductId: String, kind: Kind, credits: Int64, displayName: String,
            price: String, currency: String
        ) {
            self.productCode = productCode
            self.appStoreProductId = appStoreProductId
            self.kind = kind
            self.credits = credits
            self.displayName = displayName
            self.price = price
            self.currency = currency
        }

        var json: JSONValue {
            .object(
                JSONObject([
                    "productCode": .string(productCode),
                    "appStoreProductId": .string(appStoreProductId),
                    "kind": .string(kind.rawValue),
                    "credits": .integer(credits),
                    "displayName": .string(displayName),
                    "price": .string(price),
                    "currency": .string(currency),
                ]))
        }
    }

    public let packages: [Package]

    public init(packages: [Package]) { self.packages = packages }

    public var json: JSONValue {
        .object(JSONObject(["packages": .array(packages.map(\.json))]))
    }
}
