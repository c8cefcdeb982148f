import Contracts
import FieldRules
import Foundation
@testable import PointsService
import PostgresClient
import RPCCore
import RPCRuntime
import TestSupport
import XCTest

/// PointsService as a real process over gRPC on the real database: the
/// contract, error reasons, concurrency, and a database outage.
final class PointsRPCTests: XCTestCase {
    var service: ServiceProcess!
    var client: RPCClient!
    var database: PostgresPool!
    /// Every user a request was built for: the ledger invariants are checked for them after each test.
    var users: [UUID] = []

    override func setUp() async throws {
        let url = try TestDatabases.url("POINTS_DATABASE_URL")
        // The ledger over gRPC; caller authentication has its own tests (PointsAuthorizationTests).
        service = try ServiceProcess(
            executable: "PointsService",
            environment: ["DATABASE_URL": url, "LOG_LEVEL": "warning", "INTERNAL_AUTH": "off"])
        client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: service.port)])
        database = PostgresPool(configuration: .init(connectionString: url, connectionsMax: 2))
    }

    override func tearDown() async throws {
        if let database, !users.isEmpty { try await PointsTestDatabase.assertInvariants(pool: database, users: users) }
        await client?.close()
        let status = service?.stop()
        // Its log's end says why when it is not (e.g. a sanitizer's report).
        XCTAssertEqual(
            status, 0,
            "graceful exit on SIGTERM; the end of its log:\n\(status == 0 ? "" : String(service?.logs.suffix(6_000) ?? ""))"
        )
        await database?.close()
    }

    private func grantRequest(
        user: UUID, event: String = "payment.apple_iap:\(UInt64.random(in: 1...UInt64.max))",
        product: String = "starter_pack", emailHash: String = randomHash()
    ) -> GrantRequest {
        users.append(user)
        var request = GrantRequest()
        request.eventId = event
        request.userId = user.uuidString
        request.emailHash = emailHash
        request.productCode = product
        request.bizId = UUID().uuidString
        return request
    }

    /// The clawback (PaymentsService's refund cycle, `suffix` ":n" from the
    /// second) of `purchase`, a `payment.apple_iap:` grant of `user`'s.
    private func clawbackRequest(of purchase: GrantRequest, user: UUID, suffix: String = "", amount: Int64 = 0)
        -> ClawbackRequest
    {
        var request = ClawbackRequest()
        request.eventId = "refund." + purchase.eventId.dropFirst("payment.".count) + suffix
        request.userId = user.uuidString
        request.originalEventId = purchase.eventId
        request.bizId = purchase.bizId
        request.reason = "CUSTOMER_REQUEST"
        request.amount = amount
        return request
    }

    private static func randomHash() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    private func ledgerRows(_ user: UUID) async throws -> Int64 {
        try await database.withConnection {
            try await $0.query("select count(*) as n from points_ledger where user_id = $1::uuid", [.uuid(user)]).first!
                .int64("n")
        }
    }

    private func expectError(
        _ code: RPCError.Code, reason: String, _ body: () async throws -> Void, file: StaticString = #filePath,
        line: UInt = #line
    ) async {
        do {
            try await body()
            XCTFail("expected \(code)", file: file, line: line)
        } catch let error as RPCError {
            XCTAssertEqual(error.code, code, file: file, line: line)
            XCTAssertEqual(ErrorReason.reason(of: error), reason, file: file, line: line)
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }

    func testGrantReplayAndBalanceOverGRPC() async throws {
        let user = UUID()
        let request = grantRequest(user: user)
        let first = try await client.call(PointsMethods.grant, request, timeout: .seconds(10))
        XCTAssertFalse(first.replayed)
        XCTAssertEqual(first.creditsAdded, 100)
        let replay = try await client.call(PointsMethods.grant, request, timeout: .seconds(10))
        XCTAssertTrue(replay.replayed)
        XCTAssertEqual(replay.ledgerEntryId, first.ledgerEntryId)
        var balanceRequest = GetBalanceRequest()
        balanceRequest.userId = user.uuidString
        let balance = try await client.call(PointsMethods.getBalance, balanceRequest, timeout: .seconds(10))
        XCTAssertEqual(balance.balance, 100)
        XCTAssertEqual(balance.lifetimeEarned, 100)
        let rows = try await ledgerRows(user)
        XCTAssertEqual(rows, 1)
    }

    func testGetBalancesAnswersEveryRequestedUserInOrder() async throws {
        let funded = UUID()
        let other = UUID()
        _ = try await client.call(PointsMethods.grant, grantRequest(user: funded), timeout: .seconds(10))
        _ = try await client.call(
            PointsMethods.grant, grantRequest(user: other, product: "popular_pack"), timeout: .seconds(10))
        let unseen = UUID()
        var request = GetBalancesRequest()
        // Upper-case text, a repeat, and a user never seen.
        request.userIds = [other.uuidString, unseen.uuidString, funded.uuidString.lowercased(), other.uuidString]
        let response = try await client.call(PointsMethods.getBalances, request, timeout: .seconds(10))
        XCTAssertEqual(
            response.balances.map(\.userId),
            [other, unseen, funded, other].map { $0.uuidString.lowercased() })
        XCTAssertEqual(response.balances.map(\.balance), [210, 0, 100, 210])
        XCTAssertEqual(response.balances.map(\.lifetimeEarned), [210, 0, 100, 210])
        XCTAssertEqual(response.balances.map(\.lifetimeSpent), [0, 0, 0, 0])
        // The same figures as GetBalance, one user at a time.
        for (userId, batched) in zip(request.userIds, response.balances) {
            var single = GetBalanceRequest()
            single.userId = userId
            let alone = try await client.call(PointsMethods.getBalance, single, timeout: .seconds(10))
            XCTAssertEqual(alone, batched)
        }
    }

    func testGetBalancesRefusesAnEmptyAnOversizedOrAMalformedList() async throws {
        var request = GetBalancesRequest()
        await expectError(.invalidArgument, reason: "VALIDATION_FAILED") {
            _ = try await self.client.call(PointsMethods.getBalances, request, timeout: .seconds(10))
        }
        request.userIds = (0..<65).map { _ in UUID().uuidString }
        await expectError(.invalidArgument, reason: "VALIDATION_FAILED") {
            _ = try await self.client.call(PointsMethods.getBalances, request, timeout: .seconds(10))
        }
        request.userIds.removeLast()
        let sixtyFour = try await client.call(PointsMethods.getBalances, request, timeout: .seconds(10))
        XCTAssertEqual(sixtyFour.balances.count, 64)
        request.userIds = [UUID().uuidString, "not-a-uuid"]
        do {
            _ = try await client.call(PointsMethods.getBalances, request, timeout: .seconds(10))
            XCTFail("a malformed user id was read")
        } catch let error as RPCError {
            XCTAssertEqual(error.code, .invalidArgument)
            XCTAssertTrue(error.message.contains("user_ids[1]"), error.message)
        }
    }

    func testErrorsCarryTheirReasonAndWriteNothing() async throws {
        let user = UUID()
        let hash = Self.randomHash()
        _ = try await client.call(
            PointsMethods.grant, grantRequest(user: user, product: "new_user_pack", emailHash: hash),
            timeout: .seconds(10))
        await expectError(.failedPrecondition, reason: "STARTER_PACK_INELIGIBLE") {
            _ = try await self.client.call(
                PointsMethods.grant, self.grantRequest(user: UUID(), product: "new_user_pack", emailHash: hash),
                timeout: .seconds(10))
        }
        await expectError(.notFound, reason: "PRODUCT_NOT_FOUND") {
            _ = try await self.client.call(
                PointsMethods.grant, self.grantRequest(user: user, product: "gold_pack"), timeout: .seconds(10))
        }
        let conflicting = grantRequest(user: user)
        _ = try await client.call(PointsMethods.grant, conflicting, timeout: .seconds(10))
        var changed = conflicting
        changed.productCode = "premium_pack"
        await expectError(.alreadyExists, reason: "EVENT_CONFLICT") {
            _ = try await self.client.call(PointsMethods.grant, changed, timeout: .seconds(10))
        }
        await expectError(.invalidArgument, reason: "VALIDATION_FAILED") {
            _ = try await self.client.call(
                PointsMethods.grant, self.grantRequest(user: user, event: ""), timeout: .seconds(10))
        }
        let rows = try await ledgerRows(user)
        XCTAssertEqual(rows, 2, "only the two successful grants wrote")
    }

    /// The gateway used to keep a bidi control of the address's domain in the
    /// mask, which this service refused: VALIDATION_FAILED, permanent for the
    /// saga, so a paid starter pack was never credited. The gateway's mask
    /// (FieldRules' `EmailMask.masked`, what `EmailIdentity.masked` returns)
    /// now drops it and the grant succeeds.
    func testStarterPackGrantWithTheGatewaysMaskOfABidiDomainSucceeds() async throws {
        let email = "Zo\u{EB}@exa\u{202E}mple\u{2066}.com"
        let user = UUID()
        let hash = Self.randomHash()
        var before = grantRequest(user: user, product: "new_user_pack", emailHash: hash)
        before.emailMasked = "z***@exa\u{202E}mple\u{2066}.com"  // what the gateway sent before FieldRules
        await expectError(.invalidArgument, reason: "VALIDATION_FAILED") {
            _ = try await self.client.call(PointsMethods.grant, before, timeout: .seconds(10))
        }

        var request = grantRequest(user: user, product: "new_user_pack", emailHash: hash)
        request.emailMasked = EmailMask.masked(email)
        XCTAssertEqual(request.emailMasked, "z***@example.com")
        let granted = try await client.call(PointsMethods.grant, request, timeout: .seconds(10))
        XCTAssertEqual(granted.creditsAdded, 60)
        XCTAssertFalse(granted.replayed)
        let snapshot = try await database.withConnection {
            try await $0.query(
                "select user_email_snapshot from register_bonus_claims where email_hash = $1", [.text(hash)]
            )
            .first!.string("user_email_snapshot")
        }
        XCTAssertEqual(snapshot, "z***@example.com")
    }

    func testGrantQuantityOverGRPC() async throws {
        let user = UUID()
        var request = grantRequest(user: user, product: "premium_pack")
        request.quantity = 2
        let first = try await client.call(PointsMethods.grant, request, timeout: .seconds(10))
        XCTAssertEqual(first.creditsAdded, 830)
        XCTAssertEqual(first.balance, 830)
        for bad: Int32 in [-1, 11] {
            var invalid = grantRequest(user: user, product: "premium_pack")
            invalid.quantity = bad
            do {
                _ = try await client.call(PointsMethods.grant, invalid, timeout: .seconds(10))
                XCTFail("expected INVALID_ARGUMENT for quantity \(bad)")
            } catch let error as RPCError {
                XCTAssertEqual(error.code, .invalidArgument)
                XCTAssertEqual(ErrorReason.reason(of: error), "VALIDATION_FAILED")
                XCTAssertTrue(error.message.hasPrefix("quantity:"), error.message)
            }
        }
        let rows = try await ledgerRows(user)
        XCTAssertEqual(rows, 1)
    }

    func testRefundCyclesAndProratedAmountsOverGRPC() async throws {
        let user = UUID()
        let transactionId = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
        var purchase = grantRequest(user: user, event: "payment.apple_iap:\(transactionId)", product: "popular_pack")
        purchase.quantity = 2
        _ = try await client.call(PointsMethods.grant, purchase, timeout: .seconds(10))
        func clawback(_ suffix: String, amount: Int64) -> ClawbackRequest {
            clawbackRequest(of: purchase, user: user, suffix: suffix, amount: amount)
        }
        func reversal(_ suffix: String) -> ReverseClawbackRequest {
            var request = ReverseClawbackRequest()
            request.eventId = "refund_reversed.apple_iap:\(transactionId)\(suffix)"
            request.userId = user.uuidString
            request.clawbackEventId = "refund.apple_iap:\(transactionId)\(suffix)"
            request.bizId = purchase.bizId
            return request
        }
        await expectError(.invalidArgument, reason: "VALIDATION_FAILED") {
            _ = try await self.client.call(PointsMethods.clawback, clawback("", amount: 421), timeout: .seconds(10))
        }
        let first = try await client.call(PointsMethods.clawback, clawback("", amount: 0), timeout: .seconds(10))
        XCTAssertEqual(first.creditsDeducted, 420)
        XCTAssertEqual(first.balance, 0)
        await expectError(.alreadyExists, reason: "EVENT_CONFLICT") {
            _ = try await self.client.call(PointsMethods.clawback, clawback(":2", amount: 100), timeout: .seconds(10))
        }
        let restored = try await client.call(PointsMethods.reverseClawback, reversal(""), timeout: .seconds(10))
        XCTAssertEqual(restored.creditsRestored, 420)
        let second = try await client.call(PointsMethods.clawback, clawback(":2", amount: 100), timeout: .seconds(10))
        XCTAssertFalse(second.replayed)
        XCTAssertEqual(second.creditsDeducted, 100)
        XCTAssertEqual(second.balance, 320)
        let secondRestored = try await client.call(PointsMethods.reverseClawback, reversal(":2"), timeout: .seconds(10))
        XCTAssertEqual(secondRestored.creditsRestored, 100)
        XCTAssertEqual(secondRestored.balance, 420)
        let replay = try await client.call(PointsMethods.clawback, clawback(":2", amount: 100), timeout: .seconds(10))
        XCTAssertTrue(replay.replayed)
        XCTAssertEqual(replay.creditsDeducted, 100)
        XCTAssertEqual(replay.balance, 420)
        let rows = try await ledgerRows(user)
        XCTAssertEqual(rows, 5)
    }

    /// Crediting past `PointsLimits.balanceMax` depends on the account, not
    /// on the request: FAILED_PRECONDITION (it was INVALID_ARGUMENT, which
    /// says the caller sent something wrong), writing nothing. The reason
    /// stays VALIDATION_FAILED until PaymentsService's saga knows one of its
    /// own: on it the saga alerts and retries (`StepFailure.needsOperator`).
    /// A spend given back to a refunded purchase whose clawback could not
    /// take it all answers what paid that debt (overdue_settled) apart from
    /// what came back to the balance (credits_restored), first time and replay.
    func testAReversedSpendAnswersWhatSettledTheOverdueOverGRPC() async throws {
        let user = UUID()
        users.append(user)
        let transactionId = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
        let purchase = grantRequest(user: user, event: "payment.apple_iap:\(transactionId)", product: "popular_pack")
        let credited = try await client.call(PointsMethods.grant, purchase, timeout: .seconds(10)).creditsAdded
        XCTAssertGreaterThan(credited, 10)
        var spend = SpendRequest()
        spend.eventId = "chat.turn:\(UUID().uuidString)"
        spend.userId = user.uuidString
        spend.amount = credited - 10
        spend.bizType = "chat"
        _ = try await client.call(PointsMethods.spend, spend, timeout: .seconds(10))
        let clawedBack = try await client.call(
            PointsMethods.clawback, clawbackRequest(of: purchase, user: user), timeout: .seconds(10))
        XCTAssertEqual([clawedBack.creditsDeducted, clawedBack.overdueAmount], [10, credited - 10])
        var reverse = ReverseSpendRequest()
        reverse.eventId = "chat.undo:\(UUID().uuidString)"
        reverse.userId = user.uuidString
        reverse.spendEventId = spend.eventId
        for replayed in [false, true] {
            let answer = try await client.call(PointsMethods.reverseSpend, reverse, timeout: .seconds(10))
            XCTAssertEqual(answer.replayed, replayed)
            XCTAssertEqual([answer.creditsRestored, answer.overdueSettled, answer.balance], [0, credited - 10, 0])
        }
    }

    func testCreditingPastTheBalanceCeilingIsFailedPreconditionAndWritesNothing() async throws {
        let store = try await PointsTestDatabase.store()
        let nearCeiling = PointsLimits.balanceMax - 50

        let grantee = UUID()
        try await PointsTestDatabase.adjust(store, userId: grantee, amount: nearCeiling)
        let grant = grantRequest(user: grantee, product: "popular_pack")
        try await expectRefusedAtTheCeiling(grantee, rowsKept: 1, "only the adjustment") {
            _ = try await self.client.call(PointsMethods.grant, grant, timeout: .seconds(10))
        }

        let refunded = UUID()
        let purchase = grantRequest(user: refunded)
        _ = try await client.call(PointsMethods.grant, purchase, timeout: .seconds(10))
        let clawback = clawbackRequest(of: purchase, user: refunded)
        _ = try await client.call(PointsMethods.clawback, clawback, timeout: .seconds(10))
        try await PointsTestDatabase.adjust(store, userId: refunded, amount: nearCeiling)
        var reversal = ReverseClawbackRequest()
        reversal.eventId = "refund_reversed." + purchase.eventId
        reversal.userId = refunded.uuidString
        reversal.clawbackEventId = clawback.eventId
        reversal.bizId = purchase.bizId
        try await expectRefusedAtTheCeiling(refunded, rowsKept: 3, "purchase, refund, adjustment") {
            _ = try await self.client.call(PointsMethods.reverseClawback, reversal, timeout: .seconds(10))
        }

        // The store keeps balance + unreversed spends <= lifetime_earned <= the ceiling, so only credits
        // written outside it (a legacy writer: ledger row, account and opening lot) reach this refusal.
        let spender = UUID()
        users.append(spender)
        try await PointsTestDatabase.adjust(store, userId: spender, amount: nearCeiling)
        var spend = SpendRequest()
        spend.eventId = "chat.ceiling:\(UUID().uuidString)"
        spend.userId = spender.uuidString
        spend.amount = 100
        spend.bizType = "chat"
        _ = try await client.call(PointsMethods.spend, spend, timeout: .seconds(10))
        try await store.pool.withTransaction { transaction in
            try await transaction.query(
                """
                update user_points set balance = balance + 100, lifetime_earned = lifetime_earned + 100 where user_id = $1::uuid
                """, [.uuid(spender)])
            try await transaction.query(
                """
                insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, request_fingerprint)
                values ($1::uuid, $2, 'grant', 1, 100, $3::bigint, 'chat', '')
                """, [.uuid(spender), .text("legacy.grant:\(UUID().uuidString)"), .int64(nearCeiling)])
            try await transaction.query(
                """
                insert into credit_lots (user_id, source_event_id, credited, remaining) values ($1::uuid, $2, 100, 100)
                """, [.uuid(spender), .text(CreditLotLedger.openingSource(spender))])
        }
        var reverseSpend = ReverseSpendRequest()
        reverseSpend.eventId = "chat.ceiling.undo:\(UUID().uuidString)"
        reverseSpend.userId = spender.uuidString
        reverseSpend.spendEventId = spend.eventId
        try await expectRefusedAtTheCeiling(spender, rowsKept: 3, "adjustment, spend, the legacy grant") {
            _ = try await self.client.call(PointsMethods.reverseSpend, reverseSpend, timeout: .seconds(10))
        }
        for user in [grantee, refunded, spender] {
            let balance = try await store.getBalance(userId: user.uuidString).balance
            XCTAssertEqual(balance, nearCeiling)
        }
    }

    /// A refusal at the balance ceiling (status and reason) that left `user`'s ledger at `rowsKept` rows.
    private func expectRefusedAtTheCeiling(
        _ user: UUID, rowsKept: Int64, _ rows: String, _ call: () async throws -> Void,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        await expectError(.failedPrecondition, reason: "VALIDATION_FAILED", call, file: file, line: line)
        let count = try await ledgerRows(user)
        XCTAssertEqual(count, rowsKept, rows, file: file, line: line)
    }

    func testMalformedUTF8OnTheWireIsInvalidArgument() async throws {
        // GrantRequest.event_id (field 1) with bytes that are not UTF-8.
        let bytes: [UInt8] = [0x0A, 0x03, 0x61, 0xC3, 0x28]
        do {
            _ = try await client.unaryRaw(PointsMethods.grant.descriptor, request: bytes, timeout: .seconds(10))
            XCTFail("expected INVALID_ARGUMENT")
        } catch let error as RPCError {
            XCTAssertEqual(error.code, .invalidArgument)
            XCTAssertEqual(ErrorReason.reason(of: error), "VALIDATION_FAILED")
        }
    }

    func testTwoHundredParallelGrantsOfOneEventWriteOneRow() async throws {
        let user = UUID()
        let request = grantRequest(user: user)
        let client = self.client!
        let replayed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 {
                group.addTask { try await client.call(PointsMethods.grant, request, timeout: .seconds(30)).replayed }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        XCTAssertEqual(replayed.filter { !$0 }.count, 1, "exactly one call applied the grant")
        let rows = try await ledgerRows(user)
        XCTAssertEqual(rows, 1)
    }

    func testTwoHundredDistinctGrantsForOneUserSumExactly() async throws {
        let user = UUID()
        let client = self.client!
        let requests = (0..<200).map { _ in grantRequest(user: user) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in requests {
                group.addTask { _ = try await client.call(PointsMethods.grant, request, timeout: .seconds(30)) }
            }
            try await group.waitForAll()
        }
        var balanceRequest = GetBalanceRequest()
        balanceRequest.userId = user.uuidString
        let balance = try await client.call(PointsMethods.getBalance, balanceRequest, timeout: .seconds(10))
        XCTAssertEqual(balance.balance, 200 * 100)
        let rows = try await ledgerRows(user)
        XCTAssertEqual(rows, 200)
    }

    /// Concurrent submissions of ONE starter-pack grant (a retry racing the
    /// first call): every answer is a success, exactly one applied it.
    private func assertConcurrentStarterSubmissionsApplyOnce(
        count: Int, file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let user = UUID()
        let request = grantRequest(user: user, product: "new_user_pack")
        let client = self.client!
        let outcomes = await withTaskGroup(of: Result<GrantResponse, any Error>.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do {
                        return .success(try await client.call(PointsMethods.grant, request, timeout: .seconds(30)))
                    } catch { return .failure(error) }
                }
            }
            return await group.reduce(into: [Result<GrantResponse, any Error>]()) { $0.append($1) }
        }
        let answers = outcomes.compactMap { try? $0.get() }
        XCTAssertEqual(
            answers.count, count,
            "every submission succeeds: \(outcomes.compactMap { if case .failure(let error) = $0 { return "\(error)" } else { return nil } })",
            file: file, line: line)
        XCTAssertEqual(answers.filter { !$0.replayed }.count, 1, "exactly one applied it", file: file, line: line)
        XCTAssertTrue(
            answers.allSatisfy { $0.creditsAdded == 60 && $0.balanceAfter == 60 && $0.balance == 60 }, file: file,
            line: line)
        XCTAssertEqual(Set(answers.map(\.ledgerEntryId)).count, 1, file: file, line: line)
        let rows = try await ledgerRows(user)
        XCTAssertEqual(rows, 1, file: file, line: line)
        var balanceRequest = GetBalanceRequest()
        balanceRequest.userId = user.uuidString
        let balance = try await client.call(PointsMethods.getBalance, balanceRequest, timeout: .seconds(10))
        XCTAssertEqual(balance.balance, 60, file: file, line: line)
        XCTAssertEqual(balance.lifetimeEarned, 60, file: file, line: line)
    }

    func testTwoConcurrentSubmissionsOfOneStarterGrantBothSucceed() async throws {
        // A two-way race is narrow: run it several times with fresh identities.
        for _ in 0..<10 { try await assertConcurrentStarterSubmissionsApplyOnce(count: 2) }
    }

    func testTwentyConcurrentSubmissionsOfOneStarterGrantAllSucceed() async throws {
        try await assertConcurrentStarterSubmissionsApplyOnce(count: 20)
    }

    func testConcurrentStarterGrantsWithDistinctEventsSellOnce() async throws {
        let hash = Self.randomHash()
        let client = self.client!
        let requests = (0..<20).map { _ in grantRequest(user: UUID(), product: "new_user_pack", emailHash: hash) }
        let outcomes = await withTaskGroup(of: String.self) { group in
            for request in requests {
                group.addTask {
                    do {
                        _ = try await client.call(PointsMethods.grant, request, timeout: .seconds(30))
                        return "ok"
                    } catch let error as RPCError {
                        return "\(error.code) \(ErrorReason.reason(of: error) ?? "")"
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        XCTAssertEqual(outcomes.filter { $0 == "ok" }.count, 1, "\(outcomes)")
        XCTAssertEqual(
            outcomes.filter { $0 == "\(RPCError.Code.failedPrecondition) STARTER_PACK_INELIGIBLE" }.count, 19,
            "\(outcomes)")
        let rows = try await database.withConnection { connection in
            try await connection.query(
                "select count(*) as n from points_ledger where event_id = any($1::text[])",
                [.text("{" + requests.map(\.eventId).joined(separator: ",") + "}")]
            ).first!.int64("n")
        }
        XCTAssertEqual(rows, 1)
    }

    func testParallelGrantsAndClawbacksNeverGoNegative() async throws {
        let user = UUID()
        let client = self.client!
        let grants = (0..<40).map { _ in grantRequest(user: user) }
        for grant in grants.prefix(20) { _ = try await client.call(PointsMethods.grant, grant, timeout: .seconds(10)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, grant) in grants.enumerated() {
                group.addTask { _ = try await client.call(PointsMethods.grant, grant, timeout: .seconds(30)) }
                if index < 30 {
                    var clawback = ClawbackRequest()
                    clawback.eventId = grant.eventId.replacingOccurrences(of: "payment.", with: "refund.")
                    clawback.userId = user.uuidString
                    clawback.originalEventId = grant.eventId
                    clawback.bizId = grant.bizId
                    group.addTask {
                        // The purchase may not have landed yet: EVENT_NOT_FOUND is a fine answer here.
                        do {
                            _ = try await client.call(PointsMethods.clawback, clawback, timeout: .seconds(30))
                        } catch let error as RPCError where error.code == .notFound {}
                    }
                }
            }
            try await group.waitForAll()
        }
        let (balance, signedSum) = try await database.withConnection { connection in
            let balance = try await connection.query(
                "select balance from user_points where user_id = $1::uuid", [.uuid(user)]
            ).first!.int64("balance")
            let sum = try await connection.query(
                "select coalesce(sum(direction * amount), 0)::bigint as s from points_ledger where user_id = $1::uuid",
                [.uuid(user)]
            ).first!.int64("s")
            return (balance, sum)
        }
        XCTAssertGreaterThanOrEqual(balance, 0)
        XCTAssertEqual(balance, signedSum, "balance equals the signed sum of the ledger")
    }

    func testDatabaseRestartGivesUnavailableThenRecoversWithoutRestartingTheService() async throws {
        var health = HealthCheckRequest()
        health.service = "points.v1.Points"
        let serving = try await client.call(HealthMethods.check, health, timeout: .seconds(5)).status
        XCTAssertEqual(serving, .serving)
        try runPGScript("stop")
        defer { try? runPGScript("start") }
        var request = GetBalanceRequest()
        request.userId = UUID().uuidString
        do {
            _ = try await client.call(PointsMethods.getBalance, request, timeout: .seconds(10))
            XCTFail("expected UNAVAILABLE while the database is down")
        } catch let error as RPCError {
            XCTAssertEqual(error.code, .unavailable)
            XCTAssertEqual(ErrorReason.reason(of: error), "DATABASE_UNAVAILABLE")
        }
        var notServing = false
        for _ in 0..<50 where !notServing {
            notServing = try await client.call(HealthMethods.check, health, timeout: .seconds(5)).status == .notServing
            if !notServing { try await Task.sleep(for: .milliseconds(100)) }
        }
        XCTAssertTrue(notServing, "health follows the database")
        try runPGScript("start")
        var recovered = false
        for _ in 0..<100 where !recovered {
            do {
                _ = try await client.call(PointsMethods.grant, grantRequest(user: UUID()), timeout: .seconds(10))
                recovered = true
            } catch {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        XCTAssertTrue(recovered, "the service must recover on its own")
    }

    private func runPGScript(_ command: String) throws {
        XCTAssertEqual(try Command.pg(command), 0, "scripts/pg.sh \(command)")
    }
}
