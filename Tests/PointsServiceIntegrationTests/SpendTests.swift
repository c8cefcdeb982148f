import Contracts
import Foundation
@testable import PointsService
import PostgresClient
import RPCCore
import RPCRuntime
import TestSupport
import XCTest

/// Points.Spend and ReverseSpend on the real database: never below zero,
/// exactly once per event id, attributed to the purchases the credits came
/// from (oldest first). The ledger invariants (with the credit lots) are
/// checked for every user after every test.
final class SpendTests: PointsStoreTestCase {

    /// Grants `product` and returns the purchase's event id.
    private func buy(_ user: UUID, _ product: String = "starter_pack", quantity: Int32 = 0) async throws -> String {
        try await Self.buy(store, user, product, quantity: quantity)
    }

    private static func buy(_ store: PointsStore, _ user: UUID, _ product: String, quantity: Int32 = 0) async throws
        -> String
    {
        let transactionId = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
        let eventId = "payment.apple_iap:\(transactionId)"
        _ = try await store.grant(
            GrantRequest(
                eventId: eventId, userId: user.uuidString, emailHash: PointsTestDatabase.randomEmailHash(),
                productCode: product,
                bizId: UUID().uuidString,
                source: PurchaseSource(
                    source: "apple_iap", platform: "ios", transactionId: transactionId,
                    originalTransactionId: transactionId,
                    environment: "Sandbox", appStoreProductId: "com.meeyao.qianwen.\(product)",
                    paymentRecordId: UUID().uuidString),
                emailMasked: "", quantity: quantity))
        return eventId
    }

    private func spend(
        _ user: UUID, _ amount: Int64, event: String = "chat.turn:\(UUID().uuidString)", bizType: String = "chat",
        metadata: String = ""
    ) async throws -> SpendResult {
        try await Self.spend(store, user, amount, event: event, bizType: bizType, metadata: metadata)
    }

    private static func spend(
        _ store: PointsStore, _ user: UUID, _ amount: Int64, event: String, bizType: String = "chat",
        metadata: String = ""
    ) async throws -> SpendResult {
        try await store.spend(
            SpendCommand(
                eventId: event, userId: user.uuidString, amount: amount, bizType: bizType, bizId: "session-1",
                metadataJSON: metadata))
    }

    private func expectRefusal(
        _ reason: ErrorReason, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            XCTFail("expected \(reason)", file: file, line: line)
        } catch let error as PointsError {
            XCTAssertEqual(error.reason, reason, "\(error)", file: file, line: line)
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }

    private func ledgerRows(_ user: UUID) async throws -> Int64 {
        try await store.pool.withConnection {
            try await $0.query("select count(*) as n from points_ledger where user_id = $1::uuid", [.uuid(user)]).first!
                .int64("n")
        }
    }

    /// credited, remaining, spent of one source's lot.
    private func lot(_ user: UUID, _ source: String) async throws -> (credited: Int64, remaining: Int64, spent: Int64)?
    {
        try await store.pool.withConnection {
            guard
                let row = try await $0.query(
                    "select credited, remaining, spent from credit_lots where user_id = $1::uuid and source_event_id = $2",
                    [.uuid(user), .text(source)]
                ).first
            else { return nil }
            return (try row.int64("credited"), try row.int64("remaining"), try row.int64("spent"))
        }
    }

    // MARK: Spending

    func testASpendLowersTheBalanceOnceAndIsAttributedOldestFirst() async throws {
        let user = newUser()
        let first = try await buy(user, "starter_pack")  // 100
        let second = try await buy(user, "popular_pack")  // 210
        let result = try await spend(user, 130, metadata: #"{"model":"large","tokens":1200}"#)
        XCTAssertFalse(result.replayed)
        XCTAssertEqual(result.balance, 180)
        XCTAssertEqual(
            result.attributions,
            [LotShare(sourceEventId: first, amount: 100), LotShare(sourceEventId: second, amount: 30)])
        let oldest = try await lot(user, first)
        XCTAssertEqual(oldest?.spent, 100)
        XCTAssertEqual(oldest?.remaining, 0)
        let newer = try await lot(user, second)
        XCTAssertEqual(newer?.spent, 30)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance.lifetimeSpent, 130)
        XCTAssertEqual(balance.lifetimeEarned, 310)
        // The consume row names what it was for and where the credits came from.
        let page = try await store.listLedger(userId: user.uuidString, pageSize: 1, pageToken: "")
        let entry = try XCTUnwrap(page.entries.first)
        XCTAssertEqual(entry.changeType, "consume")
        XCTAssertEqual(entry.bizType, "chat")
        XCTAssertEqual(entry.bizId, "session-1")
        let metadata = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(entry.metadataJSON.utf8)) as? [String: Any])
        XCTAssertEqual((metadata["ext"] as? [String: Any])?["model"] as? String, "large")
        XCTAssertEqual((metadata["attribution"] as? [[String: Any]])?.count, 2)
    }

    func testAReplayAnswersTheFirstResultAndOtherContentIsAConflict() async throws {
        let user = newUser()
        _ = try await buy(user)
        let event = "chat.turn:\(UUID().uuidString)"
        let first = try await spend(user, 40, event: event)
        let again = try await spend(user, 40, event: event)
        XCTAssertTrue(again.replayed)
        XCTAssertEqual(again.balanceAfter, first.balanceAfter)
        XCTAssertEqual(again.attributions, first.attributions)
        XCTAssertEqual(again.ledgerEntryId, first.ledgerEntryId)
        await expectRefusal(.eventConflict) { _ = try await self.spend(user, 41, event: event) }
        await expectRefusal(.eventConflict) { _ = try await self.spend(user, 40, event: event, bizType: "image") }
        let rows = try await ledgerRows(user)
        XCTAssertEqual(rows, 2, "one purchase, one spend")
    }

    func testOverdrawingIsRefusedAndWritesNothing() async throws {
        let user = newUser()
        _ = try await buy(user)
        await expectRefusal(.insufficientCredits) { _ = try await self.spend(user, 101) }
        let stranger = newUser()
        await expectRefusal(.insufficientCredits) { _ = try await self.spend(stranger, 1) }
        let rows = try await ledgerRows(user)
        XCTAssertEqual(rows, 1)
        let account = try await store.pool.withConnection {
            try await $0.query("select count(*) as n from user_points where user_id = $1::uuid", [.uuid(stranger)])
                .first!.int64("n")
        }
        XCTAssertEqual(account, 0, "a refused spend creates no account")
        _ = try await spend(user, 100)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance.balance, 0)
    }

    func testBadInputIsRefusedWithTheFieldAndWritesNothing() async throws {
        let user = newUser()
        _ = try await buy(user)
        let cases: [(SpendCommand, String)] = [
            (SpendCommand(eventId: "", userId: user.uuidString, amount: 1, bizType: "chat"), "event_id"),
            (SpendCommand(eventId: "e 1", userId: user.uuidString, amount: 1, bizType: "chat"), "event_id"),
            (SpendCommand(eventId: "e1", userId: "nope", amount: 1, bizType: "chat"), "user_id"),
            // The ledger's own namespaces: a spend there would take a purchase's or a refund's event id.
            (
                SpendCommand(
                    eventId: "payment.apple_iap:2000000000000001", userId: user.uuidString, amount: 1, bizType: "chat"),
                "event_id"
            ),
            (
                SpendCommand(
                    eventId: "refund.apple_iap:2000000000000001", userId: user.uuidString, amount: 1, bizType: "chat"),
                "event_id"
            ),
            (
                SpendCommand(
                    eventId: "refund_reversed.apple_iap:2000000000000001", userId: user.uuidString, amount: 1,
                    bizType: "chat"), "event_id"
            ),
            (SpendCommand(eventId: "adjust:0123abcd", userId: user.uuidString, amount: 1, bizType: "chat"), "event_id"),
            (SpendCommand(eventId: "e1", userId: user.uuidString, amount: 0, bizType: "chat"), "amount"),
            (SpendCommand(eventId: "e1", userId: user.uuidString, amount: -5, bizType: "chat"), "amount"),
            (SpendCommand(eventId: "e1", userId: user.uuidString, amount: 1_000_000_001, bizType: "chat"), "amount"),
            (SpendCommand(eventId: "e1", userId: user.uuidString, amount: 1, bizType: ""), "biz_type"),
            (SpendCommand(eventId: "e1", userId: user.uuidString, amount: 1, bizType: "Chat"), "biz_type"),
            (SpendCommand(eventId: "e1", userId: user.uuidString, amount: 1, bizType: "payment"), "biz_type"),
            (SpendCommand(eventId: "e1", userId: user.uuidString, amount: 1, bizType: "support"), "biz_type"),
            (
                SpendCommand(
                    eventId: "e1", userId: user.uuidString, amount: 1, bizType: String(repeating: "a", count: 33)),
                "biz_type"
            ),
            (
                SpendCommand(
                    eventId: "e1", userId: user.uuidString, amount: 1, bizType: "chat",
                    bizId: String(repeating: "x", count: 201)), "biz_id"
            ),
            (
                SpendCommand(eventId: "e1", userId: user.uuidString, amount: 1, bizType: "chat", metadataJSON: "[1,2]"),
                "metadata_json"
            ),
            (
                SpendCommand(
                    eventId: "e1", userId: user.uuidString, amount: 1, bizType: "chat", metadataJSON: #"{"a":1,"a":2}"#),
                "metadata_json"
            ),
            (
                SpendCommand(eventId: "e1", userId: user.uuidString, amount: 1, bizType: "chat", metadataJSON: "{"),
                "metadata_json"
            ),
            (
                SpendCommand(
                    eventId: "e1", userId: user.uuidString, amount: 1, bizType: "chat",
                    metadataJSON: #"{"a":""# + String(repeating: "x", count: 2100) + #""}"#), "metadata_json"
            ),
            // What jsonb would refuse (a U+0000, a number past numeric's
            // range) or keep far larger than written (1e131071: 131,072 digits).
            (
                SpendCommand(
                    eventId: "e1", userId: user.uuidString, amount: 1, bizType: "chat", metadataJSON: #"{"a":"\u0000"}"#
                ), "metadata_json"
            ),
            (
                SpendCommand(
                    eventId: "e1", userId: user.uuidString, amount: 1, bizType: "chat", metadataJSON: #"{"\u0000":1}"#),
                "metadata_json"
            ),
            (
                SpendCommand(
                    eventId: "e1", userId: user.uuidString, amount: 1, bizType: "chat", metadataJSON: #"{"a":1e131072}"#
                ), "metadata_json"
            ),
            (
                SpendCommand(
                    eventId: "e1", userId: user.uuidString, amount: 1, bizType: "chat",
                    metadataJSON: #"{"a":[1e131071]}"#), "metadata_json"
            ),
            (
                SpendCommand(
                    eventId: "e1", userId: user.uuidString, amount: 1, bizType: "chat",
                    metadataJSON: #"{"a":{"b":1e-16384}}"#), "metadata_json"
            ),
        ]
        for (command, field) in cases {
            do {
                _ = try await store.spend(command)
                XCTFail("accepted a bad \(field)")
            } catch {
                XCTAssertEqual(Self.validationField(error), field, "\(error)")
            }
        }
        let rows = try await ledgerRows(user)
        XCTAssertEqual(rows, 1)
    }

    /// Numbers up to the limit are stored, and jsonb gives them back written
    /// out in full: as many digits as `JSONNumber.plainDigitCount` counted.
    func testMetadataNumbersUpToTheDigitLimitAreKeptWrittenOut() async throws {
        let user = newUser()
        _ = try await buy(user)
        let widest = "1e\(PointsLimits.spendMetadataNumberDigitsMax - 1)"
        _ = try await spend(
            user, 1, metadata: #"{"price":12.50,"id":9223372036854775807,"small":1.5e-3,"wide":"# + widest + "}")
        let page = try await store.listLedger(userId: user.uuidString, pageSize: 1, pageToken: "")
        let text = try XCTUnwrap(page.entries.first).metadataJSON
        for written in [
            "12.50", "9223372036854775807", "0.0015",
            "1" + String(repeating: "0", count: PointsLimits.spendMetadataNumberDigitsMax - 1),
        ] {
            XCTAssertTrue(text.contains(written), "\(written) in \(text)")
        }
        do {
            _ = try await spend(user, 1, metadata: #"{"wide":1e"# + "\(PointsLimits.spendMetadataNumberDigitsMax)}")
            XCTFail("accepted a number one digit past the limit")
        } catch {
            XCTAssertEqual(Self.validationField(error), "metadata_json", "\(error)")
        }
    }

    private static func validationField(_ error: any Error) -> String? {
        if case .validationFailed(let field, _)? = error as? PointsError { return field }
        return nil
    }

    // MARK: Reversing a spend

    func testAReverseGivesTheSpendBackOnceToTheSameLots() async throws {
        let user = newUser()
        let first = try await buy(user, "starter_pack")
        let second = try await buy(user, "popular_pack")
        let run = UUID().uuidString
        let spentEvent = "chat.turn:\(run)", refundEvent = "chat.refund:\(run)"
        let spent = try await spend(user, 150, event: spentEvent)
        XCTAssertEqual(spent.attributions.map(\.sourceEventId), [first, second])
        let reversed = try await store.reverseSpend(
            ReverseSpendCommand(eventId: refundEvent, userId: user.uuidString, spendEventId: spentEvent))
        XCTAssertFalse(reversed.replayed)
        XCTAssertEqual(reversed.creditsRestored, 150)
        XCTAssertEqual(reversed.balance, 310)
        let again = try await store.reverseSpend(
            ReverseSpendCommand(eventId: refundEvent, userId: user.uuidString, spendEventId: spentEvent))
        XCTAssertTrue(again.replayed)
        await expectRefusal(.eventConflict) {
            _ = try await self.store.reverseSpend(
                ReverseSpendCommand(eventId: refundEvent + "b", userId: user.uuidString, spendEventId: spentEvent))
        }
        await expectRefusal(.eventNotFound) {
            _ = try await self.store.reverseSpend(
                ReverseSpendCommand(
                    eventId: refundEvent + "c", userId: user.uuidString, spendEventId: spentEvent + "none"))
        }
        await expectRefusal(.validationFailed) {
            _ = try await self.store.reverseSpend(
                ReverseSpendCommand(
                    eventId: "refund.apple_iap:\(run)", userId: user.uuidString,
                    spendEventId: spentEvent))
        }
        let stranger = newUser()
        await expectRefusal(.eventNotFound) {
            _ = try await self.store.reverseSpend(
                ReverseSpendCommand(eventId: refundEvent + "d", userId: stranger.uuidString, spendEventId: spentEvent))
        }
        let oldest = try await lot(user, first)
        XCTAssertEqual(oldest?.remaining, 100)
        XCTAssertEqual(oldest?.spent, 0)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance.lifetimeSpent, 0)
        XCTAssertEqual(balance.balance, 310)
    }

    /// A caller's metadata may use any key, even one a refund row keeps in
    /// the same place (`overdue_amount`): its spend is still replayed and
    /// reversed (the key was read as a bigint on every row, so "n/a" made
    /// the spend's row unreadable: INTERNAL, and the credits never came back).
    func testASpendWhoseMetadataNamesARefundsKeyIsReplayedAndReversed() async throws {
        let user = newUser()
        _ = try await buy(user, "popular_pack")
        for (index, metadata) in [
            #"{"overdue_amount":"n/a"}"#, #"{"overdue_amount":1.5}"#, #"{"overdue_amount":99999999999999999999}"#,
        ]
        .enumerated() {
            let run = UUID().uuidString
            let spentEvent = "chat.turn:\(run)", refundEvent = "chat.refund:\(run)"
            let spent = try await spend(user, 10, event: spentEvent, metadata: metadata)
            XCTAssertFalse(spent.replayed)
            let again = try await spend(user, 10, event: spentEvent, metadata: metadata)
            XCTAssertTrue(again.replayed, metadata)
            let reversed = try await store.reverseSpend(
                ReverseSpendCommand(eventId: refundEvent, userId: user.uuidString, spendEventId: spentEvent))
            XCTAssertEqual(reversed.creditsRestored, 10, metadata)
            XCTAssertEqual(reversed.balance, 210, "round \(index)")
        }
    }

    // MARK: Spending and refunds

    func testAClawbackTakesItsOwnPurchaseFirstThenTheOldestOtherCredits() async throws {
        let user = newUser()
        let first = try await buy(user, "starter_pack")  // 100
        let second = try await buy(user, "popular_pack")  // 210
        _ = try await spend(user, 70)  // from the first purchase
        // Refund the first purchase: 30 left of it, the other 70 from the second purchase.
        let clawback = try await store.clawback(
            ClawbackCommand(
                eventId: "refund.\(first)", userId: user.uuidString, originalEventId: first,
                bizId: UUID().uuidString, reason: "OTHER"))
        XCTAssertEqual(clawback.creditsDeducted, 100)
        XCTAssertEqual(clawback.overdueAmount, 0)
        let refunded = try await lot(user, first)
        XCTAssertEqual(refunded?.remaining, 0)
        XCTAssertEqual(refunded?.spent, 70, "70% of the refunded purchase had been spent")
        let other = try await lot(user, second)
        XCTAssertEqual(other?.remaining, 140)
        XCTAssertEqual(other?.spent, 70, "the second purchase's 70 paid for what was used of the refunded one")
        // The reversal gives back to the same lots.
        _ = try await store.reverseClawback(
            ReverseClawbackCommand(
                eventId: "refund_reversed.\(first)", userId: user.uuidString,
                clawbackEventId: "refund.\(first)", bizId: UUID().uuidString))
        let restoredFirst = try await lot(user, first)
        XCTAssertEqual(restoredFirst?.remaining, 30)
        let restoredOther = try await lot(user, second)
        XCTAssertEqual(restoredOther?.remaining, 210)
        XCTAssertEqual(restoredOther?.spent, 0)
    }

    /// P1 (100) and P2 (210); 100 spent, all of P1; P1 refunded: the
    /// clawback takes 100 of P2. Those paid for what was used, so P2's
    /// consumption (what Apple is told if P2 is refunded too) says 100
    /// spent; it said 0. Reversing the refund takes that off again.
    func testCreditsAClawbackTakesFromAnotherPurchaseCountAsSpentFromIt() async throws {
        let user = newUser()
        let p1 = try await buy(user, "starter_pack")
        let p2 = try await buy(user, "popular_pack")
        _ = try await spend(user, 100)
        let clawback = try await clawBack(user, p1)
        XCTAssertEqual([clawback.creditsDeducted, clawback.overdueAmount, clawback.balance], [100, 0, 110])
        let second = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: p2)
        XCTAssertEqual(second, PurchaseConsumption(credited: 210, spent: 100, remaining: 110))
        let first = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: p1)
        XCTAssertEqual(
            first, PurchaseConsumption(credited: 100, spent: 100, remaining: 0),
            "the refunded purchase's own history stays")
        let replayed = try await clawBack(user, p1)
        XCTAssertTrue(replayed.replayed)
        let afterReplay = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: p2)
        XCTAssertEqual(afterReplay, second)

        let reversal = try await reverseClawback(user, p1)
        XCTAssertEqual([reversal.creditsRestored, reversal.balance], [100, 210])
        let secondRestored = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: p2)
        XCTAssertEqual(secondRestored, PurchaseConsumption(credited: 210, spent: 0, remaining: 210))
    }

    /// Only the refunded purchase's spent credits move: what its lot had
    /// lost to a negative adjustment is not spending. P1 (100): -30 by an
    /// operator, 50 spent, 20 left; P2 (210); refunding P1 takes 20 of it
    /// and 80 of P2, of which 50 count as spent from P2.
    func testACreditTakenFromAnotherPurchaseCountsAsSpentOnlyUpToWhatWasSpentOfTheRefundedOne() async throws {
        let user = newUser()
        let p1 = try await buy(user, "starter_pack")
        _ = try await store.adjust(
            AdjustCommand(userId: user.uuidString, amount: -30, reason: "duplicate", operatorName: "tests"))
        _ = try await spend(user, 50)
        let p2 = try await buy(user, "popular_pack")
        let clawback = try await clawBack(user, p1)
        XCTAssertEqual([clawback.creditsDeducted, clawback.balance], [100, 130])
        let second = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: p2)
        XCTAssertEqual(second, PurchaseConsumption(credited: 210, spent: 50, remaining: 130))
        _ = try await reverseClawback(user, p1)
        let restored = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: p2)
        XCTAssertEqual(restored, PurchaseConsumption(credited: 210, spent: 0, remaining: 210))
        let first = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: p1)
        XCTAssertEqual(first, PurchaseConsumption(credited: 100, spent: 50, remaining: 20))
    }

    func testARefundOfASpentPurchaseTakesWhatIsLeftAndRecordsTheRestOverdue() async throws {
        let user = newUser()
        let purchase = try await buy(user, "starter_pack")
        _ = try await spend(user, 80)
        let clawback = try await store.clawback(
            ClawbackCommand(
                eventId: "refund.\(purchase)", userId: user.uuidString, originalEventId: purchase,
                bizId: UUID().uuidString, reason: "OTHER"))
        XCTAssertEqual(clawback.creditsDeducted, 20)
        XCTAssertEqual(clawback.overdueAmount, 80)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance.balance, 0)
        await expectRefusal(.insufficientCredits) { _ = try await self.spend(user, 1) }
    }

    func testAPurchasesConsumptionSaysWhatWasSpentAndWhatWasTakenBack() async throws {
        let user = newUser()
        let purchase = try await buy(user, "starter_pack")  // 100
        let none = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: purchase)
        XCTAssertEqual(none, PurchaseConsumption(credited: 100, spent: 0, remaining: 100))
        _ = try await spend(user, 30)
        let spent = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: purchase)
        XCTAssertEqual(spent, PurchaseConsumption(credited: 100, spent: 30, remaining: 70))
        _ = try await store.clawback(
            ClawbackCommand(
                eventId: "refund.\(purchase)", userId: user.uuidString, originalEventId: purchase,
                bizId: UUID().uuidString, reason: "OTHER"))
        let refunded = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: purchase)
        XCTAssertEqual(refunded?.spent, 30)
        XCTAssertEqual(refunded?.clawedBack, 70)
        let unknown = try await store.purchaseConsumption(
            userId: user.uuidString, purchaseEventId: "payment.apple_iap:1")
        XCTAssertNil(unknown, "a purchase without a lot is unknown, not zero")
        let stranger = try await store.purchaseConsumption(userId: UUID().uuidString, purchaseEventId: purchase)
        XCTAssertNil(stranger, "another user's purchase is not this user's")
        await expectRefusal(.validationFailed) {
            _ = try await self.store.purchaseConsumption(userId: user.uuidString, purchaseEventId: "")
        }
        await expectRefusal(.validationFailed) {
            _ = try await self.store.purchaseConsumption(userId: "nope", purchaseEventId: purchase)
        }
    }

    func testCreditsWrittenOutsideTheStoreAreAbsorbedByTheOpeningLot() async throws {
        let user = newUser()
        let purchase = try await buy(user, "starter_pack")
        // A legacy writer credits 50 without the store (no lot): the lots no longer add up to the balance.
        try await store.pool.withTransaction { tx in
            try await tx.query(
                "update user_points set balance = balance + 50, lifetime_earned = lifetime_earned + 50 where user_id = $1::uuid",
                [.uuid(user)])
            try await tx.query(
                """
                insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, request_fingerprint)
                values ($1::uuid, $2, 'grant', 1, 50, 150, 'chat', '')
                """, [.uuid(user), .text("legacy.grant:\(UUID().uuidString)")])
        }
        let spent = try await spend(user, 120)
        XCTAssertEqual(spent.balance, 30)
        XCTAssertEqual(
            spent.attributions,
            [
                LotShare(sourceEventId: purchase, amount: 100),
                LotShare(sourceEventId: CreditLotLedger.openingSource(user), amount: 20),
            ])
    }

    // MARK: Reversing a spend its purchase's refund could not take back

    private func clawBack(_ user: UUID, _ purchase: String) async throws -> ClawbackResult {
        try await store.clawback(
            ClawbackCommand(
                eventId: "refund.\(purchase)", userId: user.uuidString, originalEventId: purchase,
                bizId: "apple_iap:\(purchase)", reason: "OTHER"))
    }

    private func reverseClawback(_ user: UUID, _ purchase: String) async throws -> ReverseClawbackResult {
        try await store.reverseClawback(
            ReverseClawbackCommand(
                eventId: "refund_reversed.\(purchase)", userId: user.uuidString,
                clawbackEventId: "refund.\(purchase)", bizId: "apple_iap:\(purchase)"))
    }

    private func reverseSpend(_ user: UUID, _ spendEventId: String, event: String? = nil) async throws
        -> ReverseSpendResult
    {
        try await store.reverseSpend(
            ReverseSpendCommand(
                eventId: event ?? "chat.undo:\(spendEventId)", userId: user.uuidString,
                spendEventId: spendEventId))
    }

    /// A clawback's overdue still owed: its overdue at clawback time less its settlements.
    private func outstandingOverdue(_ user: UUID, clawback: String) async throws -> Int64 {
        try await store.pool.withConnection {
            try await $0.query(
                """
                select (select (metadata -> 'ext' ->> 'overdue_amount')::bigint from points_ledger where event_id = $2)
                     - coalesce((select sum(amount) from points_ledger
                                 where user_id = $1::uuid and change_type = 'refund_settlement' and related_event_id = $2), 0) as owed
                """, [.uuid(user), .text(clawback)]
            ).first!.int64("owed")
        }
    }

    /// Buy 100, spend 80, refund: the clawback takes the 20 left and 80 are
    /// overdue. Giving the spend back restores the 80 to the refunded
    /// purchase's lot, and they pay the overdue instead of reaching the
    /// balance (before: the user had the refund and 80 credits).
    func testAReversedSpendPaysItsRefundedPurchasesOverdueInsteadOfComingBack() async throws {
        let user = newUser()
        let purchase = try await buy(user, "starter_pack")
        let spent = try await spend(user, 80)
        let clawback = try await clawBack(user, purchase)
        XCTAssertEqual([clawback.creditsDeducted, clawback.overdueAmount, clawback.balance], [20, 80, 0])

        let reversed = try await reverseSpend(user, spent.eventId)
        XCTAssertFalse(reversed.replayed)
        XCTAssertEqual(reversed.creditsRestored, 0, "nothing comes back to the balance")
        XCTAssertEqual(reversed.overdueSettled, 80)
        XCTAssertEqual(reversed.balance, 0)
        let owed = try await outstandingOverdue(user, clawback: "refund.\(purchase)")
        XCTAssertEqual(owed, 0)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 0, lifetimeEarned: 0, lifetimeSpent: 0))
        let consumption = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: purchase)
        XCTAssertEqual(
            consumption, PurchaseConsumption(credited: 100, spent: 0, remaining: 0), "all of it taken back, none spent")
        await expectRefusal(.insufficientCredits) { _ = try await self.spend(user, 1) }
        let page = try await store.listLedger(userId: user.uuidString, pageSize: 10, pageToken: "")
        XCTAssertEqual(
            page.entries.map(\.changeType), ["refund_settlement", "consume_reversal", "refund", "consume", "purchase"])
        let settlement = try XCTUnwrap(page.entries.first)
        XCTAssertEqual([settlement.direction, Int32(settlement.amount), Int32(settlement.balanceAfter)], [-1, 80, 0])
        XCTAssertEqual(settlement.bizType, "payment")
        XCTAssertTrue(settlement.eventId.hasPrefix("refund.settlement:"), settlement.eventId)

        // A replay answers the first result and writes nothing.
        let rows = try await ledgerRows(user)
        let again = try await reverseSpend(user, spent.eventId)
        XCTAssertTrue(again.replayed)
        XCTAssertEqual([again.creditsRestored, again.overdueSettled, again.balance], [0, 80, 0])
        let rowsAfterReplay = try await ledgerRows(user)
        XCTAssertEqual(rowsAfterReplay, rows)
    }

    /// Apple reverses the refund after a spend reversal settled its overdue:
    /// the reversal gives back the clawback's deduction and the settlement,
    /// so the user holds the whole purchase again; the spend reversal still
    /// replays its first result; a new refund cycle takes it all back.
    func testAClawbacksReversalAfterASettlementGivesBackTheDeductionAndTheSettlement() async throws {
        let user = newUser()
        let purchase = try await buy(user, "starter_pack")
        let spent = try await spend(user, 80)
        _ = try await clawBack(user, purchase)
        _ = try await reverseSpend(user, spent.eventId)

        let restored = try await reverseClawback(user, purchase)
        XCTAssertEqual(restored.creditsRestored, 100, "20 deducted + 80 settled")
        XCTAssertEqual(restored.balance, 100)
        let replayed = try await reverseClawback(user, purchase)
        XCTAssertTrue(replayed.replayed)
        XCTAssertEqual(replayed.creditsRestored, 100)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 100, lifetimeEarned: 100, lifetimeSpent: 0))
        let consumption = try await store.purchaseConsumption(userId: user.uuidString, purchaseEventId: purchase)
        XCTAssertEqual(consumption, PurchaseConsumption(credited: 100, spent: 0, remaining: 100))
        let spendReplay = try await reverseSpend(user, spent.eventId)
        XCTAssertTrue(spendReplay.replayed)
        XCTAssertEqual([spendReplay.creditsRestored, spendReplay.overdueSettled, spendReplay.balance], [0, 80, 100])

        let cycle2 = try await store.clawback(
            ClawbackCommand(
                eventId: "refund.\(purchase):2", userId: user.uuidString, originalEventId: purchase,
                bizId: "apple_iap:\(purchase)", reason: "OTHER"))
        XCTAssertEqual([cycle2.creditsDeducted, cycle2.overdueAmount, cycle2.balance], [100, 0, 0])
    }

    /// The clawback reversed first: nothing is owed any more, so the spend
    /// given back afterwards comes back in full.
    func testASpendGivenBackAfterTheClawbacksReversalComesBackInFull() async throws {
        let user = newUser()
        let purchase = try await buy(user, "starter_pack")
        let spent = try await spend(user, 80)
        _ = try await clawBack(user, purchase)
        let restoredClawback = try await reverseClawback(user, purchase)
        XCTAssertEqual([restoredClawback.creditsRestored, restoredClawback.balance], [20, 20])
        let reversed = try await reverseSpend(user, spent.eventId)
        XCTAssertEqual([reversed.creditsRestored, reversed.overdueSettled, reversed.balance], [80, 0, 100])
    }

    /// Only what comes back to the refunded purchase's own lot settles, and
    /// never more than is owed; credits given back to other purchases are
    /// restored as usual. P (100) and Q (210): S1 takes 60 of P; S2 takes
    /// P's last 40 and 200 of Q. Refunding P takes Q's last 10 (P's lot is
    /// empty): 90 overdue. S1 given back settles 60 (30 owed); S2 gives 40
    /// to P's lot (30 settle, 10 stay) and 200 to Q's. Reversing the refund
    /// then gives back 10 + 60 + 30: both purchases whole again.
    func testOnlyCreditsGivenBackToTheRefundedPurchaseSettleAndNeverMoreThanIsOwed() async throws {
        let user = newUser()
        let p = try await buy(user, "starter_pack")
        let s1 = try await spend(user, 60)
        let q = try await buy(user, "popular_pack")
        let s2 = try await spend(user, 240)
        XCTAssertEqual(
            s2.attributions, [LotShare(sourceEventId: p, amount: 40), LotShare(sourceEventId: q, amount: 200)])
        let clawback = try await clawBack(user, p)
        XCTAssertEqual([clawback.creditsDeducted, clawback.overdueAmount, clawback.balance], [10, 90, 0])

        let first = try await reverseSpend(user, s1.eventId)
        XCTAssertEqual([first.creditsRestored, first.overdueSettled, first.balance], [0, 60, 0])
        let owedAfterFirst = try await outstandingOverdue(user, clawback: "refund.\(p)")
        XCTAssertEqual(owedAfterFirst, 30)
        let second = try await reverseSpend(user, s2.eventId)
        XCTAssertEqual([second.creditsRestored, second.overdueSettled, second.balance], [210, 30, 210])
        let owedAfterSecond = try await outstandingOverdue(user, clawback: "refund.\(p)")
        XCTAssertEqual(owedAfterSecond, 0)
        let pLot = try await lot(user, p)
        XCTAssertEqual(pLot?.remaining, 10)
        XCTAssertEqual(pLot?.spent, 0)
        let qLot = try await lot(user, q)
        XCTAssertEqual(qLot?.remaining, 200)

        let reversal = try await reverseClawback(user, p)
        XCTAssertEqual([reversal.creditsRestored, reversal.balance], [100, 310])
        let pRestored = try await lot(user, p)
        XCTAssertEqual(pRestored?.remaining, 100)
        let qRestored = try await lot(user, q)
        XCTAssertEqual(qRestored?.remaining, 210)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 310, lifetimeEarned: 310, lifetimeSpent: 0))
    }

    // MARK: Concurrency

    func testTwoHundredParallelSpendsNeverGoBelowZeroAndSumExactly() async throws {
        let user = newUser()
        _ = try await buy(user, "premium_pack", quantity: 3)  // 1245
        let store = self.store!
        let outcomes = try await withThrowingTaskGroup(of: Int64?.self) { group in
            for index in 0..<200 {
                group.addTask {
                    do {
                        return try await Self.spend(store, user, 7, event: "chat.par:\(user):\(index)").amount
                    } catch let error as PointsError where error.reason == .insufficientCredits {
                        return nil
                    }
                }
            }
            return try await group.reduce(into: [Int64?]()) { $0.append($1) }
        }
        let succeeded = outcomes.compactMap { $0 }
        XCTAssertEqual(succeeded.count, 1245 / 7, "exactly as many 7-credit spends as the balance covers")
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance.balance, 1245 - Int64(succeeded.count) * 7)
        XCTAssertEqual(balance.lifetimeSpent, Int64(succeeded.count) * 7)
    }

    func testTwentyParallelSubmissionsOfOneSpendApplyItOnceAndReplayTheRest() async throws {
        let user = newUser()
        let purchase = try await buy(user, "starter_pack")  // 100
        let store = self.store!
        let event = "chat.same:\(UUID().uuidString)"
        let results = try await withThrowingTaskGroup(of: SpendResult.self) { group in
            for _ in 0..<20 { group.addTask { try await Self.spend(store, user, 30, event: event) } }
            return try await group.reduce(into: [SpendResult]()) { $0.append($1) }
        }
        XCTAssertEqual(results.filter { !$0.replayed }.count, 1, "applied once")
        XCTAssertEqual(Set(results.map(\.ledgerEntryId)).count, 1, "every answer names the one ledger row")
        for result in results {
            XCTAssertEqual(result.balanceAfter, 70)
            XCTAssertEqual(result.attributions, [LotShare(sourceEventId: purchase, amount: 30)])
        }
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance.balance, 70)
        XCTAssertEqual(balance.lifetimeSpent, 30)
    }

    func testSpendsRacingGrantsAndClawbacksKeepEveryInvariant() async throws {
        let user = newUser()
        var purchases: [String] = []
        for _ in 0..<3 { purchases.append(try await buy(user, "popular_pack")) }
        let store = self.store!
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<60 {
                group.addTask { _ = try? await Self.spend(store, user, 11, event: "chat.race:\(user):\(index)") }
            }
            for _ in 0..<3 {
                group.addTask { _ = try await Self.buy(store, user, "starter_pack") }
            }
            for purchase in purchases {
                group.addTask {
                    _ = try await store.clawback(
                        ClawbackCommand(
                            eventId: "refund.\(purchase)", userId: user.uuidString,
                            originalEventId: purchase, bizId: UUID().uuidString, reason: "OTHER"))
                }
            }
            try await group.waitForAll()
        }
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertGreaterThanOrEqual(balance.balance, 0)
    }

    // MARK: Over gRPC

    func testSpendOverGRPC() async throws {
        let url = try TestDatabases.url("POINTS_DATABASE_URL")
        let service = try await offPool {
            try ServiceProcess(
                executable: "PointsService",
                environment: ["DATABASE_URL": url, "LOG_LEVEL": "warning", "INTERNAL_AUTH": "off"])
        }
        let client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: service.port)])
        let user = newUser()
        let purchase = try await buy(user, "starter_pack")
        var request = Contracts.SpendRequest()
        request.eventId = "chat.grpc:\(UUID().uuidString)"
        request.userId = user.uuidString
        request.amount = 25
        request.bizType = "chat"
        request.bizId = "s"
        request.metadataJson = #"{"feature":"summary"}"#
        let response = try await client.call(PointsMethods.spend, request, timeout: .seconds(10))
        XCTAssertEqual(response.balance, 75)
        XCTAssertEqual(response.attributions.map(\.sourceEventId), [purchase])
        request.amount = 1_000
        request.eventId = "chat.grpc:\(UUID().uuidString)"
        do {
            _ = try await client.call(PointsMethods.spend, request, timeout: .seconds(10))
            XCTFail("expected INSUFFICIENT_CREDITS")
        } catch let error as RPCError {
            XCTAssertEqual(error.code, .failedPrecondition)
            XCTAssertEqual(ErrorReason.reason(of: error), "INSUFFICIENT_CREDITS")
        }
        var reverse = Contracts.ReverseSpendRequest()
        reverse.eventId = "chat.grpc.refund:\(UUID().uuidString)"
        reverse.userId = user.uuidString
        reverse.spendEventId = response.eventId
        let restored = try await client.call(PointsMethods.reverseSpend, reverse, timeout: .seconds(10))
        XCTAssertEqual(restored.creditsRestored, 25)
        XCTAssertEqual(restored.balance, 100)
        var consumption = Contracts.GetPurchaseConsumptionRequest()
        consumption.userId = user.uuidString
        consumption.purchaseEventId = purchase
        _ = try await spend(user, 40)
        let lot = try await client.call(PointsMethods.getPurchaseConsumption, consumption, timeout: .seconds(10))
        XCTAssertEqual(
            [lot.found ? 1 : 0, lot.credited, lot.spent, lot.remaining, lot.clawedBack], [1, 100, 40, 60, 0])
        consumption.purchaseEventId = "payment.apple_iap:1"
        let unknown = try await client.call(PointsMethods.getPurchaseConsumption, consumption, timeout: .seconds(10))
        XCTAssertFalse(unknown.found)
        await client.close()
        _ = try await offPool { service.stop() }
    }
}
