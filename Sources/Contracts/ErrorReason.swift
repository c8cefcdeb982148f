import RPCCore

/// The one vocabulary of machine-readable failure reasons shared by the
/// three processes. A failed call carries its reason in the trailer
/// `error-reason` (the proto headers list which service answers which,
/// under which gRPC code). Reasons are values, so the list can grow; each
/// knows whether retrying the same request unchanged could ever succeed
/// (`isPermanent`), so transient vs permanent is decided here only.
public struct ErrorReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    // MARK: Both services
    /// A field breaks its rule; the trailer's message names it.
    public static let validationFailed = ErrorReason(rawValue: "VALIDATION_FAILED")
    /// The product code is not in the catalog. Not permanent: catalogs change
    /// (a rolling deploy can briefly disagree), and a verified purchase of it
    /// is retried and alerted, never refused for good.
    public static let productNotFound = ErrorReason(rawValue: "PRODUCT_NOT_FOUND")
    public static let starterPackIneligible = ErrorReason(rawValue: "STARTER_PACK_INELIGIBLE")
    public static let databaseUnavailable = ErrorReason(rawValue: "DATABASE_UNAVAILABLE")

    // MARK: PointsService
    /// A ledger event (purchase, clawback) the request refers to does not exist.
    public static let eventNotFound = ErrorReason(rawValue: "EVENT_NOT_FOUND")
    /// A spend larger than the balance: nothing was spent.
    public static let insufficientCredits = ErrorReason(rawValue: "INSUFFICIENT_CREDITS")
    /// The event id was used with other content, or the movement contradicts
    /// the ledger (a second unreversed clawback of one purchase).
    public static let eventConflict = ErrorReason(rawValue: "EVENT_CONFLICT")

    // MARK: PaymentsService
    public static let productMismatch = ErrorReason(rawValue: "PRODUCT_MISMATCH")
    public static let transactionInvalid = ErrorReason(rawValue: "TRANSACTION_INVALID")
    public static let transactionRevoked = ErrorReason(rawValue: "TRANSACTION_REVOKED")
    public static let transactionConflict = ErrorReason(rawValue: "TRANSACTION_CONFLICT")
    public static let transactionNotFound = ErrorReason(rawValue: "TRANSACTION_NOT_FOUND")
    public static let appleUnavailable = ErrorReason(rawValue: "APPLE_UNAVAILABLE")
    public static let pointsUnavailable = ErrorReason(rawValue: "POINTS_UNAVAILABLE")
    /// Verified and kept, but not credited yet for a reason an operator must
    /// fix (alerted); the saga keeps retrying, so resubmitting later succeeds.
    public static let grantFailed = ErrorReason(rawValue: "GRANT_FAILED")
    /// A Sandbox purchase this deployment does not credit (APPLE_SANDBOX_USER_IDS).
    public static let environmentNotAllowed = ErrorReason(rawValue: "ENVIRONMENT_NOT_ALLOWED")
    /// VerifyReceipt: the app receipt does not read (not base64, truncated,
    /// not PKCS #7, past a bound); the trailer `receipt-failure` names
    /// `AppReceiptError`'s code. The same receipt will never read.
    public static let receiptInvalid = ErrorReason(rawValue: "RECEIPT_INVALID")
    /// VerifyReceipt on a deployment without the App Store Server API key:
    /// a receipt's ids can only be looked up there. Permanent: it changes
    /// with a deployment, not with time, so the app must not loop on it.
    public static let appleAPINotConfigured = ErrorReason(rawValue: "APPLE_API_NOT_CONFIGURED")
    /// A bug or an unexpected failure on the answering side.
    public static let internalFailure = ErrorReason(rawValue: "INTERNAL")

    /// Every reason above, for tests and documentation.
    public static let all: [ErrorReason] = [
        .validationFailed, .productNotFound, .starterPackIneligible, .databaseUnavailable, .eventNotFound,
        .eventConflict,
        .insufficientCredits,
        .productMismatch, .transactionInvalid, .transactionRevoked, .transactionConflict, .transactionNotFound,
        .appleUnavailable, .pointsUnavailable, .grantFailed, .environmentNotAllowed, .internalFailure,
        .receiptInvalid, .appleAPINotConfigured,
    ]

    /// True when the same request, sent again unchanged, can never succeed.
    /// Unknown reasons are transient: retrying an idempotent call is safe,
    /// giving up on a paid purchase is not.
    public var isPermanent: Bool {
        switch self {
        case .validationFailed, .starterPackIneligible, .eventNotFound, .eventConflict, .productMismatch,
            .transactionInvalid,
            .transactionRevoked, .transactionConflict, .transactionNotFound, .environmentNotAllowed, .receiptInvalid,
            .appleAPINotConfigured:
            return true
        default:
            return false
        }
    }

    /// The trailer key.
    public static let metadataKey = "error-reason"

    /// An `RPCError` carrying `reason` in its trailers.
    public static func error(code: RPCError.Code, reason: ErrorReason, message: String, extra: [(String, String)] = [])
        -> RPCError
    {
        var metadata = Metadata()
        metadata.addString(reason.rawValue, forKey: metadataKey)
        for (key, value) in extra { metadata.addString(value, forKey: key) }
        return RPCError(code: code, message: message, metadata: metadata)
    }

    /// The reason a received error carries, if any, as text.
    public static func reason(of error: RPCError) -> String? {
        error.metadata[stringValues: metadataKey].first
    }
}

extension ProtobufError: RPCErrorConvertible {
    /// Bytes a caller sent that do not decode are the caller's fault
    /// (INVALID_ARGUMENT); a schema mismatch is ours (INTERNAL).
    public var rpcError: RPCError {
        switch kind {
        case .malformedWire, .invalidUTF8, .embeddedNUL, .tooDeep:
            return ErrorReason.error(
                code: .invalidArgument, reason: .validationFailed, message: "request message: \(detail)")
        case .schemaMismatch:
            return RPCError(code: .internal, message: "internal error", cause: self)
        }
    }
}
