import Foundation

/// One page of the user's points ledger (GET /api/v1/points/ledger), newest
/// first; `nextPageToken` is nil on the last page.
public struct LedgerPage: Sendable, Hashable, Decodable {
    /// One ledger entry as the gateway shows it.
    public struct Entry: Sendable, Hashable, Decodable {
        public let id: String
        public let eventId: String
        /// purchase, refund, refund_reversal, refund_settlement, consume, consume_reversal, adjust, ...
        public let changeType: String
        /// 1 credits in, -1 credits out.
        public let direction: Int
        /// Always >= 0; `direction` gives the sign.
        public let amount: Int64
        public let balanceAfter: Int64
        /// What it was for: payment, support, or what a spend paid for (e.g. chat).
        public let bizType: String
        public let bizId: String?
        /// RFC 3339 UTC, as the gateway writes it.
        public let createdAt: String
        public let transactionId: String?
        public let productCode: String?

        /// The signed change: +amount or -amount.
        public var signedAmount: Int64 { direction < 0 ? -amount : amount }
    }

    public let entries: [Entry]
    public let nextPageToken: String?
}

/// One page of the user's purchases (GET /api/v1/payments/apple/transactions),
/// newest first; `nextPageToken` is nil on the last page.
public struct TransactionPage: Sendable, Hashable, Decodable {
    public let transactions: [TransactionStatus]
    public let nextPageToken: String?
}
