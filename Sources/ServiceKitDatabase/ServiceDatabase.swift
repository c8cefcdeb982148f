import Foundation
import Logging
import PostgresClient
import ServiceKit

/// The database side of the operator contract, the same for both services
/// that own a database: `DATABASE_URL`, `DATABASE_MAX_CONNECTIONS`, and a
/// health dependency refreshed by a background probe.
public enum ServiceDatabase {
    /// `DATABASE_URL` and `DATABASE_MAX_CONNECTIONS`, read before anything connects.
    public struct Settings: Sendable {
        /// The libpq connection string (a secret: never logged).
        public var connectionString: String
        public var connectionsMax: Int

        /// Reads both settings, reporting every problem to `settings`.
        public static func read(_ settings: inout SettingsCollector) -> Settings? {
            let url = settings.required(
                "DATABASE_URL", because: "it is the libpq connection string of this service's own database")
            let connectionsMax = settings.integer(
                "DATABASE_MAX_CONNECTIONS", in: 1...200,
                because:
                    "it bounds this process's connections, which PostgreSQL's max_connections caps for all instances")
            guard let url, let connectionsMax else { return nil }
            return Settings(connectionString: url, connectionsMax: Int(connectionsMax))
        }
    }

    /// A pool with `settings` (connects lazily). `socketEvents`: where its
    /// statements wait for their sockets (nil: PostgresClient's reactor thread).
    /// The server's notices and warnings go to `logger` (`noticeLogger`),
    /// so the process's stderr stays JSON lines.
    public static func pool(
        _ settings: Settings, applicationName: String, logger: Logger,
        socketEvents: (any PostgresSocketEvents)? = nil
    ) -> PostgresPool {
        PostgresPool(
            configuration: .init(
                connectionString: settings.connectionString, connectionsMax: settings.connectionsMax,
                applicationName: applicationName,
                socketEvents: socketEvents, noticeHandler: noticeLogger(logger)))
    }

    /// A server notice as a log line: a WARNING at warning level, anything
    /// else (NOTICE, INFO, ...) at info. Its text is the server's message
    /// about our own statements (no statement parameters are in it).
    public static func noticeLogger(_ logger: Logger) -> @Sendable (PostgresNotice) -> Void {
        { notice in
            var fields = ["severity": notice.severity, "detail": notice.message]
            if let sqlState = notice.sqlState { fields["sqlstate"] = sqlState }
            logger.log(notice.isWarning ? .warning : .info, "postgres notice", fields)
        }
    }

    /// After the start-up migrations: `migrate` exits here (they were all it
    /// asked for), `serve` (the default) returns, anything else is an error.
    public static func finishIfMigrateOnly(_ options: CommandLineOptions, logger: Logger, pool: PostgresPool)
        async throws
    {
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
