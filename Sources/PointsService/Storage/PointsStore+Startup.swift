import Foundation
import PostgresClient

extension PointsStore {
    /// Why the store could not start; the service exits with this message.
    struct StartupError: Error, CustomStringConvertible {
        let description: String
    }

    /// Builds the store from the environment and migrates the schema:
    /// POINTS_DATABASE_URL (required), POINTS_DATABASE_MAX_CONNECTIONS (default 8),
    /// PACKAGES_FILE (default config/packages.json).
    static func start(environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> PointsStore {
        guard let url = environment["POINTS_DATABASE_URL"], !url.isEmpty else {
            throw StartupError(description: "POINTS_DATABASE_URL is not set")
        }
        let maxConnections = environment["POINTS_DATABASE_MAX_CONNECTIONS"].flatMap { Int($0) } ?? 8
        guard (1...100).contains(maxConnections) else {
            throw StartupError(description: "POINTS_DATABASE_MAX_CONNECTIONS must be 1...100")
        }
        let catalog = try PackageCatalog.fromEnvironment(environment)
        let pool = PostgresPool(configuration: .init(connectionString: url, maxConnections: maxConnections,
                                                      applicationName: "points-service"))
        let store = PointsStore(pool: pool, catalog: catalog)
        try await store.migrate()
        return store
    }
}
