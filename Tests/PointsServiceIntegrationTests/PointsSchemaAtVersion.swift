import Foundation
@testable import PointsService
import PostgresClient
import TestSupport
import XCTest

/// A store on a schema of its own in POINTS_DATABASE_URL, migrated only up to
/// a given version, for the tests of a later migration over rows written
/// under the earlier schema. Its pool holds one connection, so every
/// statement the test runs is prepared on the connection the migration
/// later runs on. The schema is dropped when the test ends.
enum PointsSchemaAtVersion {
    static func store(version: Int, for test: XCTestCase) async throws -> PointsStore {
        guard let url = ProcessInfo.processInfo.environment["POINTS_DATABASE_URL"], !url.isEmpty else {
            XCTFail("POINTS_DATABASE_URL is not set: run scripts/test.sh")
            throw PointsError.databaseUnavailable(detail: "POINTS_DATABASE_URL is not set")
        }
        let (schema, dropSchema) = try await TestSchema.create(url, prefix: "points_v\(version)")
        test.addTeardownBlock { try await dropSchema() }
        let pool = PostgresPool(
            configuration: .init(
                connectionString: url, connectionsMax: 1, acquireTimeout: .seconds(30), searchPath: schema))
        test.addTeardownBlock { await pool.close() }
        try await migrate(pool, upTo: version)
        return PointsStore(pool: pool, catalog: try PackageCatalog.load(path: ShippedConfiguration.packagesFile))
    }

    /// Applies the migrations up to `version`, as `PointsStore.migrate` applies them all.
    static func migrate(_ pool: PostgresPool, upTo version: Int) async throws {
        let migrations = PointsSchema.migrations.filter { $0.version <= version }
        try await PostgresMigrator(migrations: migrations, advisoryLockKey: PointsSchema.migrationLockKey).migrate(
            on: pool)
    }
}
