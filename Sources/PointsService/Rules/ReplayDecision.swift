/// What to do with a request whose event id may already be stored: apply it,
/// answer with the stored first result, or refuse (same id, other content).
enum ReplayDecision: Equatable, Sendable {
    case apply
    case replay
    case conflict(problem: String)

    /// `stored` is the row already holding this event id, if any.
    static func decide(
        stored: (changeType: String, fingerprint: String)?, expectedChangeType: String, fingerprint: String
    ) -> ReplayDecision {
        guard let stored else { return .apply }
        guard stored.changeType == expectedChangeType else {
            return .conflict(problem: "it belongs to a \(stored.changeType) entry")
        }
        guard stored.fingerprint == fingerprint else {
            return .conflict(problem: "the request content differs from the first one")
        }
        return .replay
    }
}
