/// Get Transaction Info's answer (`TransactionInfoResponse`): the
/// transaction as Apple's JWS. Verify it with `SignedDataVerifier`.
public struct TransactionInfoResponse: Sendable, Equatable {
    /// `signedTransactionInfo`: a JWSTransaction.
    public var signedTransactionInfo: String
}

/// Get App Transaction Info's answer (`AppTransactionInfoResponse`).
public struct AppTransactionInfoResponse: Sendable, Equatable {
    /// `signedAppTransactionInfo`: a JWSAppTransaction.
    public var signedAppTransactionInfo: String
}

/// A page of signed transactions: Get Transaction History's
/// `HistoryResponse` (`revision`, `hasMore`, `bundleId`, `appAppleId`,
/// `environment`, `signedTransactions`, at most 20 per page) and Get Refund
/// History's `RefundHistoryResponse` (`signedTransactions`, `revision`,
/// `hasMore`; refunded transactions in ascending `revocationDate` order).
public struct SignedTransactionsPage: Sendable, Equatable {
    public var signedTransactions: [String]
    /// The token for the next page; store the last one to ask later for
    /// what changed since.
    public var revision: String?
    public var hasMore: Bool
    public var bundleId: String?
    public var appAppleId: Int64?
    public var environment: String?
}

/// Look Up Order ID's answer (`OrderLookupResponse`): `status` 0 = valid
/// order id (then at least one transaction), 1 = invalid.
public struct OrderLookupResponse: Sendable, Equatable {
    public var status: Int64
    public var signedTransactions: [String]
    public var isValid: Bool { status == 0 }
}
