import StrictJSON

/// GET /api/v1/points/balance: the user's credits.
public struct BalanceResponseBody: JSONResponseBody, Equatable {
    public let balance: Int64
    public let lifetimeEarned: Int64
    public let lifetimeSpent: Int64

    public init(balance: Int64, lifetimeEarned: Int64, lifetimeSpent: Int64) {
        self.balance = balance
        self.lifetimeEarned = lifetimeEarned
        self.lifetimeSpent = lifetimeSpent
    }

    public var json: JSONValue {
        .object(JSONObject([
            "balance": .integer(balance),
            "lifetimeEarned": .integer(lifetimeEarned),
            "lifetimeSpent": .integer(lifetimeSpent),
        ]))
    }
}
