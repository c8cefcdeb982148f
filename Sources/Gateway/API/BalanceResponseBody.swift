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
        .object(
            JSONObject([
                "balance": .integer(balance),
                "lifetimeEarned": .integer(lifetimeEarned),
                "lifetimeSpent": .integer(lifetimeSpent),
            ]))
    }

    /// `json`'s bytes, written without building the document (every
    /// balance read answers with one).
    public func jsonBytes() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(112)
        output.append(contentsOf: #"{"balance":"#.utf8)
        output.append(contentsOf: String(balance).utf8)
        output.append(contentsOf: #","lifetimeEarned":"#.utf8)
        output.append(contentsOf: String(lifetimeEarned).utf8)
        output.append(contentsOf: #","lifetimeSpent":"#.utf8)
        output.append(contentsOf: String(lifetimeSpent).utf8)
        output.append(UInt8(ascii: "}"))
        return output
    }
}
