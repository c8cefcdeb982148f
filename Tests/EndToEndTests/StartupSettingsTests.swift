import Foundation
import TestSupport
import XCTest

/// A wrong setting stops a service with a sentence naming the variable (an
/// operator reads it), never an enum case name, and never the value of a secret.
final class StartupSettingsTests: XCTestCase {
    /// Runs `executable` with `environment` (nothing else of ours), expecting it to refuse to start.
    private func refusal(
        _ executable: String, _ environment: [String: String], file: StaticString = #filePath, line: UInt = #line
    ) async throws -> String {
        let output = NSTemporaryDirectory() + "startup-\(UUID().uuidString).err"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let path = ServiceProcess.productsDirectory.appendingPathComponent(executable).path
        var settings = ["PATH": "/usr/bin:/bin", "LISTEN_ADDR": "127.0.0.1:0"]
        settings.merge(environment) { _, new in new }
        let frozen = settings
        let status = try await offPool { try Command.run([path], outputPath: output, environment: frozen) }
        XCTAssertNotEqual(status, 0, "\(executable) must refuse to start", file: file, line: line)
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }

    func testPaymentsServiceNamesTheMissingAppAppleId() async throws {
        let url = try TestDatabases.url("PAYMENTS_DATABASE_URL")
        let text = try await refusal(
            "PaymentsService",
            [
                "DATABASE_URL": url, "APPLE_BUNDLE_ID": "com.meeyao.qianwen", "APPLE_ENVIRONMENTS": "Production",
                "INTERNAL_AUTH": "off",
                "APPLE_ROOT_CERTS": ServiceProcess.repositoryRoot.appendingPathComponent("config/AppleRootCA-G3.cer")
                    .path,
            ])
        XCTAssertTrue(text.contains("APPLE_APP_APPLE_ID must be set when APPLE_ENVIRONMENTS includes Production"), text)
        XCTAssertFalse(text.contains("missingAppAppleId"), text)
    }

    func testTheGatewayNamesAShortSecretWithoutPrintingIt() async throws {
        let secret = "short-secret-\(UUID().uuidString.prefix(4))"
        let text = try await refusal(
            "Gateway",
            [
                "JWT_HS256_SECRET": String(repeating: "k", count: 40), "JWT_ISSUER": "https://issuer.test",
                "JWT_AUDIENCE": "app",
                "EMAIL_HASH_SECRET": secret, "POINTS_ADDR": "127.0.0.1:1", "PAYMENTS_ADDR": "127.0.0.1:1",
                "INTERNAL_AUTH": "off",
            ])
        XCTAssertTrue(text.contains("EMAIL_HASH_SECRET must be at least 32 bytes"), text)
        XCTAssertFalse(text.contains(secret), "the secret's value never reaches the output")
        XCTAssertFalse(text.contains("secretTooShort"), text)
    }

    /// Runs `executable` and returns its exit status and stderr.
    private func run(_ executable: String, _ environment: [String: String]) async throws -> (
        status: Int32, standardError: String
    ) {
        let output = NSTemporaryDirectory() + "startup-\(UUID().uuidString).err"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let path = ServiceProcess.productsDirectory.appendingPathComponent(executable).path
        let frozen = environment.merging(["PATH": "/usr/bin:/bin"]) { $1 }
        let status = try await offPool { try Command.run([path], outputPath: output, environment: frozen) }
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    func testPointsServiceReportsBothBadSettingsAndExitsWithStatus2() async throws {
        let (status, text) = try await run(
            "PointsService",
            [
                "LISTEN_ADDR": "nowhere", "DATABASE_URL": "postgresql:///points", "DATABASE_MAX_CONNECTIONS": "0",
                "INTERNAL_AUTH": "off",
            ])
        XCTAssertEqual(status, 2, text)
        XCTAssertEqual(
            text.split(separator: "\n").map(String.init),
            [
                "PointsService: LISTEN_ADDR (--listen) must be HOST:PORT (or [IPv6]:PORT) with a port in 0...65535: "
                    + "it is the address PointsService accepts gRPC calls on",
                "PointsService: DATABASE_MAX_CONNECTIONS must be a whole number in 1...200: "
                    + "it bounds this process's connections, which PostgreSQL's max_connections caps for all instances",
            ])
    }

    func testTheGatewayReportsBothBadSettingsAndExitsWithStatus2() async throws {
        let secret = "short-\(UUID().uuidString.prefix(6))"
        let (status, text) = try await run(
            "Gateway",
            [
                "JWT_HS256_SECRET": secret, "JWT_ISSUER": "https://issuer.test", "JWT_AUDIENCE": "app",
                "EMAIL_HASH_SECRET": String(repeating: "e", count: 32), "MAX_CONNECTIONS": "0", "INTERNAL_AUTH": "off",
            ])
        XCTAssertEqual(status, 2, text)
        XCTAssertTrue(text.contains("Gateway: JWT_HS256_SECRET must be at least 32 bytes: "), text)
        XCTAssertTrue(
            text.contains("Gateway: MAX_CONNECTIONS (--max-connections) must be a whole number in 1...1000000: "), text)
        XCTAssertEqual(text.split(separator: "\n").count, 2, text)
        XCTAssertFalse(text.contains(secret), "the secret's value never reaches the output")
    }
}
