extension PostgresPool {
    /// One request for a connection, as an observer sees it.
    public struct Acquisition: Sendable, Equatable {
        /// From the request to a connection in hand or the failure: 0-ish
        /// when one was idle; a new connection's connect time included.
        public let waited: Duration
        /// It failed because no connection came in time or the waiter
        /// queue was full (each is a request answered UNAVAILABLE).
        public let gaveUp: Bool

        public init(waited: Duration, gaveUp: Bool) {
            self.waited = waited
            self.gaveUp = gaveUp
        }
    }

    /// Calls `observer` after every acquisition from now on (replacing an
    /// earlier one), so a service can count waits without this module
    /// knowing about metrics. It runs on the acquiring task: keep it quick.
    public func observeAcquisitions(_ observer: @escaping @Sendable (Acquisition) -> Void) {
        acquisitionObserver.withLock { $0 = AcquisitionObserver(observe: observer) }
    }

    /// The observer as the pool keeps it (see `acquisitionObserver`).
    struct AcquisitionObserver: Sendable {
        let observe: @Sendable (Acquisition) -> Void
    }
}
