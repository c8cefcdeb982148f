import Foundation
import TestSupport
import XCTest

/// `PaymentsService verify-jws` as support staff run it: a JWS on stdin,
/// decoded JSON or a typed failure out, the exit code saying which.
final class VerifyJWSCommandTests: XCTestCase {
    static let repositoryRoot = ServiceProcess.repositoryRoot
    static let fixtures = repositoryRoot.appendingPathComponent("Tests/AppStoreVerificationTests/Fixtures")

    func testRealAppleTransactionDecodesWithTheBundledRoot() throws {
        let result = try run(
            ["--bundle-id", "com.goodheartapp", "--environment", "Sandbox"], stdinFile: "tx_sandbox_consumable.jws")
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["transactionId"] as? String, "2000000847061981")
        XCTAssertEqual(object["productId"] as? String, "gh_super_good_ticket_1")
    }

    func testWrongBundleIsATypedFailureWithExitOne() throws {
        let result = try run(
            ["--bundle-id", "com.example.other", "--environment", "Sandbox"], stdinFile: "tx_sandbox_consumable.jws")
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stdout.contains("\"failure\":\"wrong_bundle\""), result.stdout)
    }

    func testMockNotificationWithTheTestRootAndAppId() throws {
        let root = Self.fixtures.appendingPathComponent("testCA.der").path
        let ok = try run(
            [
                "--root", root, "--bundle-id", "com.example", "--environment", "Sandbox", "--app-apple-id", "1234",
                "--kind", "notification",
            ], stdinFile: "testNotification")
        XCTAssertEqual(ok.status, 0, ok.stdout + ok.stderr)
        XCTAssertTrue(ok.stdout.contains("9ad56bd2-0bc6-42e0-af24-fd996d87a1e6"))
        let production = try run(
            [
                "--root", root, "--bundle-id", "com.example", "--environment", "Production", "--app-apple-id", "1234",
                "--kind", "notification",
            ], stdinFile: "testNotification")
        XCTAssertEqual(production.status, 1)
        XCTAssertTrue(production.stdout.contains("wrong_environment"), production.stdout)
    }

    func testUsageErrorsExitTwo() throws {
        XCTAssertEqual(try run(["--kind", "receipt", "--bundle-id", "x"], stdinFile: "testNotification").status, 2)
        XCTAssertEqual(try run([], stdinFile: "testNotification").status, 2)
    }

    func testEveryBadFlagIsOneSentenceAndNothingIsReadBeforeThey() throws {
        let result = try run(
            ["--kind", "receipt", "--environment", "Moon", "--app-apple-id", "x", "--root", "/nonexistent/root.der"],
            stdinFile: "testNotification")
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stdout, "", "nothing verified")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(
            lines.map { $0.split(separator: " ").dropFirst().first.map(String.init) ?? "" },
            ["--root", "--bundle-id", "--environment", "--app-apple-id", "--kind"], result.stderr)
        XCTAssertTrue(
            lines.allSatisfy { $0.hasPrefix("verify-jws: ") && $0.contains(" must ") && $0.contains(": ") },
            result.stderr)
        XCTAssertTrue(
            lines.contains(
                "verify-jws: --kind must be one of transaction, notification, renewal, app-transaction: "
                    + "each kind of signed data has its own payload and checks"), result.stderr)
        let production = try run(
            ["--bundle-id", "com.example", "--environment", "Production"], stdinFile: "testNotification")
        XCTAssertEqual(production.status, 2)
        XCTAssertTrue(
            production.stderr.contains("--app-apple-id must be set when --environment is Production"), production.stderr
        )
    }

    private func run(_ arguments: [String], stdinFile: String) throws -> (status: Int32, stdout: String, stderr: String)
    {
        let process = Process()
        process.executableURL = ServiceProcess.productsDirectory.appendingPathComponent("PaymentsService")
        process.arguments = ["verify-jws"] + arguments
        process.currentDirectoryURL = Self.repositoryRoot
        process.standardInput = try FileHandle(forReadingFrom: Self.fixtures.appendingPathComponent(stdinFile))
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)
        )
    }
}
