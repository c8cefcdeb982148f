import Contracts
import Foundation
@testable import PointsService
import PostgresClient
import ServiceKit
import TestSupport
import XCTest

/// `PointsService adjust`: its flags (no I/O), then the built binary as an
/// operator would run it, against the real database.
final class AdjustCommandLineTests: XCTestCase {
    private let user = UUID()
    private var baseArguments: [String] {
        ["--user-id", user.uuidString, "--amount", "25", "--reason", "goodwill, ticket 4711", "--operator", "alice"]
    }
    private let environment = ["DATABASE_URL": "postgresql://unused@127.0.0.1:1/points"]

    private func assertUsageError(
        _ arguments: [String], environment: [String: String]? = nil, mentions flag: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            _ = try AdjustCommandLine.parse(arguments: arguments, environment: environment ?? self.environment)
            XCTFail("expected a usage error naming \(flag)", file: file, line: line)
        } catch {
            XCTAssertTrue(
                error.description.contains(flag), "\(error.description) should name \(flag)", file: file, line: line)
        }
    }

    private func replacing(_ flag: String, with value: String) -> [String] {
        var arguments = baseArguments
        arguments[arguments.firstIndex(of: flag)! + 1] = value
        return arguments
    }

    private func removing(_ flag: String) -> [String] {
        var arguments = baseArguments
        let index = arguments.firstIndex(of: flag)!
        arguments.removeSubrange(index...(index + 1))
        return arguments
    }

    func testParsesTheFlagsIntoOneValidatedAdjustment() throws {
        let parsed = try XCTUnwrap(try AdjustCommandLine.parse(arguments: baseArguments, environment: environment))
        XCTAssertEqual(parsed.databaseURL, environment["DATABASE_URL"])
        XCTAssertEqual(
            parsed.adjustment,
            try AdjustCommand(
                userId: user.uuidString, amount: 25, reason: "goodwill, ticket 4711",
                operatorName: "alice"
            ).validated())
        let negative = try XCTUnwrap(
            try AdjustCommandLine.parse(arguments: replacing("--amount", with: "-40"), environment: environment))
        XCTAssertEqual(negative.adjustment.amount, -40)
        let inline = try XCTUnwrap(
            try AdjustCommandLine.parse(
                arguments: removing("--amount") + ["--amount=-7", "--event-id", "support:1"],
                environment: environment))
        XCTAssertEqual(inline.adjustment.amount, -7)
        XCTAssertEqual(inline.adjustment.eventId, "support:1")
        XCTAssertNil(try AdjustCommandLine.parse(arguments: ["--help"], environment: [:]), "--help")
    }

    func testUsageErrorsNameTheFlag() {
        for flag in ["--user-id", "--amount", "--reason", "--operator"] {
            assertUsageError(removing(flag), mentions: flag)
        }
        assertUsageError(replacing("--user-id", with: "42"), mentions: "--user-id")
        for amount in ["0", "-0", "ten", "1.5", "", " 5", "99999999999999999999", "1000000000001", "-1000000000001"] {
            assertUsageError(replacing("--amount", with: amount), mentions: "--amount")
        }
        assertUsageError(replacing("--reason", with: "line\nbreak"), mentions: "--reason")
        assertUsageError(
            replacing("--reason", with: String(repeating: "r", count: PointsLimits.adjustReasonBytesMax + 1)),
            mentions: "--reason")
        assertUsageError(replacing("--operator", with: "\u{7}bell"), mentions: "--operator")
        assertUsageError(baseArguments + ["--event-id", "not ok"], mentions: "--event-id")
        assertUsageError(baseArguments + ["--bogus", "1"], mentions: "--bogus")
        assertUsageError(baseArguments + ["--event-id"], mentions: "--event-id")
        assertUsageError(baseArguments, environment: [:], mentions: "DATABASE_URL")
        assertUsageError(baseArguments + ["extra"], mentions: "extra")
    }

    /// An explicit event id may not take a purchase's, a refund's, a
    /// refund reversal's or a settlement's: the purchase's grant would then
    /// be EVENT_CONFLICT forever and its refund would find no purchase.
    /// The adjustments' own namespace stays open, derived or explicit.
    func testAnExplicitEventIdInAPaymentMovementsNamespaceIsAUsageError() throws {
        for taken in [
            "payment.apple_iap:2000000847061981", "refund.apple_iap:2000000847061981",
            "refund.apple_iap:2000000847061981:2",
            "refund_reversed.apple_iap:2000000847061981", "refund.settlement:0a1b",
        ] {
            assertUsageError(baseArguments + ["--event-id", taken], mentions: "--event-id")
            XCTAssertThrowsError(
                try AdjustCommand(userId: user.uuidString, amount: 25, reason: "r", operatorName: "o", eventId: taken)
                    .validated()
            ) { error in
                XCTAssertEqual(
                    error as? PointsError,
                    .validationFailed(
                        field: "event_id",
                        problem: "may not start with one of the payment movements' "
                            + #""payment.", "refund.", "refund_reversed.""#), taken)
            }
        }
        for open in ["adjust:manual-4711", "support:1", "payments.note:1", "refunds:1"] {
            let parsed = try XCTUnwrap(
                try AdjustCommandLine.parse(arguments: baseArguments + ["--event-id", open], environment: environment))
            XCTAssertEqual(parsed.adjustment.eventId, open)
        }
        let derived = try XCTUnwrap(try AdjustCommandLine.parse(arguments: baseArguments, environment: environment))
        XCTAssertTrue(derived.adjustment.eventId.hasPrefix("adjust:"))
        let again = try XCTUnwrap(
            try AdjustCommandLine.parse(
                arguments: baseArguments + ["--event-id", derived.adjustment.eventId],
                environment: environment))
        XCTAssertEqual(again.adjustment, derived.adjustment, "the derived id given explicitly is the same adjustment")
    }

    func testEveryProblemIsReportedAtOnceOneSentencePerLine() async {
        let outcome = await AdjustCommandLine.run(
            arguments: [
                "--user-id", "42", "--amount", "0", "--operator", "\u{7}bell", "--event-id", "not ok", "extra",
            ], environment: [:])
        XCTAssertEqual(outcome.status, AdjustCommandLine.usageStatus)
        XCTAssertEqual(outcome.standardOutput, "")
        let lines = outcome.standardError.split(separator: "\n").map(String.init)
        let named = lines.map { String($0.dropFirst("PointsService adjust: ".count).split(separator: " ").first ?? "") }
        XCTAssertEqual(
            Set(named), ["--user-id", "--amount", "--reason", "--operator", "--event-id", "DATABASE_URL", "extra"],
            outcome.standardError)
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("PointsService adjust: ") }, outcome.standardError)
        XCTAssertFalse(outcome.standardError.contains("bell"), "no value is echoed")
    }

    func testTheResultLineIsOneJSONObject() throws {
        let id = UUID()
        let line = AdjustCommandLine.resultLine(
            AdjustResult(
                eventId: "adjust:ab", userId: user, amount: -5, balanceBefore: 10,
                balanceAfter: 5, replayed: false, ledgerEntryId: id))
        XCTAssertFalse(line.contains("\n"))
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual(object["event_id"] as? String, "adjust:ab")
        XCTAssertEqual(object["user_id"] as? String, user.uuidString.lowercased())
        XCTAssertEqual(object["amount"] as? Int, -5)
        XCTAssertEqual(object["balance_before"] as? Int, 10)
        XCTAssertEqual(object["balance_after"] as? Int, 5)
        XCTAssertTrue(line.contains("\"replayed\":false"), line)
        XCTAssertEqual(object["ledger_entry_id"] as? String, id.uuidString.lowercased())
    }

    // MARK: The binary

    private struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    private func runBinary(_ arguments: [String], databaseURL: String) async throws -> Run {
        let outputPath = NSTemporaryDirectory() + "/adjust-\(UUID().uuidString).out"
        let errorPath = outputPath + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        let executable = ServiceProcess.productsDirectory.appendingPathComponent("PointsService").path
        let status = try await offPool {
            try Command.run(
                [executable, "adjust"] + arguments, outputPath: outputPath, errorPath: errorPath,
                environment: ["DATABASE_URL": databaseURL])
        }
        return Run(
            status: status, output: try String(contentsOfFile: outputPath, encoding: .utf8),
            errors: try String(contentsOfFile: errorPath, encoding: .utf8))
    }

    private func json(_ run: Run, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let lines = run.output.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "one JSON line: \(run.output)", file: file, line: line)
        return try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any], file: file,
            line: line)
    }

    func testTheBinaryAdjustsOnceReplaysRefusesAndReportsUsage() async throws {
        let url = try TestDatabases.url("POINTS_DATABASE_URL")
        let store = try await PointsTestDatabase.store()
        _ = try await store.grant(
            GrantRequest(
                eventId: "payment.apple_iap:\(UInt64.random(in: 1...UInt64.max))", userId: user.uuidString,
                emailHash: "", productCode: "starter_pack", bizId: UUID().uuidString))

        let first = try await runBinary(baseArguments, databaseURL: url)
        XCTAssertEqual(first.status, 0, first.errors)
        let applied = try json(first)
        XCTAssertEqual(applied["replayed"] as? Bool, false)
        XCTAssertEqual(applied["amount"] as? Int, 25)
        XCTAssertEqual(applied["balance_before"] as? Int, 100)
        XCTAssertEqual(applied["balance_after"] as? Int, 125)
        XCTAssertEqual(applied["user_id"] as? String, user.uuidString.lowercased())
        let eventId = try XCTUnwrap(applied["event_id"] as? String)
        XCTAssertTrue(eventId.hasPrefix("adjust:"))

        let again = try await runBinary(baseArguments, databaseURL: url)
        XCTAssertEqual(again.status, 0, again.errors)
        let replayed = try json(again)
        XCTAssertEqual(replayed["replayed"] as? Bool, true)
        XCTAssertEqual(replayed["event_id"] as? String, eventId)
        XCTAssertEqual(replayed["balance_after"] as? Int, 125)

        let overdraw = try await runBinary(replacing("--amount", with: "-126"), databaseURL: url)
        XCTAssertEqual(overdraw.status, 1)
        XCTAssertEqual(overdraw.output, "")
        XCTAssertTrue(overdraw.errors.contains("nothing was written"), overdraw.errors)
        XCTAssertTrue(overdraw.errors.contains("balance holds only 125"), overdraw.errors)

        let conflict = try await runBinary(
            replacing("--amount", with: "26") + ["--event-id", eventId], databaseURL: url)
        XCTAssertEqual(conflict.status, 1)
        XCTAssertTrue(conflict.errors.contains("EVENT_CONFLICT"), conflict.errors)

        let usage = try await runBinary(removing("--operator"), databaseURL: url)
        XCTAssertEqual(usage.status, 2)
        XCTAssertTrue(usage.errors.contains("--operator"), usage.errors)
        XCTAssertEqual(usage.output, "")

        let taken = try await runBinary(replacing("--amount", with: "-125"), databaseURL: url)
        XCTAssertEqual(taken.status, 0, taken.errors)
        XCTAssertEqual(try json(taken)["balance_after"] as? Int, 0)

        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 0, lifetimeEarned: 0, lifetimeSpent: 0))
        let rows = try await store.pool.withConnection { connection in
            try await connection.query(
                "select change_type, biz_type from points_ledger where user_id = $1::uuid order by seq", [.uuid(user)]
            )
            .map { "\(try $0.string("change_type"))/\(try $0.string("biz_type"))" }
        }
        XCTAssertEqual(rows, ["purchase/payment", "adjust/support", "adjust/support"])
        try await PointsTestDatabase.assertInvariants(store, users: [user])
    }

    /// The defect this guards: `adjust --event-id payment.apple_iap:<id>`
    /// was applied, so that purchase's grant was EVENT_CONFLICT forever and
    /// its refund EVENT_NOT_FOUND. Now it is a usage error that writes
    /// nothing, and the purchase is credited and refunded as usual.
    func testTheBinaryRefusesAPurchasesEventIdAndThePurchaseIsStillCreditedAndRefunded() async throws {
        let url = try TestDatabases.url("POINTS_DATABASE_URL")
        let store = try await PointsTestDatabase.store()
        let transactionId = UInt64.random(in: 1...UInt64.max)
        let purchaseId = try await runBinary(
            baseArguments + ["--event-id", "payment.apple_iap:\(transactionId)"], databaseURL: url)
        XCTAssertEqual(purchaseId.status, AdjustCommandLine.usageStatus)
        XCTAssertTrue(purchaseId.errors.contains("--event-id"), purchaseId.errors)
        XCTAssertEqual(purchaseId.output, "")
        let purchased = try await store.grant(
            GrantRequest(
                eventId: "payment.apple_iap:\(transactionId)", userId: user.uuidString,
                emailHash: "", productCode: "starter_pack", bizId: UUID().uuidString))
        XCTAssertFalse(purchased.replayed)
        XCTAssertEqual(purchased.balance, 100, "the adjustment wrote nothing")
        let refunded = try await store.clawback(
            ClawbackCommand(
                eventId: "refund.apple_iap:\(transactionId)", userId: user.uuidString,
                originalEventId: "payment.apple_iap:\(transactionId)",
                bizId: UUID().uuidString, reason: "OTHER"))
        XCTAssertEqual([refunded.creditsDeducted, refunded.overdueAmount, refunded.balance], [100, 0, 0])
        try await PointsTestDatabase.assertInvariants(store, users: [user])
    }
}
