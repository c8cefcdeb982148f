@testable import PointsService
import ServiceKit
import TestSupport
import XCTest

/// PointsService reads every setting before it connects to anything and
/// reports all problems at once, in `--help` order.
final class PointsSettingsTests: XCTestCase {
    private func read(_ environment: [String: String]) throws -> (PointsSettings?, [SettingProblem]) {
        var settings = SettingsCollector(
            try CommandLineOptions(specs: PointsSettings.specs, arguments: [], environment: environment))
        let read = PointsSettings.read(&settings)
        return (read, settings.ordered)
    }

    private let catalog = ServiceProcess.repositoryRoot.appendingPathComponent("config/packages.json").path

    func testEveryProblemIsReported() throws {
        let (settings, problems) = try read([
            "LISTEN_ADDR": "0.0.0.0:50052", "PACKAGES_FILE": "/nonexistent/packages.json",
            "DATABASE_MAX_CONNECTIONS": "500",
            "INTERNAL_AUTH": "off", "TLS_CLIENT_CA": "/c/ca.pem", "GATEWAY_IDENTITY": "gate way",
            "POINTS_SPEND_CALLERS": "chat,,ads",
        ])
        XCTAssertNil(settings)
        XCTAssertEqual(
            problems.map(\.setting),
            [
                "DATABASE_URL", "DATABASE_MAX_CONNECTIONS", "PACKAGES_FILE", "INTERNAL_AUTH", "TLS_CLIENT_CA",
                "GATEWAY_IDENTITY", "POINTS_SPEND_CALLERS",
            ])
        XCTAssertTrue(
            problems[2].description.hasPrefix(
                "PACKAGES_FILE must name a readable, valid package catalog (cannot read /nonexistent/packages.json"),
            problems[2].description)
        XCTAssertTrue(
            problems[3].description.hasSuffix(
                "must be mtls to listen on 0.0.0.0:50052: INTERNAL_AUTH=off serves without caller authentication and is allowed on a loopback address (127.0.0.1, ::1) only"
            ))
    }

    func testMigrateNeedsOnlyTheDatabaseAndTheCatalog() throws {
        var settings = SettingsCollector(
            try CommandLineOptions(
                specs: PointsSettings.specs, arguments: [],
                environment: [
                    "DATABASE_URL": "postgresql:///points", "PACKAGES_FILE": catalog, "LISTEN_ADDR": "nowhere",
                ]))
        let read = PointsSettings.read(&settings, serving: false)
        XCTAssertEqual(settings.problems, [], "no certificate or address is needed to migrate")
        XCTAssertNotNil(read)
        XCTAssertNil(read?.serving)
    }

    func testGoodSettingsAreRead() throws {
        let (settings, problems) = try read([
            "DATABASE_URL": "postgresql:///points", "PACKAGES_FILE": catalog, "INTERNAL_AUTH": "off",
        ])
        XCTAssertEqual(problems, [])
        XCTAssertEqual(settings?.serving?.listen.description, "127.0.0.1:50052")
        XCTAssertEqual(settings?.database.connectionsMax, 16)
        XCTAssertNotNil(settings?.serving)
        XCTAssertNil(settings?.serving?.tls)
        XCTAssertFalse(settings?.catalog.packages.isEmpty ?? true)
    }
}
