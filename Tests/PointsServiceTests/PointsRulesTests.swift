import Contracts
@testable import PointsService
import TestSupport
import XCTest

/// The pure rules: no database.
final class PointsRulesTests: XCTestCase {
    private func assertValidationFailure(
        _ field: String, file: StaticString = #filePath, line: UInt = #line,
        _ body: () throws -> Void
    ) {
        do {
            try body()
            XCTFail("expected VALIDATION_FAILED for \(field)", file: file, line: line)
        } catch {
            guard let error = error as? PointsError, case .validationFailed(let failedField, _) = error else {
                return XCTFail("expected VALIDATION_FAILED, got \(error)", file: file, line: line)
            }
            XCTAssertEqual(failedField, field, file: file, line: line)
            XCTAssertEqual(error.reason, "VALIDATION_FAILED", file: file, line: line)
        }
    }

    func testUserIdMustBeAUUID() throws {
        XCTAssertEqual(
            try PointsValidation.userId("7C4C7A82-2F6F-4E70-B57A-8B0A7F2E9B72").uuidString,
            "7C4C7A82-2F6F-4E70-B57A-8B0A7F2E9B72")
        XCTAssertNoThrow(try PointsValidation.userId("7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"))
        for bad in [
            "", "not-a-uuid", "7c4c7a822f6f4e70b57a8b0a7f2e9b72", " 7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72",
            "{7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72}",
        ] {
            assertValidationFailure("user_id") { _ = try PointsValidation.userId(bad) }
        }
    }

    func testEventIdFormatAndLength() throws {
        XCTAssertEqual(
            try PointsValidation.eventId("payment.apple_iap:2000000847061981"), "payment.apple_iap:2000000847061981")
        XCTAssertNoThrow(try PointsValidation.eventId(String(repeating: "a", count: 200)))
        for bad in [
            "", String(repeating: "a", count: 201), "has space", "tab\there", "ünïcode", "semi;colon", "new\nline",
            "slash/x", "nul\u{0}",
        ] {
            assertValidationFailure("event_id") { _ = try PointsValidation.eventId(bad) }
        }
    }

    func testEmailHashIsSixtyFourLowerHexDigits() {
        XCTAssertNoThrow(try PointsValidation.emailHash(String(repeating: "ab", count: 32)))
        for bad in [
            "", String(repeating: "AB", count: 32), String(repeating: "a", count: 63),
            String(repeating: "g", count: 64),
        ] {
            assertValidationFailure("email_hash") { _ = try PointsValidation.emailHash(bad) }
        }
    }

    func testTextRejectsControlsOversizeAndMissing() {
        XCTAssertEqual(
            try PointsValidation.text("CUSTOMER_REQUEST ✓", field: "reason", maxBytes: 100, required: true),
            "CUSTOMER_REQUEST ✓")
        XCTAssertEqual(try PointsValidation.text("", field: "reason", maxBytes: 100, required: false), "")
        assertValidationFailure("reason") {
            _ = try PointsValidation.text("", field: "reason", maxBytes: 100, required: true)
        }
        assertValidationFailure("reason") {
            _ = try PointsValidation.text(
                String(repeating: "x", count: 101), field: "reason", maxBytes: 100, required: true)
        }
        // Multi-byte characters count by bytes: 34 three-byte characters are 102 bytes.
        assertValidationFailure("reason") {
            _ = try PointsValidation.text(
                String(repeating: "界", count: 34), field: "reason", maxBytes: 100, required: true)
        }
        for control in ["a\u{0}b", "a\u{1F}b", "line\nbreak", "del\u{7F}", "c1\u{85}", "bidi\u{202E}", "sep\u{2028}"] {
            assertValidationFailure("reason") {
                _ = try PointsValidation.text(control, field: "reason", maxBytes: 100, required: true)
            }
        }
    }

    func testTextBytesMustBeValidUTF8() throws {
        XCTAssertEqual(
            try PointsValidation.text(bytes: Array("héllo".utf8), field: "biz_id", maxBytes: 200, required: true),
            "héllo")
        let invalidSequences: [[UInt8]] = [
            [0xFF],  // never valid
            [0xC3],  // truncated two-byte sequence
            [0xC0, 0xAF],  // overlong "/"
            [0xED, 0xA0, 0x80],  // UTF-16 surrogate
            [0xF4, 0x90, 0x80, 0x80],  // beyond U+10FFFF
            [0x61, 0x80, 0x62],  // stray continuation byte
        ]
        for bytes in invalidSequences {
            assertValidationFailure("biz_id") {
                _ = try PointsValidation.text(bytes: bytes, field: "biz_id", maxBytes: 200, required: true)
            }
        }
        assertValidationFailure("biz_id") {
            _ = try PointsValidation.text(
                bytes: Array(repeating: 0x61, count: 201), field: "biz_id", maxBytes: 200, required: true)
        }
    }

    func testPageSizeDefaultsAndBounds() throws {
        XCTAssertEqual(try PointsValidation.pageSize(0), 50)
        XCTAssertEqual(try PointsValidation.pageSize(1), 1)
        XCTAssertEqual(try PointsValidation.pageSize(200), 200)
        for bad: Int32 in [-1, 201, Int32.max, Int32.min] {
            assertValidationFailure("page_size") { _ = try PointsValidation.pageSize(bad) }
        }
    }

    func testClawbackPlanDeductsAtMostTheBalance() throws {
        let full = try ClawbackPlan.make(balance: 300, lifetimeEarned: 310, amount: 100)
        XCTAssertEqual(
            full, ClawbackPlan(creditsDeducted: 100, overdueAmount: 0, balanceAfter: 200, lifetimeEarnedAfter: 210))
        XCTAssertFalse(full.isPartial)

        let partial = try ClawbackPlan.make(balance: 40, lifetimeEarned: 100, amount: 100)
        XCTAssertEqual(
            partial, ClawbackPlan(creditsDeducted: 40, overdueAmount: 60, balanceAfter: 0, lifetimeEarnedAfter: 60))
        XCTAssertTrue(partial.isPartial)

        let empty = try ClawbackPlan.make(balance: 0, lifetimeEarned: 100, amount: 100)
        XCTAssertEqual(
            empty, ClawbackPlan(creditsDeducted: 0, overdueAmount: 100, balanceAfter: 0, lifetimeEarnedAfter: 100))

        assertValidationFailure("amount") { _ = try ClawbackPlan.make(balance: 10, lifetimeEarned: 10, amount: -1) }
        XCTAssertThrowsError(try ClawbackPlan.make(balance: -1, lifetimeEarned: 10, amount: 1))
    }

    func testClawbackPlanNeverGoesNegativeForAnyInput() throws {
        for balance: Int64 in [0, 1, 59, 60, 61, 1_000] {
            for credits: Int64 in [0, 1, 60, 415, 2_000] {
                let plan = try ClawbackPlan.make(balance: balance, lifetimeEarned: balance, amount: credits)
                XCTAssertGreaterThanOrEqual(plan.balanceAfter, 0)
                XCTAssertGreaterThanOrEqual(plan.lifetimeEarnedAfter, 0)
                XCTAssertEqual(plan.creditsDeducted + plan.overdueAmount, credits)
                XCTAssertEqual(plan.balanceAfter, balance - plan.creditsDeducted)
            }
        }
    }

    func testClawbackAmountIsAllOrPartOfThePurchase() throws {
        XCTAssertEqual(try ClawbackPlan.amountToTakeBack(requested: 0, purchaseCredits: 210), 210, "0 means all")
        XCTAssertEqual(try ClawbackPlan.amountToTakeBack(requested: 1, purchaseCredits: 210), 1)
        XCTAssertEqual(try ClawbackPlan.amountToTakeBack(requested: 70, purchaseCredits: 210), 70)
        XCTAssertEqual(try ClawbackPlan.amountToTakeBack(requested: 210, purchaseCredits: 210), 210)
        for bad: Int64 in [-1, 211, Int64.max, Int64.min] {
            assertValidationFailure("amount") {
                _ = try ClawbackPlan.amountToTakeBack(requested: bad, purchaseCredits: 210)
            }
        }
        XCTAssertThrowsError(try ClawbackPlan.amountToTakeBack(requested: 0, purchaseCredits: -1))
        // A prorated refund deducts at most the balance too.
        XCTAssertEqual(
            try ClawbackPlan.make(balance: 30, lifetimeEarned: 100, amount: 70),
            ClawbackPlan(creditsDeducted: 30, overdueAmount: 40, balanceAfter: 0, lifetimeEarnedAfter: 70))
    }

    func testClawbackCommandValidatesTheAmountAndFingerprintsItOnlyWhenNotAll() throws {
        let user = UUID()
        var command = ClawbackCommand(
            eventId: "refund.apple_iap:1", userId: user.uuidString, originalEventId: "payment.apple_iap:1",
            bizId: "b", reason: "CUSTOMER_REQUEST")
        // The fingerprint a clawback was stored with before amount existed.
        let storedBeforeAmount = RequestFingerprint.make(
            kind: "clawback.v1", fields: [user.uuidString.lowercased(), "payment.apple_iap:1", "b", "CUSTOMER_REQUEST"])
        XCTAssertEqual(try command.validated().fingerprint(purchaseCredits: 210), storedBeforeAmount)
        XCTAssertEqual(try command.validated().fingerprint(purchaseCredits: nil), storedBeforeAmount)
        XCTAssertEqual(try command.validated().amount, 0)
        command.amount = 210
        XCTAssertEqual(
            try command.validated().fingerprint(purchaseCredits: 210), storedBeforeAmount,
            "all of 210 is the same request as 0")
        XCTAssertNotEqual(try command.validated().fingerprint(purchaseCredits: 420), storedBeforeAmount)
        command.amount = 70
        XCTAssertEqual(try command.validated().amount, 70)
        let seventy = try command.validated().fingerprint(purchaseCredits: 210)
        XCTAssertNotEqual(seventy, storedBeforeAmount)
        command.amount = 71
        XCTAssertNotEqual(try command.validated().fingerprint(purchaseCredits: 210), seventy)
        for bad: Int64 in [-1, Int64.min, PointsLimits.balanceMax + 1, Int64.max] {
            command.amount = bad
            assertValidationFailure("amount") { _ = try command.validated() }
        }
    }

    func testAdjustmentPlanMovesBalanceAndEarnedTogetherAndNeverBelowZero() throws {
        XCTAssertEqual(
            try AdjustmentPlan.make(balance: 40, lifetimeEarned: 100, amount: 25),
            AdjustmentPlan(balanceBefore: 40, balanceAfter: 65, lifetimeEarnedAfter: 125))
        XCTAssertEqual(
            try AdjustmentPlan.make(balance: 40, lifetimeEarned: 100, amount: -40),
            AdjustmentPlan(balanceBefore: 40, balanceAfter: 0, lifetimeEarnedAfter: 60))
        assertValidationFailure("amount") { _ = try AdjustmentPlan.make(balance: 40, lifetimeEarned: 100, amount: -41) }
        assertValidationFailure("amount") { _ = try AdjustmentPlan.make(balance: 0, lifetimeEarned: 0, amount: -1) }
        assertValidationFailure("amount") { _ = try AdjustmentPlan.make(balance: 40, lifetimeEarned: 100, amount: 0) }
        assertValidationFailure("amount") {
            _ = try AdjustmentPlan.make(balance: 0, lifetimeEarned: 0, amount: Int64.min)
        }
        assertValidationFailure("amount") {
            _ = try AdjustmentPlan.make(balance: 0, lifetimeEarned: 0, amount: Int64.max)
        }
        assertValidationFailure("amount") {
            _ = try AdjustmentPlan.make(
                balance: PointsLimits.balanceMax - 5, lifetimeEarned: PointsLimits.balanceMax - 5, amount: 6)
        }
        XCTAssertEqual(
            try AdjustmentPlan.make(
                balance: PointsLimits.balanceMax - 5, lifetimeEarned: PointsLimits.balanceMax - 5, amount: 5
            ).balanceAfter,
            PointsLimits.balanceMax)
        XCTAssertThrowsError(try AdjustmentPlan.make(balance: -1, lifetimeEarned: 0, amount: 1))
    }

    func testAdjustCommandValidatesEachFieldAndDerivesAStableEventId() throws {
        let user = UUID()
        let good = AdjustCommand(
            userId: user.uuidString, amount: -50, reason: "duplicate charge, ticket 4711", operatorName: "alice")
        let validated = try good.validated()
        XCTAssertEqual(validated.amount, -50)
        XCTAssertTrue(validated.eventId.hasPrefix("adjust:"))
        XCTAssertEqual(validated.eventId.utf8.count, "adjust:".utf8.count + 32)
        XCTAssertNoThrow(try PointsValidation.eventId(validated.eventId))
        XCTAssertEqual(try good.validated().eventId, validated.eventId, "deterministic")
        XCTAssertEqual(validated.eventId, "adjust:" + validated.fingerprint.prefix(32))
        var changes: [AdjustCommand] = []
        for change in [
            { (c: inout AdjustCommand) in c.userId = UUID().uuidString }, { $0.amount = 50 }, { $0.amount = -51 },
            { $0.reason = "other" }, { $0.operatorName = "bob" },
        ] {
            var command = good
            change(&command)
            changes.append(command)
        }
        let derived = try Set(changes.map { try $0.validated().eventId })
        XCTAssertEqual(derived.count, changes.count)
        XCTAssertFalse(derived.contains(validated.eventId), "every field is part of the derived id")
        var explicit = good
        explicit.eventId = "support.ticket:4711"
        XCTAssertEqual(try explicit.validated().eventId, "support.ticket:4711")
        XCTAssertEqual(
            try explicit.validated().fingerprint, validated.fingerprint,
            "the fingerprint is the content, whatever the id")

        let cases: [(String, (inout AdjustCommand) -> Void)] = [
            ("user_id", { $0.userId = "nope" }),
            ("amount", { $0.amount = 0 }),
            ("amount", { $0.amount = PointsLimits.balanceMax + 1 }),
            ("amount", { $0.amount = Int64.min }),
            ("reason", { $0.reason = "" }),
            ("reason", { $0.reason = "two\nlines" }),
            ("reason", { $0.reason = String(repeating: "r", count: PointsLimits.adjustReasonBytesMax + 1) }),
            ("operator", { $0.operatorName = "" }),
            ("operator", { $0.operatorName = "bidi\u{202E}" }),
            ("operator", { $0.operatorName = String(repeating: "o", count: PointsLimits.operatorNameBytesMax + 1) }),
            ("event_id", { $0.eventId = "has space" }),
            ("event_id", { $0.eventId = String(repeating: "e", count: PointsLimits.eventIdBytesMax + 1) }),
        ]
        for (field, change) in cases {
            var command = good
            change(&command)
            assertValidationFailure(field) { _ = try command.validated() }
        }
    }

    func testReversalPlanRestoresExactlyTheDeduction() throws {
        XCTAssertEqual(
            try ReversalPlan.make(balance: 0, lifetimeEarned: 60, clawbackDeducted: 40),
            ReversalPlan(creditsRestored: 40, balanceAfter: 40, lifetimeEarnedAfter: 100))
        XCTAssertEqual(try ReversalPlan.make(balance: 5, lifetimeEarned: 5, clawbackDeducted: 0).creditsRestored, 0)
        XCTAssertThrowsError(try ReversalPlan.make(balance: 0, lifetimeEarned: 0, clawbackDeducted: -1))
    }

    func testAClawbacksReversalAlsoGivesBackWhatSettlementsPaidOfItsOverdue() throws {
        XCTAssertEqual(
            try ReversalPlan.make(balance: 0, lifetimeEarned: 0, clawbackDeducted: 20, overdueSettled: 80),
            ReversalPlan(creditsRestored: 100, balanceAfter: 100, lifetimeEarnedAfter: 100, overdueSettledRestored: 80))
        XCTAssertThrowsError(
            try ReversalPlan.make(balance: 0, lifetimeEarned: 0, clawbackDeducted: 20, overdueSettled: -1))
        XCTAssertThrowsError(
            try ReversalPlan.make(
                balance: PointsLimits.balanceMax - 99, lifetimeEarned: 0, clawbackDeducted: 20,
                overdueSettled: 80))
    }

    func testOnlyCreditsGivenBackToAnOwedPurchasesLotSettleUpToWhatIsOwed() {
        let owed = [
            OwedClawback(
                clawbackEventId: "refund.apple_iap:1", purchaseEventId: "payment.apple_iap:1", bizId: "b1",
                outstanding: 30),
            OwedClawback(
                clawbackEventId: "refund.apple_iap:2", purchaseEventId: "payment.apple_iap:2", bizId: "b2",
                outstanding: 0),
        ]
        let restored = [
            LotShare(sourceEventId: "payment.apple_iap:1", amount: 40),
            LotShare(sourceEventId: "payment.apple_iap:2", amount: 5),
            LotShare(sourceEventId: "payment.apple_iap:3", amount: 200),
        ]
        XCTAssertEqual(
            OverdueSettlement.plan(restored: restored, owed: owed),
            [
                OverdueSettlement(
                    clawbackEventId: "refund.apple_iap:1", purchaseEventId: "payment.apple_iap:1", bizId: "b1",
                    outstandingBefore: 30, amount: 30)
            ])
        XCTAssertEqual(
            OverdueSettlement.plan(restored: [LotShare(sourceEventId: "payment.apple_iap:1", amount: 12)], owed: owed)
                .map(\.amount),
            [12], "less than is owed: all of it settles")
        XCTAssertEqual(OverdueSettlement.plan(restored: restored, owed: []), [])
        let id = OverdueSettlement.eventId(spendReversalEventId: "chat.undo:1", clawbackEventId: "refund.apple_iap:1")
        XCTAssertTrue(id.hasPrefix(LedgerEventNamespace.refund), "in a namespace no caller may use")
        XCTAssertEqual(id.utf8.count, OverdueSettlement.eventIdPrefix.utf8.count + 64)
        XCTAssertNoThrow(try PointsValidation.eventId(id))
        XCTAssertNotEqual(
            id, OverdueSettlement.eventId(spendReversalEventId: "chat.undo:2", clawbackEventId: "refund.apple_iap:1"))
        XCTAssertNotEqual(
            id, OverdueSettlement.eventId(spendReversalEventId: "chat.undo:1", clawbackEventId: "refund.apple_iap:1:2"))
    }

    /// A refusal at the balance ceiling depends on the account: FAILED_PRECONDITION.
    /// Its reason must be one PaymentsService's saga treats as needing an
    /// operator (alerted, retried with backoff): a permanent reason. An
    /// unknown one would be retried silently (`PointsLedger.call`).
    func testTheBalanceCeilingIsAFailedPreconditionTheSagaAlertsOn() {
        let error = PointsError.balanceLimitReached(credits: 100)
        XCTAssertEqual(error.grpcCodeName, "FAILED_PRECONDITION")
        XCTAssertEqual(error.grpcStatusCode, 9)
        XCTAssertTrue(ErrorReason.all.contains(error.reason), "a reason PaymentsService knows")
        XCTAssertTrue(error.reason.isPermanent, "PaymentsService alerts on it and keeps the step owed")
        XCTAssertFalse(error.isTransient)
        XCTAssertTrue(LedgerAudit.isRefusal(error), "a decision on the account: audited")
        XCTAssertThrowsError(
            try ReversalPlan.make(balance: PointsLimits.balanceMax - 39, lifetimeEarned: 0, clawbackDeducted: 40)
        ) { thrown in
            XCTAssertEqual(thrown as? PointsError, .balanceLimitReached(credits: 40))
        }
    }

    func testWhatAClawbackTakesOfOtherLotsCountsAsSpentUpToWhatWasSpentOfItsPurchase() {
        let taken = [
            LotShare(sourceEventId: "p1", amount: 20), LotShare(sourceEventId: "p0", amount: 30),
            LotShare(sourceEventId: "p2", amount: 50),
        ]
        XCTAssertEqual(
            CreditLots.spentElsewhere(taken: taken, purchase: "p1", purchaseSpent: 60),
            [LotShare(sourceEventId: "p0", amount: 30), LotShare(sourceEventId: "p2", amount: 30)])
        XCTAssertEqual(
            CreditLots.spentElsewhere(taken: taken, purchase: "p1", purchaseSpent: 500),
            [LotShare(sourceEventId: "p0", amount: 30), LotShare(sourceEventId: "p2", amount: 50)])
        XCTAssertEqual(CreditLots.spentElsewhere(taken: taken, purchase: "p1", purchaseSpent: 0), [])
        XCTAssertEqual(
            CreditLots.spentElsewhere(
                taken: [LotShare(sourceEventId: "p1", amount: 20)], purchase: "p1", purchaseSpent: 80), [],
            "its own lot is not elsewhere")
    }

    func testReplayDecision() {
        XCTAssertEqual(ReplayDecision.decide(stored: nil, expectedChangeType: "purchase", fingerprint: "f"), .apply)
        XCTAssertEqual(
            ReplayDecision.decide(stored: ("purchase", "f"), expectedChangeType: "purchase", fingerprint: "f"), .replay)
        guard
            case .conflict = ReplayDecision.decide(
                stored: ("purchase", "g"), expectedChangeType: "purchase", fingerprint: "f")
        else {
            return XCTFail("different content must conflict")
        }
        guard
            case .conflict = ReplayDecision.decide(
                stored: ("refund", "f"), expectedChangeType: "purchase", fingerprint: "f")
        else {
            return XCTFail("an id used by another kind of entry must conflict")
        }
    }

    func testFingerprintSeparatesFields() {
        let a = RequestFingerprint.make(kind: "grant.v1", fields: ["ab", "c"])
        XCTAssertEqual(a.utf8.count, 64)
        XCTAssertEqual(a, RequestFingerprint.make(kind: "grant.v1", fields: ["ab", "c"]))
        XCTAssertNotEqual(a, RequestFingerprint.make(kind: "grant.v1", fields: ["a", "bc"]))
        XCTAssertNotEqual(a, RequestFingerprint.make(kind: "clawback.v1", fields: ["ab", "c"]))
    }

    func testLedgerPageTokenRoundTripsAndRejectsForgeries() throws {
        XCTAssertNil(try LedgerPageToken.decode(""))
        for sequence: Int64 in [1, 42, Int64.max] {
            XCTAssertEqual(try LedgerPageToken.decode(LedgerPageToken.encode(lastSequence: sequence)), sequence)
        }
        for forged in ["garbage", "djE6", "djE6LTE", "djI6NQ", String(repeating: "A", count: 65), "%%%"] {
            assertValidationFailure("page_token") { _ = try LedgerPageToken.decode(forged) }
        }
    }

    func testErrorsMapToStableReasonsAndGRPCCodes() {
        let table: [(PointsError, String, String, Int)] = [
            (.validationFailed(field: "f", problem: "p"), "VALIDATION_FAILED", "INVALID_ARGUMENT", 3),
            (.productNotFound(productCode: "x"), "PRODUCT_NOT_FOUND", "NOT_FOUND", 5),
            (.eventNotFound(eventId: "e"), "EVENT_NOT_FOUND", "NOT_FOUND", 5),
            (.starterPackIneligible, "STARTER_PACK_INELIGIBLE", "FAILED_PRECONDITION", 9),
            (.eventConflict(eventId: "e", problem: "p"), "EVENT_CONFLICT", "ALREADY_EXISTS", 6),
            (.databaseUnavailable(detail: "d"), "DATABASE_UNAVAILABLE", "UNAVAILABLE", 14),
            (.internalFailure(detail: "d"), "INTERNAL", "INTERNAL", 13),
        ]
        for (error, reason, codeName, code) in table {
            XCTAssertEqual(error.reason.rawValue, reason)
            XCTAssertEqual(error.grpcCodeName, codeName)
            XCTAssertEqual(error.grpcStatusCode, code)
            XCTAssertEqual(error.isTransient, reason == "DATABASE_UNAVAILABLE")
        }
    }

    func testGrantQuantityDefaultsBoundsAndMultipliesTheCredits() throws {
        let catalog = try PackageCatalog.load(path: ShippedConfiguration.packagesFile)
        let good = GrantRequest(
            eventId: "payment.apple_iap:1", userId: UUID().uuidString, emailHash: "",
            productCode: "popular_pack", bizId: UUID().uuidString)
        for (quantity, expected): (Int32, Int32) in [(0, 1), (1, 1), (2, 2), (10, 10)] {
            var command = good
            command.quantity = quantity
            let validated = try ValidatedGrant(request: command, catalog: catalog)
            XCTAssertEqual(validated.quantity, expected)
            XCTAssertEqual(validated.credits, 210 * Int64(expected))
            XCTAssertEqual(validated.package.credits, 210)
        }
        for bad: Int32 in [-1, 11, 100, Int32.max, Int32.min] {
            var command = good
            command.quantity = bad
            assertValidationFailure("quantity") { _ = try ValidatedGrant(request: command, catalog: catalog) }
        }
        // A package near the per-package ceiling times the largest quantity stays far below balanceMax.
        let big = CreditPackage(
            productCode: "big", appStoreProductId: "com.x.big", kind: .regular, credits: PointsLimits.packageCreditsMax,
            displayName: "Big", referencePrice: "1.00", referenceCurrency: "USD", sortOrder: 1)
        XCTAssertEqual(
            try ValidatedGrant.totalCredits(package: big, quantity: PointsLimits.quantityMax),
            PointsLimits.packageCreditsMax * 10)
        let absurd = CreditPackage(
            productCode: "absurd", appStoreProductId: "com.x.absurd", kind: .regular, credits: Int64.max / 2,
            displayName: "Absurd", referencePrice: "1.00", referenceCurrency: "USD", sortOrder: 1)
        assertValidationFailure("quantity") { _ = try ValidatedGrant.totalCredits(package: absurd, quantity: 3) }
    }

    func testGrantFingerprintCoversQuantityButMatchesGrantsStoredBeforeIt() throws {
        let catalog = try PackageCatalog.load(path: ShippedConfiguration.packagesFile)
        let user = UUID()
        let source = PurchaseSource(
            source: "apple_iap", platform: "ios", transactionId: "2000000847061981",
            originalTransactionId: "2000000847061981", environment: "Sandbox",
            appStoreProductId: "com.meeyao.qianwen.popular_pack", paymentRecordId: "p")
        var command = GrantRequest(
            eventId: "payment.apple_iap:2000000847061981", userId: user.uuidString, emailHash: "",
            productCode: "popular_pack", bizId: "b", source: source)
        // The fingerprint a grant was stored with before quantity existed.
        let storedBeforeQuantity = RequestFingerprint.make(
            kind: "grant.v1",
            fields: [user.uuidString.lowercased(), "popular_pack", "b", ""] + source.namedFields.map(\.value))
        XCTAssertEqual(
            try ValidatedGrant(request: command, catalog: catalog).fingerprint, storedBeforeQuantity,
            "quantity 0 (unset)")
        command.quantity = 1
        XCTAssertEqual(
            try ValidatedGrant(request: command, catalog: catalog).fingerprint, storedBeforeQuantity, "quantity 1")
        var fingerprints: Set<String> = [storedBeforeQuantity]
        for quantity: Int32 in 2...PointsLimits.quantityMax {
            command.quantity = quantity
            XCTAssertTrue(
                fingerprints.insert(try ValidatedGrant(request: command, catalog: catalog).fingerprint).inserted,
                "quantity \(quantity)")
        }
    }

    func testGrantRequestValidation() throws {
        let catalog = try PackageCatalog.load(path: ShippedConfiguration.packagesFile)
        let hash = String(repeating: "a", count: 64)
        let good = GrantRequest(
            eventId: "payment.apple_iap:1", userId: UUID().uuidString, emailHash: hash,
            productCode: "new_user_pack", bizId: UUID().uuidString,
            source: PurchaseSource(appStoreProductId: "com.meeyao.qianwen.new_user_pack"),
            emailMasked: "a***@example.com")
        let validated = try ValidatedGrant(request: good, catalog: catalog)
        XCTAssertEqual(validated.package.credits, 60)

        var unknown = good
        unknown.productCode = "free_pack"
        XCTAssertThrowsError(try ValidatedGrant(request: unknown, catalog: catalog)) {
            XCTAssertEqual(($0 as? PointsError)?.reason, "PRODUCT_NOT_FOUND")
        }

        var mismatched = good
        mismatched.source?.appStoreProductId = "com.meeyao.qianwen.premium_pack"
        assertValidationFailure("source.app_store_product_id") {
            _ = try ValidatedGrant(request: mismatched, catalog: catalog)
        }

        var noHash = good
        noHash.emailHash = ""
        assertValidationFailure("email_hash") { _ = try ValidatedGrant(request: noHash, catalog: catalog) }

        var unmasked = good
        unmasked.emailMasked = "alice@example.com"
        assertValidationFailure("email_masked") { _ = try ValidatedGrant(request: unmasked, catalog: catalog) }

        var regularWithoutHash = good
        regularWithoutHash.productCode = "starter_pack"
        regularWithoutHash.source?.appStoreProductId = ""
        regularWithoutHash.emailHash = ""
        XCTAssertNil(try ValidatedGrant(request: regularWithoutHash, catalog: catalog).emailHash)
    }
}
