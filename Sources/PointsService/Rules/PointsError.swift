import Contracts
/// A PointsService failure with a stable machine-readable `reason` (sent in
/// the `error-reason` trailer) and the gRPC status it maps to, as data so the
/// RPC layer can conform it to its error protocol without a second table.
public enum PointsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A request field is missing, malformed or out of range.
    case validationFailed(field: String, problem: String)
    case productNotFound(productCode: String)
    /// The purchase (or clawback) an event refers to does not exist for this user.
    case eventNotFound(eventId: String)
    /// The email identity has already bought the starter pack.
    case starterPackIneligible
    /// A starter pack bought several at once (StoreKit's quantity): it is
    /// sold one unit, once per email identity. Nothing is credited.
    case starterPackQuantity(quantity: Int32)
    /// A spend larger than the balance: nothing was spent.
    case insufficientCredits(balance: Int64)
    /// Crediting would take the balance past `PointsLimits.balanceMax` (a
    /// grant, a clawback's reversal, a spend's reversal): the account's
    /// state refuses it, not the request, so it is FAILED_PRECONDITION;
    /// the same request may apply once the balance is lower. Nothing is written.
    case balanceLimitReached(credits: Int64)
    /// The event id was already used with different content.
    case eventConflict(eventId: String, problem: String)
    /// The database could not be reached or was overloaded; retrying may succeed.
    case databaseUnavailable(detail: String)
    /// A bug or broken invariant (e.g. a CHECK constraint fired); not retryable.
    case internalFailure(detail: String)

    /// The stable reason string of points.proto's header comment.
    public var reason: ErrorReason {
        switch self {
        case .validationFailed: return .validationFailed
        case .productNotFound: return .productNotFound
        case .eventNotFound: return .eventNotFound
        case .starterPackIneligible, .starterPackQuantity: return .starterPackIneligible
        case .insufficientCredits: return .insufficientCredits
        // Its own reason waits for Contracts.ErrorReason (and PaymentsService's
        // saga) to know one: the saga alerts and retries on VALIDATION_FAILED,
        // but would retry an unknown reason silently (docs/ARCHITECTURE.md,
        // "The ledger write path").
        case .balanceLimitReached: return .validationFailed
        case .eventConflict: return .eventConflict
        case .databaseUnavailable: return .databaseUnavailable
        case .internalFailure: return .internalFailure
        }
    }

    /// The gRPC status code name (as in the gRPC spec).
    public var grpcCodeName: String {
        switch self {
        case .validationFailed: return "INVALID_ARGUMENT"
        case .productNotFound, .eventNotFound: return "NOT_FOUND"
        case .starterPackIneligible, .starterPackQuantity, .insufficientCredits, .balanceLimitReached:
            return "FAILED_PRECONDITION"
        case .eventConflict: return "ALREADY_EXISTS"
        case .databaseUnavailable: return "UNAVAILABLE"
        case .internalFailure: return "INTERNAL"
        }
    }

    /// The numeric gRPC status code.
    public var grpcStatusCode: Int {
        switch self {
        case .validationFailed: return 3
        case .productNotFound, .eventNotFound: return 5
        case .starterPackIneligible, .starterPackQuantity, .insufficientCredits, .balanceLimitReached: return 9
        case .eventConflict: return 6
        case .databaseUnavailable: return 14
        case .internalFailure: return 13
        }
    }

    /// Whether the same request may succeed later (the saga retries these, compensates the rest).
    public var isTransient: Bool {
        if case .databaseUnavailable = self { return true }
        return false
    }

    /// A message safe to return to the caller: names fields, never echoes values.
    public var message: String {
        switch self {
        case .validationFailed(let field, let problem): return "\(field): \(problem)"
        case .productNotFound: return "unknown product code"
        case .eventNotFound: return "no such event for this user"
        case .starterPackIneligible: return "this email identity has already bought the starter pack"
        case .starterPackQuantity(let quantity):
            return "a starter pack is sold one at a time, once per email identity; this purchase is for \(quantity)"
        case .insufficientCredits(let balance): return "not enough credits: the balance is \(balance)"
        case .balanceLimitReached(let credits):
            return "crediting \(credits) would take the balance past \(PointsLimits.balanceMax)"
        case .eventConflict(_, let problem): return "event id already used: \(problem)"
        case .databaseUnavailable: return "database unavailable, retry later"
        case .internalFailure: return "internal error"
        }
    }

    public var description: String {
        switch self {
        case .databaseUnavailable(let detail), .internalFailure(let detail): return "\(reason): \(detail)"
        default: return "\(reason): \(message)"
        }
    }
}
