/// What `GET /readyz` answers: whether the process's dependencies are up
/// (its database; the gateway's and PaymentsService's backends) as their
/// background probes last saw them, and a short detail for the body. Never
/// computed with a round trip: the probes already ran.
public struct AdminReadiness: Sendable, Equatable {
    public var isReady: Bool
    /// One line for operators, e.g. "database=up points=down"; no secrets.
    public var detail: String

    public init(isReady: Bool, detail: String) {
        self.isReady = isReady
        self.detail = detail
    }
}
