import Logging
import Contracts
import Foundation
@testable import PointsService
import RPCCore
import RPCRuntime
import ServiceKit
import TestSupport
import XCTest

/// Every money movement PointsService decides writes exactly one audit line
/// (`LedgerAudit`) with its event id, user id, credits, balance after and
/// result, even when the log level would hide notices; nothing else does,
/// and no line carries an email.
final class LedgerAuditTests: XCTestCase {
    private var store: PointsStore!
    private var server: RPCServer!
    private var client: RPCClient!
    private let sink = MemorySink()
    private var users: [UUID] = []

    override func setUp() async throws {
        store = try await PointsTestDatabase.store()
        var router = Router()
        // LOG_LEVEL=error: the audit is written anyway.
        PointsRPCService(store: store, logger: Logger(service: "points", minimumLevel: .error, sink: sink)).register(
            on: &router)
        server = RPCServer(configuration: .init(listen: .init(host: "127.0.0.1", port: 0)), router: router)
        let port = try server.start()
        client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: port)])
    }

    override func tearDown() async throws {
        await client?.close()
        await server?.shutdown(gracePeriod: .seconds(1))
        if let store { try await PointsTestDatabase.assertInvariants(store, users: users) }
    }

    /// The audit lines written so far, decoded.
    private func auditLines() throws -> [[String: String]] {
        try sink.allLines.compactMap { line in
            let object = try XCTUnwrap(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], line)
            return object["audit"] == "true" ? object : nil
        }
    }

    private func expectLine(
        _ line: [String: String]?, _ expected: [String: String], file: StaticString = #filePath,
        line number: UInt = #line
    ) {
        guard let line else { return XCTFail("no audit line", file: file, line: number) }
        XCTAssertEqual(line["msg"], "money movement", file: file, line: number)
        XCTAssertEqual(line["level"], "notice", file: file, line: number)
        for (key, value) in expected { XCTAssertEqual(line[key], value, "\(key) in \(line)", file: file, line: number) }
    }

    func testEachMovementWritesExactlyOneAuditLine() async throws {
        let user = UUID()
        users.append(user)
        let userText = user.uuidString.lowercased()
        let transactionId = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
        let purchase = "payment.apple_iap:\(transactionId)"
        var grant = GrantRequest()
        grant.eventId = purchase
        grant.userId = user.uuidString
        grant.emailHash = PointsTestDatabase.randomEmailHash()
        grant.emailMasked = "a***@example.com"
        grant.productCode = "popular_pack"
        grant.bizId = UUID().uuidString
        var metadata = Metadata()
        metadata.addString("audit-req-1", forKey: "x-request-id")
        _ = try await client.call(PointsMethods.grant, grant, metadata: metadata, timeout: .seconds(10))
        expectLine(
            try auditLines().last,
            [
                "movement": "grant", "event_id": purchase, "user_id": userText, "credits": "210",
                "balance_after": "210", "result": "applied", "request_id": "audit-req-1",
            ])
        _ = try await client.call(PointsMethods.grant, grant, timeout: .seconds(10))
        expectLine(
            try auditLines().last,
            [
                "movement": "grant", "credits": "0", "credits_first": "210", "balance_after": "210",
                "result": "replayed",
            ])

        var spend = SpendRequest()
        spend.eventId = "chat.turn:\(UUID().uuidString)"
        spend.userId = user.uuidString
        spend.amount = 60
        spend.bizType = "chat"
        spend.bizId = "session-1"
        _ = try await client.call(PointsMethods.spend, spend, timeout: .seconds(10))
        expectLine(
            try auditLines().last,
            [
                "movement": "spend", "event_id": spend.eventId, "credits": "-60", "balance_after": "150",
                "result": "applied",
            ])
        var tooMuch = spend
        tooMuch.eventId = "chat.turn:\(UUID().uuidString)"
        tooMuch.amount = 1_000
        do {
            _ = try await client.call(PointsMethods.spend, tooMuch, timeout: .seconds(10))
            XCTFail("a spend above the balance is refused")
        } catch let error as RPCError {
            XCTAssertEqual(ErrorReason.reason(of: error), "INSUFFICIENT_CREDITS")
        }
        expectLine(
            try auditLines().last,
            [
                "movement": "spend", "event_id": tooMuch.eventId, "credits": "0", "result": "refused",
                "reason": "INSUFFICIENT_CREDITS",
            ])

        var reverseSpend = ReverseSpendRequest()
        reverseSpend.eventId = "chat.turn.refund:\(UUID().uuidString)"
        reverseSpend.userId = user.uuidString
        reverseSpend.spendEventId = spend.eventId
        _ = try await client.call(PointsMethods.reverseSpend, reverseSpend, timeout: .seconds(10))
        expectLine(
            try auditLines().last,
            ["movement": "spend_reversal", "credits": "60", "balance_after": "210", "result": "applied"])

        var clawback = ClawbackRequest()
        clawback.eventId = "refund.apple_iap:\(transactionId)"
        clawback.userId = user.uuidString
        clawback.originalEventId = purchase
        clawback.bizId = UUID().uuidString
        clawback.reason = "refund"
        _ = try await client.call(PointsMethods.clawback, clawback, timeout: .seconds(10))
        expectLine(
            try auditLines().last,
            [
                "movement": "clawback", "event_id": clawback.eventId, "credits": "-210", "balance_after": "0",
                "result": "applied",
            ])
        var reversal = ReverseClawbackRequest()
        reversal.eventId = "refund_reversed.apple_iap:\(transactionId)"
        reversal.userId = user.uuidString
        reversal.clawbackEventId = clawback.eventId
        reversal.bizId = UUID().uuidString
        _ = try await client.call(PointsMethods.reverseClawback, reversal, timeout: .seconds(10))
        expectLine(
            try auditLines().last,
            ["movement": "clawback_reversal", "credits": "210", "balance_after": "210", "result": "applied"])

        // A request that decides nothing (not valid) writes no audit line.
        var invalid = spend
        invalid.userId = "not-a-uuid"
        _ = try? await client.call(PointsMethods.spend, invalid, timeout: .seconds(10))
        // Reads write none either.
        var balance = GetBalanceRequest()
        balance.userId = user.uuidString
        _ = try await client.call(PointsMethods.getBalance, balance, timeout: .seconds(10))

        let lines = try auditLines()
        XCTAssertEqual(
            lines.map { $0["movement"] ?? "" },
            ["grant", "grant", "spend", "spend", "spend_reversal", "clawback", "clawback_reversal"],
            "one line per call that decided")
        XCTAssertEqual(sink.allLines.count, lines.count, "at level error, only the audit lines were written")
        for line in sink.allLines { XCTAssertFalse(line.contains("@"), "no email: \(line)") }
    }

    func testAnOperatorAdjustmentWritesOneAuditLineAppliedReplayedOrRefused() async throws {
        let user = UUID()
        users.append(user)
        let url = try TestDatabases.url("POINTS_DATABASE_URL")
        let audit = AuditLog(Logger(service: "points-adjust", minimumLevel: .critical, sink: sink))
        let eventId = "adjust:audit-\(UUID().uuidString)"
        let adjustment = try AdjustCommand(
            userId: user.uuidString, amount: 40, reason: "goodwill", operatorName: "ops-1", eventId: eventId
        )
        .validated()
        var status = await AdjustCommandLine.apply(adjustment, databaseURL: url, auditLog: audit).status
        XCTAssertEqual(status, 0)
        status = await AdjustCommandLine.apply(adjustment, databaseURL: url, auditLog: audit).status
        XCTAssertEqual(status, 0)
        // The same event id with other content: refused, nothing written.
        let conflicting = try AdjustCommand(
            userId: user.uuidString, amount: 41, reason: "goodwill", operatorName: "ops-1", eventId: eventId
        )
        .validated()
        status = await AdjustCommandLine.apply(conflicting, databaseURL: url, auditLog: audit).status
        XCTAssertEqual(status, AdjustCommandLine.refusedStatus)
        let lines = try auditLines()
        XCTAssertEqual(lines.count, 3)
        expectLine(
            lines.first,
            [
                "movement": "adjustment", "event_id": eventId, "user_id": user.uuidString.lowercased(),
                "credits": "40", "balance_after": "40", "result": "applied",
            ])
        expectLine(
            lines.dropFirst().first,
            ["movement": "adjustment", "credits": "0", "credits_first": "40", "result": "replayed"])
        expectLine(
            lines.last,
            [
                "movement": "adjustment", "event_id": eventId, "credits": "0", "result": "refused",
                "reason": "EVENT_CONFLICT",
            ])
        XCTAssertFalse(
            sink.allLines.joined().contains("goodwill"), "the operator's free-text reason stays in the ledger row")
    }
}
