import Foundation
import TestSupport
import XCTest

/// `Demo run` (what scripts/run.sh shows) passes against the real services.
final class DemoTests: XCTestCase {
    func testDemoWalkthroughPasses() async throws {
        let system = try await EndToEndSystem.get()
        let output = NSTemporaryDirectory() + "demo-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let arguments = [
            ServiceProcess.productsDirectory.appendingPathComponent("Demo").path, "run",
            "--gateway", "127.0.0.1:\(system.gateway.port)", "--ca", system.caDirectory,
            "--jwt-secret", system.tokens.secret, "--issuer", system.tokens.issuer, "--audience",
            system.tokens.audience,
            "--bundle-id", EndToEndSystem.bundleId, "--app-apple-id", String(EndToEndSystem.appAppleId),
        ]
        // Command.run waits with waitpid: keep that off the cooperative pool.
        let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result { try Command.run(arguments, outputPath: output) })
            }
        }
        let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        XCTAssertEqual(status, 0, printed)
        XCTAssertTrue(printed.contains("Demo passed"), printed)
        XCTAssertTrue(printed.contains("\"status\":\"already_granted\""), printed)
        XCTAssertFalse(printed.contains(system.tokens.secret))
        XCTAssertNil(
            printed.range(of: "eyJ[A-Za-z0-9_-]{20,}", options: .regularExpression),
            "the demo printed a whole token or JWS")
    }
}
