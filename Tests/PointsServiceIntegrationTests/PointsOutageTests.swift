import Contracts
import Foundation
@testable import PointsService
import PostgresClient
import TestSupport
import XCTest

/// The store across database outages: unreachable means DATABASE_UNAVAILABLE
/// (transient), and lost connections heal without restarting the service.
final class PointsOutageTests: XCTestCase {
    func testUnreachableDatabaseIsDatabaseUnavailable() async throws {
        let pool = PostgresPool(
            configuration: .init(connectionString: "postgresql://iap@127.0.0.1:1/points", connectionsMax: 1))
        let store = PointsStore(pool: pool, catalog: try PackageCatalog.load(path: ShippedConfiguration.packagesFile))
        let user = UUID().uuidString
        let calls: [() async throws -> Void] = [
            { _ = try await store.getBalance(userId: user) },
            {
                _ = try await store.grant(
                    GrantRequest(
                        eventId: "payment.x:1", userId: user, emailHash: "", productCode: "starter_pack", bizId: "b"))
            },
            {
                _ = try await store.clawback(
                    ClawbackCommand(eventId: "refund.x:1", userId: user, originalEventId: "payment.x:1", bizId: "b"))
            },
        ]
        for call in calls {
            do {
                try await call()
                XCTFail("expected DATABASE_UNAVAILABLE")
            } catch let error as PointsError {
                XCTAssertEqual(error.reason, "DATABASE_UNAVAILABLE")
                XCTAssertTrue(error.isTransient)
                XCTAssertEqual(error.grpcStatusCode, 14)
            }
        }
        XCTAssertFalse(pool.isHealthy)
    }

    func testPostgresErrorsMapToTransientOrInternal() {
        let transient: [PostgresError] = [
            PostgresError(code: .connectionFailed, message: "m", isConnectionLoss: true),
            PostgresError(code: .timeout, message: "m"),
            PostgresError(code: .poolExhausted, message: "m"),
            PostgresError(code: .queryFailed, sqlState: "57014", message: "statement timeout"),
            PostgresError(code: .queryFailed, sqlState: "40P01", message: "deadlock"),
            PostgresError(code: .queryFailed, sqlState: "53300", message: "too many connections"),
            PostgresError(code: .queryFailed, sqlState: "57P01", message: "terminated", isConnectionLoss: true),
            PostgresError(code: .staleStatement, sqlState: "0A000", message: "cached plan must not change result type"),
        ]
        for error in transient {
            XCTAssertEqual(PointsStore.pointsError(from: error).reason, "DATABASE_UNAVAILABLE", "\(error)")
        }
        for error in [
            PostgresError(code: .queryFailed, sqlState: "23514", message: "check violation"),
            PostgresError(code: .queryFailed, sqlState: "42601", message: "syntax"),
            PostgresError(code: .decodingFailed, message: "m"),
        ] {
            XCTAssertEqual(PointsStore.pointsError(from: error).reason, "INTERNAL", "\(error)")
        }
        XCTAssertEqual(PointsStore.pointsError(from: PointsError.starterPackIneligible), .starterPackIneligible)
    }

    func testTerminatedConnectionsHealWithoutARestart() async throws {
        guard let url = ProcessInfo.processInfo.environment["POINTS_DATABASE_URL"], !url.isEmpty else {
            return XCTFail("POINTS_DATABASE_URL is not set: run scripts/test.sh")
        }
        let applicationName = "points-outage-\(UInt32.random(in: 0...UInt32.max))"
        let pool = PostgresPool(
            configuration: .init(connectionString: url, connectionsMax: 3, applicationName: applicationName))
        let store = PointsStore(pool: pool, catalog: try PackageCatalog.load(path: ShippedConfiguration.packagesFile))
        try await store.migrate()
        let user = UUID()
        let first = try await store.grant(
            GrantRequest(
                eventId: "payment.outage:\(UUID().uuidString)", userId: user.uuidString,
                emailHash: "", productCode: "starter_pack", bizId: "b"))
        XCTAssertEqual(first.balance, 100)

        // Kill every backend of this pool, as a server restart would.
        let admin = PostgresPool(configuration: .init(connectionString: url, connectionsMax: 1))
        let killed = try await admin.withConnection { connection in
            try await connection.query(
                """
                select count(*) filter (where pg_terminate_backend(pid, 5000)) as killed
                from pg_stat_activity where application_name = $1
                """, [.text(applicationName)]
            ).first!.int64("killed")
        }
        XCTAssertGreaterThan(killed, 0)

        let second = try await store.grant(
            GrantRequest(
                eventId: "payment.outage:\(UUID().uuidString)", userId: user.uuidString,
                emailHash: "", productCode: "starter_pack", bizId: "b"))
        XCTAssertEqual(second.balance, 200)
        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 200)
        XCTAssertTrue(pool.isHealthy)
        try await PointsTestDatabase.assertInvariants(store, users: [user])
    }
}

/// The real entry point: `PointsService migrate`, and start-up errors that
/// name the setting to fix.
final class PointsStartupTests: XCTestCase {
    private func run(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        let output = NSTemporaryDirectory() + "/points-startup-\(UUID().uuidString).log"
        let binary = ServiceProcess.productsDirectory.appendingPathComponent("PointsService").path
        // Only these variables, passed in the environment (a database URL holds the cluster's password).
        let status = try Command.run(
            [binary] + arguments, outputPath: output,
            environment: environment.merging(["PATH": "/usr/bin:/bin"]) { given, _ in given },
            inheritsEnvironment: false)
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    func testMigrateAppliesTheSchemaAndExits() throws {
        let url = try TestDatabases.url("POINTS_DATABASE_URL")
        let result = try run(
            ["migrate"], environment: ["DATABASE_URL": url, "PACKAGES_FILE": ShippedConfiguration.packagesFile])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("migrations applied"), result.output)
    }

    func testMissingDatabaseURLOrCatalogIsAClearStartupError() throws {
        let missing = try run(["migrate"], environment: ["PACKAGES_FILE": ShippedConfiguration.packagesFile])
        XCTAssertEqual(missing.status, 2, "a setting problem")
        XCTAssertTrue(missing.output.contains("DATABASE_URL must be set"), missing.output)
        let badCatalog = try run(
            ["migrate"],
            environment: ["DATABASE_URL": "postgresql://iap@127.0.0.1:1/points", "PACKAGES_FILE": "/nonexistent.json"])
        XCTAssertEqual(badCatalog.status, 2, "a setting problem")
        XCTAssertTrue(
            badCatalog.output.contains("PACKAGES_FILE must name a readable, valid package catalog"), badCatalog.output)
    }
}
