import Foundation
import TestSupport
import XCTest

/// PaymentsService's admin subcommands as an operator runs them: every bad
/// flag and setting is one sentence on stderr, all at once, exit 2, before
/// anything connects (the database and PointsService named here do not
/// exist); an unknown subcommand is refused the same way.
final class AdminCommandSettingsTests: XCTestCase {
    /// Settings no subcommand can use: nothing may be reached with them.
    private static let broken = [
        "APPLE_BUNDLE_ID": "", "APPLE_ENVIRONMENTS": "Moon", "APPLE_API_KEY_PATH": "", "APPLE_API_KEY_ID": "",
        "APPLE_API_ISSUER_ID": "",
        "DATABASE_URL": "", "POINTS_ADDR": "nowhere", "INTERNAL_AUTH": "off", "LOG_LEVEL": "loud",
    ]

    private struct Run {
        let status: Int32
        let output: String
        let errors: String
        var lines: [String] { errors.split(separator: "\n").map(String.init) }
    }

    private func run(_ executable: String, _ arguments: [String], environment: [String: String] = broken) throws -> Run
    {
        let outputPath = NSTemporaryDirectory() + "/admin-settings-\(UUID().uuidString).out"
        let errorPath = outputPath + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        let path = ServiceProcess.productsDirectory.appendingPathComponent(executable).path
        let started = ContinuousClock.now
        let status = try Command.run(
            [path] + arguments, outputPath: outputPath, errorPath: errorPath, environment: environment)
        XCTAssertLessThan(
            ContinuousClock.now - started, .seconds(10), "refused before connecting: no connect timeout was waited for")
        return Run(
            status: status, output: try String(contentsOfFile: outputPath, encoding: .utf8),
            errors: try String(contentsOfFile: errorPath, encoding: .utf8))
    }

    /// The settings the sentences name, in order.
    private func named(_ run: Run, prefix: String, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        XCTAssertEqual(run.status, 2, run.errors, file: file, line: line)
        XCTAssertEqual(run.output, "", "nothing done", file: file, line: line)
        for sentence in run.lines {
            XCTAssertTrue(sentence.hasPrefix(prefix + ": "), sentence, file: file, line: line)
            XCTAssertTrue(
                sentence.contains(": ") && sentence.dropFirst(prefix.count + 2).contains(": "), "a reason: \(sentence)",
                file: file, line: line)
        }
        return run.lines.map { String($0.dropFirst(prefix.count + 2).split(separator: " ").first ?? "") }
    }

    func testReconcileReportsEveryBadFlagAndSettingAtOnce() throws {
        let run = try run("PaymentsService", ["reconcile", "--transaction-id", "abc", "--user-id", "nope"])
        let settings = named(run, prefix: "PaymentsService reconcile")
        for expected in [
            "--transaction-id", "--user-id", "LOG_LEVEL", "APPLE_BUNDLE_ID", "APPLE_ENVIRONMENTS", "APPLE_API_KEY_PATH",
            "APPLE_API_KEY_ID", "APPLE_API_ISSUER_ID", "DATABASE_URL", "POINTS_ADDR",
        ] {
            XCTAssertTrue(settings.contains(expected), "\(expected) not named:\n\(run.errors)")
        }
        XCTAssertTrue(
            run.lines.contains(
                "PaymentsService reconcile: --transaction-id or --user-id must be given, not both: "
                    + "reconcile records Apple's view of one transaction or of one user's"), run.errors)
    }

    func testRedriveReportsTheTransactionAndTheDatabaseTogether() throws {
        let run = try run("PaymentsService", ["redrive"])
        let settings = named(run, prefix: "PaymentsService redrive")
        XCTAssertEqual(Set(settings), ["--transaction-id", "LOG_LEVEL", "DATABASE_URL", "POINTS_ADDR"], run.errors)
    }

    func testTheAppleCommandsReportTheirFlagsWithTheMissingAPIKey() throws {
        let cases: [(arguments: [String], flags: [String])] = [
            (
                ["recover-notifications", "--since", "yesterday", "--environment", "Moon", "--only-failures", "2"],
                ["--since", "--environment", "--only-failures"]
            ),
            (
                ["request-test-notification", "--environment", "Moon", "--wait-seconds", "0"],
                ["--environment", "--wait-seconds"]
            ),
            (["lookup-order", "--order-id", "not an order"], ["--order-id"]),
        ]
        for (arguments, flags) in cases {
            let run = try run("PaymentsService", arguments)
            let settings = named(run, prefix: "PaymentsService \(arguments[0])")
            for expected in flags + ["APPLE_API_KEY_PATH", "APPLE_BUNDLE_ID"] {
                XCTAssertTrue(settings.contains(expected), "\(arguments[0]): \(expected) not named:\n\(run.errors)")
            }
        }
    }

    func testGoodFlagsAloneAreNotRefused() throws {
        // Only the settings are wrong: no flag (an absent --environment included) is named.
        for arguments in [
            ["recover-notifications", "--since", "24"], ["request-test-notification"],
            ["lookup-order", "--order-id", "MQ2B3C4D5E"],
        ] {
            let run = try run("PaymentsService", arguments)
            let settings = named(run, prefix: "PaymentsService \(arguments[0])")
            XCTAssertFalse(
                settings.contains { $0.hasPrefix("--") }, "\(arguments[0]) refused a good flag:\n\(run.errors)")
            XCTAssertTrue(settings.contains("APPLE_API_KEY_PATH"), run.errors)
        }
    }

    func testAnUnknownSubcommandIsRefusedBeforeConnecting() throws {
        // A database that would answer nothing: the refusal must come first.
        let environment = ["DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none?connect_timeout=30"]
        for executable in ["PaymentsService", "PointsService"] {
            let run = try run(executable, ["frobnicate"], environment: environment)
            XCTAssertEqual(run.status, 2, run.errors)
            XCTAssertTrue(run.errors.hasPrefix("\(executable): unknown subcommand \"frobnicate\""), run.errors)
            let extra = try self.run(executable, ["migrate", "twice"], environment: environment)
            XCTAssertEqual(extra.status, 2, extra.errors)
            XCTAssertTrue(extra.errors.contains("unexpected argument \"twice\""), extra.errors)
        }
    }
}
