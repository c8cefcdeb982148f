/// `type` of a signed transaction; unknown values are kept.
public struct TransactionType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let autoRenewableSubscription = TransactionType(rawValue: "Auto-Renewable Subscription")
    public static let nonConsumable = TransactionType(rawValue: "Non-Consumable")
    public static let consumable = TransactionType(rawValue: "Consumable")
    public static let nonRenewingSubscription = TransactionType(rawValue: "Non-Renewing Subscription")
}
