/// One purchasable credit package of the catalog (as the app sees it:
/// docs/protocols/common/user-points-chat-data-protocol.md, section 2).
public struct CreditPackage: Sendable, Equatable, Codable {
    /// Starter packs sell once per email identity; regular ones again and again.
    public enum Kind: String, Sendable, Codable {
        case starter
        case regular
    }

    public let productCode: String
    public let appStoreProductId: String
    public let kind: Kind
    public let credits: Int64
    public let displayName: String
    /// Reference price for non-store display only (decimal text); the App Store price wins.
    public let referencePrice: String
    public let referenceCurrency: String
    public let sortOrder: Int32
}
