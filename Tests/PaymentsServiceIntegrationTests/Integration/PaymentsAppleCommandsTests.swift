import Contracts
import Foundation
import StrictJSON
import XCTest

/// The admin commands that talk to Apple, against the App Store stand-in:
/// `recover-notifications` (pages, duplicates, reach), `request-test-notification`
/// and `lookup-order`.
final class PaymentsAppleCommandsTests: XCTestCase {
    static let shared = SharedFixture<AppStoreSyncFixture>(
        start: { try await AppStoreSyncFixture.start() }, shutdown: { await $0.shutdown() })

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    private func fixture() async throws -> AppStoreSyncFixture { try await Self.shared.value() }

    private func command(
        _ fixture: AppStoreSyncFixture, _ arguments: [String], file: StaticString = #filePath,
        line: UInt = #line
    ) async throws -> (status: Int32, report: JSONValue?, errors: String) {
        let result = try await fixture.cluster.paymentsCommand(arguments, settings: ["LOG_LEVEL": "debug"])
        fixture.assertNoSecrets(in: result.errors + result.output, file: file, line: line)
        return (result.status, try? StrictJSONParser().parse(Array(result.output.utf8)), result.errors)
    }

    private func environment(_ report: JSONValue?, _ name: String) -> JSONValue? {
        guard case .array(let items)? = report?["environments"] else { return nil }
        return items.first { $0["environment"] == .string(name) }
    }

    func testRecoverNotificationsWalksEveryPageOnceAndAgainChangesNothing() async throws {
        let fixture = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let token = try await cluster.accountToken(user)
        let ids = (0..<45).map { _ in PaymentsCluster.randomTransactionId() }
        try await fixture.standIn.add(
            environment: "Production",
            transactions: ids.map {
                AppStoreSyncFixture.transaction($0, productCode: "starter_pack", token: token, customer: "c-\(user)")
            }, notifications: ids.map { AppStoreSyncFixture.notification("ONE_TIME_CHARGE", about: $0) })

        let askedBefore = try await fixture.requests("/inApps/v1/notifications/history", environment: "Production")
            .count
        let first = try await command(fixture, ["recover-notifications", "--since", "1"])
        XCTAssertEqual(first.status, 0, first.errors)
        let production = environment(first.report, "Production")
        XCTAssertEqual(production?["pages"], .integer(3), "45 notifications, 20 a page")
        XCTAssertEqual(production?["recorded"], .integer(45))
        XCTAssertEqual(production?["duplicates"], .integer(0))
        XCTAssertEqual(production?["complete"], .bool(true))
        XCTAssertEqual(environment(first.report, "Sandbox")?["recorded"], .integer(0))
        for id in ids { try await cluster.assertGrantedOnce(id, user: user, productCode: "starter_pack") }
        let balance = try await cluster.balance(user)
        XCTAssertEqual(balance.balance, 4_500)
        // Later pages repeat the body and carry the token.
        let pages = Array(
            try await fixture.requests("/inApps/v1/notifications/history", environment: "Production").dropFirst(
                askedBefore))
        XCTAssertEqual(pages.count, 3)
        XCTAssertEqual(
            pages.dropFirst().filter { ($0["query"] as? String ?? "").hasPrefix("paginationToken=") }.count, 2)
        XCTAssertEqual(Set(pages.compactMap { ($0["body"] as? [String: Any])?["startDate"] as? Int64 }).count, 1)

        // Again, and failures only: everything is a duplicate, nothing moves.
        let again = try await command(fixture, ["recover-notifications", "--since", "1"])
        XCTAssertEqual(environment(again.report, "Production")?["recorded"], .integer(0))
        XCTAssertEqual(environment(again.report, "Production")?["duplicates"], .integer(45))
        let failures = try await command(
            fixture, ["recover-notifications", "--since", "1", "--environment", "Production", "--only-failures"])
        XCTAssertEqual(failures.status, 0)
        XCTAssertEqual(environment(failures.report, "Production")?["only_failures"], .bool(true))
        XCTAssertEqual(environment(failures.report, "Production")?["duplicates"], .integer(45))
        XCTAssertNil(environment(failures.report, "Sandbox"))
        for id in ids { try await cluster.assertGrantedOnce(id, user: user, productCode: "starter_pack") }
        try await cluster.assertPointsInvariants(users: [user])
    }

    func testRecoverNotificationsStaysInsideApplesReachAndRefusesBadWindows() async throws {
        let fixture = try await fixture()
        // 50 days: inside production's 180, beyond sandbox's 30.
        let result = try await command(fixture, ["recover-notifications", "--since", "1200"])
        XCTAssertEqual(result.status, 0, result.errors)
        XCTAssertEqual(environment(result.report, "Production")?["clamped_to_reach"], .bool(false))
        XCTAssertEqual(environment(result.report, "Sandbox")?["clamped_to_reach"], .bool(true))
        XCTAssertEqual(
            environment(result.report, "Sandbox")?["complete"], .bool(true), "Apple accepted the clamped start")
        for arguments in [
            ["--since", "yesterday"], [], ["--since", "2", "--until", "2020-01-01"],
            ["--since", "2", "--environment", "Xcode"],
        ] {
            let refused = try await fixture.cluster.paymentsCommand(["recover-notifications"] + arguments)
            XCTAssertEqual(refused.status, 2, "\(arguments): \(refused.errors)")
        }
    }

    func testRequestTestNotificationReportsTheSendAttempt() async throws {
        let fixture = try await fixture()
        let result = try await command(
            fixture, ["request-test-notification", "--environment", "Sandbox", "--wait-seconds", "5"])
        XCTAssertEqual(result.status, 0, result.errors)
        XCTAssertEqual(result.report?["environment"], .string("Sandbox"))
        XCTAssertEqual(result.report?["notification_type"], .string("TEST"), "the TEST payload verified")
        XCTAssertEqual(result.report?["first_send_attempt_result"], .string("SUCCESS"))
        XCTAssertEqual(result.report?["delivered"], .bool(true))
        let asked = try await fixture.requests("/inApps/v1/notifications/test", environment: "Sandbox")
        XCTAssertEqual(asked.map { $0["method"] as? String }, ["POST", "GET"])
    }

    func testLookupOrderPrintsApplesVerifiedTransactions() async throws {
        let fixture = try await fixture()
        let user = UUID()
        let token = try await fixture.cluster.accountToken(user)
        let first = PaymentsCluster.randomTransactionId(), second = PaymentsCluster.randomTransactionId()
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    first, productCode: "popular_pack", token: token, customer: "c-\(user)"),
                AppStoreSyncFixture.transaction(
                    second, productCode: "starter_pack", token: token, quantity: 3, customer: "c-\(user)"),
            ], orders: ["MQ7XY1Z2": [first, second]])
        let found = try await command(fixture, ["lookup-order", "--order-id", "MQ7XY1Z2"])
        XCTAssertEqual(found.status, 0, found.errors)
        XCTAssertEqual(found.report?["valid"], .bool(true))
        guard case .array(let transactions)? = found.report?["transactions"] else { return XCTFail("transactions") }
        XCTAssertEqual(transactions.compactMap { $0["transaction_id"] }, [.string(first), .string(second)])
        XCTAssertEqual(transactions.last?["quantity"], .integer(3))
        XCTAssertEqual(transactions.first?["app_account_token"], .string(token))
        XCTAssertEqual(transactions.first?["environment"], .string("Production"))
        let unknown = try await command(fixture, ["lookup-order", "--order-id", "NOSUCHORDER"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertEqual(unknown.report?["valid"], .bool(false))
        let bad = try await fixture.cluster.paymentsCommand(["lookup-order", "--order-id", "../x"])
        XCTAssertEqual(bad.status, 2)
        fixture.assertNoSecrets(in: fixture.cluster.paymentsLogs)
    }
}
