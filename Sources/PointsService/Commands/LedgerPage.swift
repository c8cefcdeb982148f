/// One page of a user's ledger, newest first; an empty token means the end.
public struct LedgerPage: Sendable, Equatable {
    public let entries: [LedgerRecord]
    public let nextPageToken: String
}
