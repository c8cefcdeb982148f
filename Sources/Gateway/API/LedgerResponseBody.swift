import HTTPServer
import StrictJSON
import UTCTime

/// GET /api/v1/points/ledger: one page of the signed-in user's own points
/// ledger, newest first (docs/protocols/common/user-points-chat-data-protocol.md).
/// Each entry says what changed, by how much, the balance after it, when,
/// and what it was for; internal metadata stays inside.
public struct LedgerResponseBody: JSONResponseBody, Equatable {
    /// One ledger row as the app sees it.
    public struct Entry: Sendable, Equatable {
        public let id: String
        public let eventId: String
        /// purchase, refund, refund_reversal, refund_settlement, consume, consume_reversal, adjust, register, grant.
        public let changeType: String
        /// 1 credits the user, -1 debits.
        public let direction: Int32
        /// Always >= 0; `direction` gives the sign.
        public let amount: Int64
        public let balanceAfter: Int64
        /// What it was for: payment (purchases and refunds), support (an
        /// operator's adjustment), or what a spend paid for (e.g. chat).
        public let bizType: String
        public let bizId: String?
        public let createdAtUnixMilliseconds: Int64
        /// The Apple purchase a payment entry belongs to, when it names one.
        public let transactionId: String?
        public let productCode: String?
    }

    public let entries: [Entry]
    /// Empty on the last page.
    public let nextPageToken: String

    public var json: JSONValue {
        var object = JSONObject()
        object.insert(
            "entries",
            .array(
                entries.map { entry in
                    var item = JSONObject()
                    item.insert("id", .string(entry.id))
                    item.insert("eventId", .string(entry.eventId))
                    item.insert("changeType", .string(entry.changeType))
                    item.insert("direction", .integer(Int64(entry.direction)))
                    item.insert("amount", .integer(entry.amount))
                    item.insert("balanceAfter", .integer(entry.balanceAfter))
                    item.insert("bizType", .string(entry.bizType))
                    item.insertIfPresent("bizId", entry.bizId.map(JSONValue.string))
                    item.insert(
                        "createdAt", .string(UTCDateTime(unixMilliseconds: entry.createdAtUnixMilliseconds).rfc3339))
                    item.insertIfPresent("transactionId", entry.transactionId.map(JSONValue.string))
                    item.insertIfPresent("productCode", entry.productCode.map(JSONValue.string))
                    return .object(item)
                }))
        object.insertIfPresent("nextPageToken", nextPageToken.isEmpty ? nil : .string(nextPageToken))
        return .object(object)
    }
}
