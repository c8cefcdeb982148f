import Foundation

/// How one request ended, as the checks need it. A retryable problem and an
/// unknown outcome (no answer: the connection was refused, reset or timed
/// out) both mean "submit again later"; only `unexpected` is a failure.
enum FaultAnswer: Equatable {
    case granted
    case alreadyGranted
    /// 409 PAYMENT_TRANSACTION_REVOKED: expected only after a refund was sent.
    case revoked
    /// A notification or spend the system took.
    case accepted
    /// INSUFFICIENT_CREDITS on a spend: nothing was spent.
    case insufficient
    case retryable(String)
    case unknown(String)
    case unexpected(String)

    /// Short text for the record files and tallies.
    var label: String {
        switch self {
        case .granted: return "granted"
        case .alreadyGranted: return "already_granted"
        case .revoked: return "revoked"
        case .accepted: return "accepted"
        case .insufficient: return "insufficient"
        case .retryable(let code): return "retry:\(code)"
        case .unknown(let why): return "unknown:\(why)"
        case .unexpected(let what): return "unexpected:\(what)"
        }
    }

    /// The tally key: retryable and unknown answers by kind, not by detail.
    var tallyLabel: String {
        switch self {
        case .retryable(let code): return "retry:\(code)"
        case .unknown: return "no_answer"
        case .unexpected: return "UNEXPECTED"
        default: return label
        }
    }

    var mustResubmit: Bool {
        switch self {
        case .retryable, .unknown: return true
        default: return false
        }
    }

    /// An HTTP answer: 200 with a status, or an RFC 9457 problem whose
    /// `retryable` member decides; any other shape is unexpected.
    static func http(status: Int, body: Data) -> FaultAnswer {
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        if status == 200 {
            switch object["status"] as? String {
            case "granted": return .granted
            case "already_granted": return .alreadyGranted
            default: return .accepted
            }
        }
        let code = object["code"] as? String ?? "HTTP_\(status)"
        if status == 409 && code == "PAYMENT_TRANSACTION_REVOKED" { return .revoked }
        if object["retryable"] as? Bool == true { return .retryable(code) }
        // A proxy's error page or an empty 5xx: the outcome is unknown, so resubmit (docs: treated as retryable).
        if object.isEmpty && status >= 500 { return .unknown("HTTP \(status) without a problem") }
        return .unexpected("HTTP \(status) \(code)")
    }
}
