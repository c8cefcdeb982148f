import ServiceKit
import XCTest
@testable import Gateway

/// The gateway reads its server and authentication settings in one pass and
/// reports every problem at once, in `--help` order, never a secret's value.
final class GatewaySettingsProblemsTests: XCTestCase {
    private func collector(_ environment: [String: String], _ arguments: [String] = []) throws -> SettingsCollector {
        SettingsCollector(
            try CommandLineOptions(specs: GatewaySettings.specs, arguments: arguments, environment: environment))
    }

    private func problems(
        _ environment: [String: String],
        readFile: (String) throws -> [UInt8] = { _ in throw CocoaError(.fileNoSuchFile) }
    )
        throws -> [SettingProblem]
    {
        var settings = try collector(environment)
        let server = GatewaySettings.read(&settings)
        let authentication = GatewaySettings.authentication(&settings, readFile: readFile)
        if settings.problems.isEmpty {
            XCTAssertNotNil(server)
            XCTAssertNotNil(authentication)
        }
        return settings.ordered
    }

    func testEveryWrongSettingIsReportedInHelpOrder() throws {
        let secret = "short-\(UUID().uuidString.prefix(6))"
        let found = try problems([
            "LISTEN_ADDR": "nowhere", "PAYMENTS_ADDR": "payments", "JWT_HS256_SECRET": secret, "JWT_AUDIENCE": "app",
            "EMAIL_HASH_SECRET": secret, "LOG_LEVEL": "loud", "SHUTDOWN_GRACE_MS": "-1", "INTERNAL_AUTH": "sometimes",
        ])
        XCTAssertEqual(
            found.map(\.setting),
            [
                "LISTEN_ADDR", "PAYMENTS_ADDR", "JWT_HS256_SECRET", "JWT_ISSUER", "EMAIL_HASH_SECRET", "LOG_LEVEL",
                "SHUTDOWN_GRACE_MS", "INTERNAL_AUTH",
            ])
        XCTAssertTrue(
            found.contains {
                $0.description
                    == "EMAIL_HASH_SECRET must be at least 32 bytes: it keys the email hash that links starter-pack claims"
            })
        for problem in found {
            XCTAssertFalse(problem.description.contains(secret), "no secret in \(problem)")
            XCTAssertFalse(problem.reason.isEmpty)
        }
    }

    func testTheAdmissionLimitsAreReadWithDefaultsAndRefusedAsSentences() throws {
        let key = String(repeating: "k", count: 32)
        let good = [
            "JWT_HS256_SECRET": key, "JWT_ISSUER": "https://issuer.test", "JWT_AUDIENCE": "app",
            "EMAIL_HASH_SECRET": key,
            "INTERNAL_AUTH": "off",
        ]
        var defaults = try collector(good)
        let read = try XCTUnwrap(GatewaySettings.read(&defaults))
        XCTAssertEqual(read.admission, AdmissionLimits())
        XCTAssertEqual(read.admission.concurrentRequestsMax, 1024)
        XCTAssertEqual(read.admission.notificationRule, TokenBucketTable.Rule(ratePerSecond: 50, burst: 100))
        var flags = try collector(
            good,
            [
                "--max-concurrent-requests", "8", "--notification-rate-limit-per-second", "3",
                "--notification-rate-limit-burst", "6",
            ])
        let chosen = try XCTUnwrap(GatewaySettings.read(&flags))
        XCTAssertEqual(chosen.admission.concurrentRequestsMax, 8)
        XCTAssertEqual(chosen.admission.notificationRule, TokenBucketTable.Rule(ratePerSecond: 3, burst: 6))

        let found = try problems(
            good.merging([
                "MAX_CONCURRENT_REQUESTS": "0", "NOTIFICATION_RATE_LIMIT_PER_SECOND": "fast",
                "NOTIFICATION_RATE_LIMIT_BURST": "-5",
            ]) { $1 })
        XCTAssertEqual(
            found.map(\.description),
            [
                "MAX_CONCURRENT_REQUESTS (--max-concurrent-requests) must be a whole number in 1...1000000: "
                    + "requests beyond it are refused with 503 rather than queued without bound",
                "NOTIFICATION_RATE_LIMIT_PER_SECOND (--notification-rate-limit-per-second) must be a whole number in 1...1000000: "
                    + "every notification costs a signature check, so each client address is limited to this rate",
                "NOTIFICATION_RATE_LIMIT_BURST (--notification-rate-limit-burst) must be a whole number in 1...1000000: "
                    + "it is how many notifications one client address may send at once",
            ])
    }

    func testMutualTLSNamesEachMissingFileAndOffNamesEachRemoteAddress() throws {
        let key = String(repeating: "k", count: 32)
        let good = [
            "JWT_HS256_SECRET": key, "JWT_ISSUER": "https://issuer.test", "JWT_AUDIENCE": "app",
            "EMAIL_HASH_SECRET": key,
        ]
        XCTAssertEqual(
            try problems(good).map(\.setting), ["BACKEND_TLS_CA_FILE", "BACKEND_TLS_CERT", "BACKEND_TLS_KEY"])
        let off = try problems(
            good.merging([
                "INTERNAL_AUTH": "off", "POINTS_ADDR": "127.0.0.1:1,points:50052", "PAYMENTS_ADDR": "payments:50051",
            ]) { $1 })
        XCTAssertEqual(
            off.map(\.description),
            [
                "INTERNAL_AUTH (--internal-auth) must be mtls to call points:50052: "
                    + "INTERNAL_AUTH=off calls without authentication and is allowed towards loopback addresses only",
                "INTERNAL_AUTH (--internal-auth) must be mtls to call payments:50051: "
                    + "INTERNAL_AUTH=off calls without authentication and is allowed towards loopback addresses only",
            ])
        XCTAssertEqual(try problems(good.merging(["INTERNAL_AUTH": "off"]) { $1 }), [])
    }

    func testAKeyIsNeededAndAnES256KeyMustBeReadable() throws {
        let key = String(repeating: "k", count: 32)
        let noKey = ["JWT_ISSUER": "i", "JWT_AUDIENCE": "a", "EMAIL_HASH_SECRET": key, "INTERNAL_AUTH": "off"]
        XCTAssertEqual(
            try problems(noKey).map(\.description),
            [
                "JWT_HS256_SECRET must be set, or JWT_ES256_PUBLIC_KEY: the gateway cannot verify bearer tokens without a key"
            ])
        let unreadable = try problems(noKey.merging(["JWT_ES256_PUBLIC_KEY": "/nonexistent/jwt.pem"]) { $1 })
        XCTAssertEqual(unreadable.map(\.setting), ["JWT_ES256_PUBLIC_KEY"])
        let notAKey = try problems(
            noKey.merging(["JWT_ES256_PUBLIC_KEY": "/k.pem"]) { $1 }, readFile: { _ in Array("not a pem".utf8) })
        XCTAssertEqual(notAKey.map(\.requirement), ["must name a PEM EC P-256 public key (/k.pem is not one)"])
    }
}
