import Contracts

/// A PaymentsService failure with a stable machine-readable `reason` (the
/// `error-reason` trailer, see payments.proto) and its gRPC status, kept as
/// data so the gateway's one mapping table can turn it into a problem.
enum PaymentsError: Error, Equatable, Sendable, CustomStringConvertible {
    case validationFailed(field: String, problem: String)
    case productNotFound
    /// The app's product ids disagree with the catalog or the signed payload.
    case productMismatch(problem: String)
    /// The JWS failed verification (`jwsFailure` is the verifier's code) or
    /// its content contradicts the request.
    case transactionInvalid(jwsFailure: String, problem: String)
    case transactionRevoked
    case starterPackIneligible
    /// A verified purchase from an environment this deployment does not
    /// credit for this user (a Sandbox/TestFlight purchase next to
    /// Production, by a user not in APPLE_SANDBOX_USER_IDS).
    case environmentNotAllowed(environment: String)
    /// Another user owns this transaction (or its appAccountToken).
    case transactionConflict
    case transactionNotFound
    /// Apple's side (OCSP) could not be reached; retry later.
    case appleUnavailable(detail: String)
    /// PointsService could not be reached; the saga keeps the purchase and retries.
    case pointsUnavailable(detail: String)
    case databaseUnavailable(detail: String)
    /// Verified and kept, not credited yet for a reason an operator must fix
    /// (alerted); resubmitting succeeds once it is fixed.
    case grantFailed(detail: String)
    case internalFailure(detail: String)
    /// A StoreKit 1 app receipt that does not read (`code` is
    /// `AppReceiptError`'s); nothing is written.
    case receiptInvalid(code: String)
    /// The receipt route needs the App Store Server API key, not set here.
    case appleAPINotConfigured

    var reason: ErrorReason {
        switch self {
        case .validationFailed: .validationFailed
        case .productNotFound: .productNotFound
        case .productMismatch: .productMismatch
        case .transactionInvalid: .transactionInvalid
        case .transactionRevoked: .transactionRevoked
        case .starterPackIneligible: .starterPackIneligible
        case .environmentNotAllowed: .environmentNotAllowed
        case .transactionConflict: .transactionConflict
        case .transactionNotFound: .transactionNotFound
        case .appleUnavailable: .appleUnavailable
        case .pointsUnavailable: .pointsUnavailable
        case .databaseUnavailable: .databaseUnavailable
        case .grantFailed: .grantFailed
        case .internalFailure: .internalFailure
        case .receiptInvalid: .receiptInvalid
        case .appleAPINotConfigured: .appleAPINotConfigured
        }
    }

    /// The numeric gRPC status code (see payments.proto's header).
    var grpcStatusCode: Int {
        switch self {
        case .validationFailed, .productMismatch, .transactionInvalid, .receiptInvalid: 3  // INVALID_ARGUMENT
        case .productNotFound, .transactionNotFound: 5  // NOT_FOUND
        case .transactionConflict: 6  // ALREADY_EXISTS
        case .transactionRevoked, .starterPackIneligible: 9  // FAILED_PRECONDITION
        case .environmentNotAllowed, .appleAPINotConfigured: 9  // FAILED_PRECONDITION
        case .grantFailed, .internalFailure: 13  // INTERNAL
        case .appleUnavailable, .pointsUnavailable, .databaseUnavailable: 14  // UNAVAILABLE
        }
    }

    /// Whether the app may resubmit the same transaction later.
    var isRetryable: Bool { grpcStatusCode == 14 }

    /// Safe to return to callers: names fields, never echoes a JWS or an email.
    var message: String {
        switch self {
        case .validationFailed(let field, let problem): "\(field): \(problem)"
        case .productNotFound: "unknown or disabled product code"
        case .productMismatch(let problem): "product mismatch: \(problem)"
        case .transactionInvalid(_, let problem): "signed transaction invalid: \(problem)"
        case .transactionRevoked: "the transaction was refunded or revoked"
        case .starterPackIneligible: "this email identity has already bought the starter pack"
        case .environmentNotAllowed(let environment):
            "purchases from the \(environment) environment are not credited by this deployment"
        case .transactionConflict: "the transaction belongs to another account"
        case .transactionNotFound: "no such transaction for this user"
        case .appleUnavailable: "Apple could not be reached, retry later"
        case .pointsUnavailable: "credits could not be granted yet, retry later; the purchase is kept"
        case .databaseUnavailable: "database unavailable, retry later"
        case .grantFailed: "the purchase was verified but could not be credited"
        case .internalFailure: "internal error"
        case .receiptInvalid(let code): "app receipt invalid: \(code)"
        case .appleAPINotConfigured:
            "app receipts need the App Store Server API, which this deployment is not configured for"
        }
    }

    var description: String {
        switch self {
        case .appleUnavailable(let d), .pointsUnavailable(let d), .databaseUnavailable(let d), .grantFailed(let d),
            .internalFailure(let d):
            "\(reason): \(d)"
        default: "\(reason): \(message)"
        }
    }
}
