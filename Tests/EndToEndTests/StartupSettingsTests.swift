import Foundation
import TestSupport
import XCTest

/// A wrong setting stops a service with a sentence naming the variable (an
/// operator reads it), never an enum case name, and never the value of a secret.
final class StartupSettingsTests: XCTestCase {
    /// Runs `executable` with `environment` (nothing else of ours), expecting it to refuse to start.
    private func refusal(_ executable: String, _ environment: [String: String], file: StaticString = #filePath, line: UInt = #line) async throws -> String {
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
        let text = try await refusal("PaymentsService", [
            "DATABASE_URL": url, "APPLE_BUNDLE_ID": "com.meeyao.qianwen", "APPLE_ENVIRONMENTS": "Production", "INTERNAL_AUTH": "off",
            "APPLE_ROOT_CERTS": ServiceProcess.repositoryRoot.appendingPathComponent("config/AppleRootCA-G3.cer").path,
        ])
        XCTAssertTrue(text.contains("APPLE_APP_APPLE_ID is required when APPLE_ENVIRONMENTS includes Production"), text)
        XCTAssertFalse(text.contains("missingAppAppleId"), text)
    }

    func testTheGatewayNamesAShortSecretWithoutPrintingIt() async throws {
        let secret = "short-secret-\(UUID().uuidString.prefix(4))"
        let text = try await refusal("Gateway", [
            "JWT_HS256_SECRET": String(repeating: "k", count: 40), "JWT_ISSUER": "https://issuer.test", "JWT_AUDIENCE": "app",
            "EMAIL_HASH_SECRET": secret, "POINTS_ADDR": "127.0.0.1:1", "PAYMENTS_ADDR": "127.0.0.1:1", "INTERNAL_AUTH": "off",
        ])
        XCTAssertTrue(text.contains("EMAIL_HASH_SECRET must be at least 32 bytes"), text)
        XCTAssertFalse(text.contains(secret), "the secret's value never reaches the output")
        XCTAssertFalse(text.contains("secretTooShort"), text)
    }
}
