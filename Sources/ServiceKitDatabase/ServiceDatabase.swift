import Foundation
import PostgresClient
import ServiceKit

/// The database side of the operator contract, the same for both services
/// that own a database: `DATABASE_URL`, `DATABASE_MAX_CONNECTIONS`, and a
/// health dependency refreshed by a background probe.
public enum ServiceDatabase {
    /// A pool from `DATABASE_URL` and `DATABASE_MAX_CONNECTIONS` (1...200).
    public static func pool(_ options: CommandLineOptions, applicationName: String) throws -> PostgresPool {
        guard let maxConnections = Int(try options.required("DATABASE_MAX_CONNECTIONS")), (1...200).contains(maxConnections) else {
            throw CommandLineError("DATABASE_MAX_CONNECTIONS must be 1...200")
        }
        return PostgresPool(configuration: .init(
            connectionString: try options.required("DATABASE_URL"), maxConnections: maxConnections, applicationName: applicationName))
    }

    /// After the start-up migrations: `migrate` exits here (they were all it
    /// asked for), `serve` (the default) returns, anything else is an error.
    public static func finishIfMigrateOnly(_ options: CommandLineOptions, logger: Logger, pool: PostgresPool) async throws {
        switch options.positional.first ?? "serve" {
        case "migrate":
            logger.notice("migrations applied")
            await pool.close()
            exit(0)
        case "serve":
            return
        case let other:
            throw CommandLineError("unknown subcommand \(other) (see --help)")
        }
    }

    /// Reports the pool's health as the dependency "database" once a second
    /// until cancelled (one `select 1` per probe, none per health check).
    public static func watch(_ pool: PostgresPool, monitor: HealthMonitor) -> Task<Void, Never> {
        monitor.report("database", healthy: true)
        return Task {
            await monitor.runProbe("database", every: .seconds(1)) {
                let healthy = await pool.probe()
                return (healthy, healthy ? "" : "database unreachable")
            }
        }
    }
}
