import Foundation
@testable import PaymentsService
import PostgresClient
import TestSupport
import XCTest

/// A store on a schema of its own in PAYMENTS_DATABASE_URL, migrated only up
/// to a given version, for the tests of a later migration over rows written
/// under the earlier schema. Its pool holds one connection, so every
/// statement the test runs is prepared on the connection the migration
/// later runs on. The schema is dropped when the test ends.
enum PaymentsSchemaAtVersion {
    static func store(version: Int, for test: XCTestCase) async throws -> PaymentsStore {
        let url = try PaymentsTestDatabase.url
        let (schema, dropSchema) = try await TestSchema.create(url, prefix: "payments_v\(version)")
        test.addTeardownBlock { try await dropSchema() }
        let pool = PostgresPool(
            configuration: .init(
                connectionString: url, connectionsMax: 1, acquireTimeout: .seconds(30), searchPath: schema))
        test.addTeardownBlock { await pool.close() }
        try await migrate(pool, upTo: version)
        return PaymentsStore(
            pool: pool,
            backoff: RetryBackoff(
                initialDelayMilliseconds: 50, maximumDelayMilliseconds: 1_000,
                leaseMilliseconds: 2_000))
    }

    /// Applies the migrations up to `version`, as `PaymentsStore.migrate` applies them all.
    static func migrate(_ pool: PostgresPool, upTo version: Int) async throws {
        let migrations = PaymentsStore.migrations.filter { $0.version <= version }
        try await PostgresMigrator(migrations: migrations, advisoryLockKey: PaymentsStore.migrationLockKey).migrate(
            on: pool)
    }
}
