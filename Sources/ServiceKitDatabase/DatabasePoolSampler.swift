import ServiceKit
import Metrics
import PostgresClient

/// Feeds a service's pool into its metrics: every acquisition's wait (and
/// whether it gave up) as it happens, and once a second the connections in
/// use, the bound, the waiters and the database's health as the monitor's
/// probe last saw it (`iap_dependency_up{dependency="database"}`). The pool's
/// numbers sit behind its actor, so they are sampled here rather than at
/// scrape time.
public enum DatabasePoolSampler {
    public static let interval = Duration.seconds(1)

    /// Starts sampling; cancel the task to stop.
    public static func start(
        _ pool: PostgresPool, metrics: DatabasePoolMetrics, dependencies: DependencyMetrics, monitor: HealthMonitor
    ) -> Task<Void, Never> {
        pool.observeAcquisitions { acquisition in
            metrics.recordAcquire(waited: acquisition.waited, timedOut: acquisition.gaveUp)
        }
        return Task {
            while !Task.isCancelled {
                let statistics = await pool.statistics
                metrics.update(
                    inUse: statistics.openConnections - statistics.idleConnections,
                    max: pool.configuration.connectionsMax, waiters: statistics.waiters)
                dependencies.report(.database, isUp: monitor.dependencies["database"]?.isHealthy ?? false)
                try? await Task.sleep(for: interval)
            }
        }
    }
}
