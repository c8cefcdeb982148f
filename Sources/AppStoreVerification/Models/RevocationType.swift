/// `revocationType` of a revoked transaction (Apple added it in December
/// 2025 with `revocationPercentage`); unknown values are kept.
public struct RevocationType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The whole purchase was refunded.
    public static let refundFull = RevocationType(rawValue: "REFUND_FULL")
    /// Part of the purchase was refunded: `revocationPercentage` says how much.
    public static let refundProrated = RevocationType(rawValue: "REFUND_PRORATED")
    /// Family Sharing access was revoked.
    public static let familyRevoke = RevocationType(rawValue: "FAMILY_REVOKE")
}
