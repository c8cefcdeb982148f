import Locking

/// The serving status of one service as its health check reports it: it
/// follows the service's dependencies (e.g. its database), refreshed by a
/// background probe so a health check costs no database round trip.
public final class HealthMonitor: Sendable {
    /// What one dependency reported last.
    public struct DependencyState: Sendable, Equatable {
        public var isHealthy: Bool
        public var detail: String

        public init(isHealthy: Bool, detail: String) {
            self.isHealthy = isHealthy
            self.detail = detail
        }
    }

    private let state = Mutex<(dependencies: [String: DependencyState], shuttingDown: Bool)>(([:], false))

    public init() {}

    /// Records the latest result for a dependency.
    public func report(_ dependency: String, healthy: Bool, detail: String = "") {
        state.withLock { $0.dependencies[dependency] = DependencyState(isHealthy: healthy, detail: detail) }
    }

    /// Marks the service as going away (health checks answer NOT_SERVING so
    /// load balancers drain it before it stops).
    public func beginShutdown() { state.withLock { $0.shuttingDown = true } }

    /// True when every dependency's last report was healthy and the service
    /// is not shutting down. A dependency never reported counts as unhealthy
    /// only once registered with `report`.
    public var isServing: Bool {
        state.withLock { state in !state.shuttingDown && state.dependencies.values.allSatisfy(\.isHealthy) }
    }

    /// Every dependency's last report.
    public var dependencies: [String: DependencyState] { state.withLock { $0.dependencies } }

    /// Runs `probe` every `interval` until the task is cancelled, reporting
    /// its result under `dependency`. The probe is the dependency's own cheap
    /// signal (e.g. the connection pool's last outcome, or one `SELECT 1`).
    public func runProbe(
        _ dependency: String,
        every interval: Duration,
        probe: @escaping @Sendable () async -> (healthy: Bool, detail: String)
    ) async {
        while !Task.isCancelled {
            let result = await probe()
            report(dependency, healthy: result.healthy, detail: result.detail)
            try? await Task.sleep(for: interval)
        }
    }
}
