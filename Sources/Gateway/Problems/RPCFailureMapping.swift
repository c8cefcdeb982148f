import Contracts

/// The one table from a backend failure (gRPC status code as an Int 0...16,
/// plus the `error-reason` trailer the services send; see the headers of
/// Protos/points/v1/points.proto and Protos/payments/v1/payments.proto) to
/// the public problem. Exact (code, reason) pairs win; otherwise the code
/// alone decides; anything unknown is INTERNAL.
public enum RPCFailureMapping {
    /// gRPC status codes used below (the numbering is part of gRPC's spec).
    public enum GRPCCode {
        public static let ok = 0
        public static let cancelled = 1
        public static let unknown = 2
        public static let invalidArgument = 3
        public static let deadlineExceeded = 4
        public static let notFound = 5
        public static let alreadyExists = 6
        public static let permissionDenied = 7
        public static let resourceExhausted = 8
        public static let failedPrecondition = 9
        public static let aborted = 10
        public static let outOfRange = 11
        public static let unimplemented = 12
        public static let internalError = 13
        public static let unavailable = 14
        public static let dataLoss = 15
        public static let unauthenticated = 16
    }

    private struct Key: Hashable {
        let code: Int
        let reason: ErrorReason
    }

    /// (code, reason) -> problem, for every reason the services document.
    private static let exact: [Key: ProblemCode] = [
        Key(code: GRPCCode.notFound, reason: .productNotFound): .paymentProductNotFound,
        Key(code: GRPCCode.notFound, reason: .transactionNotFound): .notFound,
        // Ledger events are internal: a missing one on a public route is our bug.
        Key(code: GRPCCode.notFound, reason: .eventNotFound): .internalError,
        Key(code: GRPCCode.invalidArgument, reason: .validationFailed): .validationFailedUnprocessable,
        Key(code: GRPCCode.invalidArgument, reason: .productMismatch): .paymentProductMismatch,
        Key(code: GRPCCode.invalidArgument, reason: .transactionInvalid): .paymentTransactionInvalid,
        Key(code: GRPCCode.failedPrecondition, reason: .transactionRevoked): .paymentTransactionRevoked,
        Key(code: GRPCCode.failedPrecondition, reason: .starterPackIneligible): .paymentStarterPackIneligible,
        Key(code: GRPCCode.failedPrecondition, reason: .environmentNotAllowed): .paymentEnvironmentNotAllowed,
        Key(code: GRPCCode.alreadyExists, reason: .transactionConflict): .paymentTransactionConflict,
        // Same event id with different content: a gateway caller never
        // chooses event ids, so this is an internal inconsistency.
        Key(code: GRPCCode.alreadyExists, reason: .eventConflict): .internalError,
        // No public route spends credits (the app's features call Spend
        // themselves): reaching the gateway, it is our inconsistency.
        Key(code: GRPCCode.failedPrecondition, reason: .insufficientCredits): .internalError,
        Key(code: GRPCCode.unavailable, reason: .appleUnavailable): .paymentAppleUnavailable,
        Key(code: GRPCCode.unavailable, reason: .pointsUnavailable): .serviceUnavailable,
        Key(code: GRPCCode.unavailable, reason: .databaseUnavailable): .serviceUnavailable,
        Key(code: GRPCCode.internalError, reason: .grantFailed): .paymentGrantFailed,
        Key(code: GRPCCode.invalidArgument, reason: .receiptInvalid): .paymentReceiptInvalid,
        Key(code: GRPCCode.failedPrecondition, reason: .appleAPINotConfigured): .paymentReceiptsUnavailable,
    ]

    /// The problem for a failed call. `reason` is the `error-reason`
    /// trailer, nil when absent.
    public static func problemCode(grpcCode: Int, reason: String?) -> ProblemCode {
        if let reason, let code = exact[Key(code: grpcCode, reason: ErrorReason(rawValue: reason))] { return code }
        switch grpcCode {
        // Transient by gRPC's definition: the same call may succeed later.
        case GRPCCode.unavailable, GRPCCode.deadlineExceeded, GRPCCode.cancelled,
            GRPCCode.resourceExhausted, GRPCCode.aborted:
            return .serviceUnavailable
        default:
            return .internalError
        }
    }

    /// The problem for a failed call, for the request at `instance`.
    /// `detail` must be a stable, secret-free text (e.g. the `jws-failure`
    /// trailer's code), never the backend's free-form message.
    public static func problem(grpcCode: Int, reason: String?, detail: String? = nil, instance: String? = nil)
        -> Problem
    {
        Problem(problemCode(grpcCode: grpcCode, reason: reason), detail: detail, instance: instance)
    }

    /// Every documented (code, reason) pair, for tests and docs.
    public static var documentedPairs: [(grpcCode: Int, reason: String, problem: ProblemCode)] {
        exact.map { ($0.key.code, $0.key.reason.rawValue, $0.value) }.sorted {
            ($0.grpcCode, $0.reason) < ($1.grpcCode, $1.reason)
        }
    }
}
