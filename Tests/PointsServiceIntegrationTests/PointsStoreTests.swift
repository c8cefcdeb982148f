import Contracts
import Foundation
@testable import PointsService
import PostgresClient
import TestSupport
import XCTest

/// Every PointsStore rule against the real database; the ledger invariants
/// are checked for every user a test touched, after every test.
final class PointsStoreTests: PointsStoreTestCase {
    // MARK: Helpers

    private func grantRequest(
        user: UUID, product: String = "starter_pack", eventId: String? = nil,
        emailHash: String? = nil
    ) -> GrantRequest {
        let transactionId = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
        return GrantRequest(
            eventId: eventId ?? "payment.apple_iap:\(transactionId)", userId: user.uuidString,
            emailHash: emailHash ?? PointsTestDatabase.randomEmailHash(), productCode: product,
            bizId: UUID().uuidString,
            source: PurchaseSource(
                source: "apple_iap", platform: "ios", transactionId: transactionId,
                originalTransactionId: transactionId,
                environment: "Sandbox", appStoreProductId: "com.meeyao.qianwen.\(product)",
                paymentRecordId: UUID().uuidString),
            emailMasked: "a***@example.com")
    }

    private func clawbackCommand(user: UUID, purchase: String, eventId: String? = nil, amount: Int64 = 0)
        -> ClawbackCommand
    {
        ClawbackCommand(
            eventId: eventId ?? "refund." + purchase, userId: user.uuidString, originalEventId: purchase,
            bizId: UUID().uuidString, reason: "CUSTOMER_REQUEST", amount: amount)
    }

    private func ext(_ entry: LedgerRecord) throws -> [String: Any] {
        try XCTUnwrap(
            (try JSONSerialization.jsonObject(with: Data(entry.metadataJSON.utf8)) as? [String: Any])?["ext"]
                as? [String: Any])
    }

    private func newestEntry(_ user: UUID) async throws -> LedgerRecord {
        let page = try await store.listLedger(userId: user.uuidString, pageSize: 1, pageToken: "")
        return try XCTUnwrap(page.entries.first)
    }

    private func newestExt(_ user: UUID) async throws -> [String: Any] {
        try ext(try await newestEntry(user))
    }

    private func expectPointsError<T>(
        _ reason: String, file: StaticString = #filePath, line: UInt = #line,
        _ body: () async throws -> T
    ) async {
        do {
            _ = try await body()
            XCTFail("expected \(reason)", file: file, line: line)
        } catch let error as PointsError {
            XCTAssertEqual(error.reason.rawValue, reason, "\(error)", file: file, line: line)
        } catch {
            XCTFail("expected PointsError \(reason), got \(error)", file: file, line: line)
        }
    }

    private func ledgerCount(eventId: String) async throws -> Int64 {
        try await store.pool.withConnection { connection in
            try await connection.query("select count(*) as c from points_ledger where event_id = $1", [.text(eventId)])
                .first!.int64("c")
        }
    }

    private func ledgerCount(user: UUID) async throws -> Int64 {
        try await store.pool.withConnection { connection in
            try await connection.query(
                "select count(*) as c from points_ledger where user_id = $1::uuid", [.uuid(user)]
            ).first!.int64("c")
        }
    }

    // MARK: Grant

    func testGrantCreditsTheCatalogAmountAndRecordsThePurchase() async throws {
        let user = newUser()
        let command = grantRequest(user: user, product: "popular_pack")
        let result = try await store.grant(command)
        XCTAssertFalse(result.replayed)
        XCTAssertEqual(result.creditsAdded, 210)
        XCTAssertEqual(result.balanceAfter, 210)
        XCTAssertEqual(result.balance, 210)

        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 210, lifetimeEarned: 210, lifetimeSpent: 0))

        let page = try await store.listLedger(userId: user.uuidString, pageSize: 0, pageToken: "")
        let entry = try XCTUnwrap(page.entries.first)
        XCTAssertEqual(entry.id, result.ledgerEntryId)
        XCTAssertEqual(entry.eventId, command.eventId)
        XCTAssertEqual(entry.changeType, "purchase")
        XCTAssertEqual(entry.direction, 1)
        XCTAssertEqual(entry.bizType, "payment")
        XCTAssertEqual(entry.bizId, command.bizId)
        let metadata = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(entry.metadataJSON.utf8)) as? [String: Any])
        let ext = try XCTUnwrap(metadata["ext"] as? [String: Any])
        XCTAssertEqual(ext["source"] as? String, "apple_iap")
        XCTAssertEqual(ext["product_code"] as? String, "popular_pack")
        XCTAssertEqual(ext["app_store_product_id"] as? String, "com.meeyao.qianwen.popular_pack")
        XCTAssertEqual(ext["transaction_id"] as? String, command.source?.transactionId)
        XCTAssertEqual(ext["environment"] as? String, "Sandbox")
        XCTAssertEqual(ext["apple_iap_transaction_id"] as? String, command.source?.paymentRecordId)
        XCTAssertGreaterThan(entry.createdAtUnixMilliseconds, 1_700_000_000_000)
    }

    func testReplayedGrantReturnsTheFirstResultAndChangesNothing() async throws {
        let user = newUser()
        let command = grantRequest(user: user)
        let first = try await store.grant(command)
        let other = try await store.grant(grantRequest(user: user, product: "premium_pack"))
        let replay = try await store.grant(command)
        XCTAssertTrue(replay.replayed)
        XCTAssertEqual(replay.creditsAdded, first.creditsAdded)
        XCTAssertEqual(replay.balanceAfter, first.balanceAfter)
        XCTAssertEqual(replay.ledgerEntryId, first.ledgerEntryId)
        XCTAssertEqual(replay.balance, other.balance, "balance is the balance now")
        let count = try await ledgerCount(eventId: command.eventId)
        XCTAssertEqual(count, 1)
        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 515)
    }

    func testSameEventIdWithDifferentContentIsAConflict() async throws {
        let user = newUser()
        let command = grantRequest(user: user)
        _ = try await store.grant(command)

        var otherProduct = command
        otherProduct.productCode = "premium_pack"
        otherProduct.source?.appStoreProductId = "com.meeyao.qianwen.premium_pack"
        await expectPointsError("EVENT_CONFLICT") { try await self.store.grant(otherProduct) }

        var otherUser = command
        otherUser.userId = newUser().uuidString
        await expectPointsError("EVENT_CONFLICT") { try await self.store.grant(otherUser) }

        var otherTransaction = command
        otherTransaction.source?.transactionId = "1"
        await expectPointsError("EVENT_CONFLICT") { try await self.store.grant(otherTransaction) }

        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 100)
    }

    func testGrantOfSeveralPacksCreditsTheirSumAndRecordsTheQuantity() async throws {
        let user = newUser()
        var command = grantRequest(user: user, product: "popular_pack")
        command.quantity = 3
        let first = try await store.grant(command)
        XCTAssertFalse(first.replayed)
        XCTAssertEqual(first.creditsAdded, 630)
        XCTAssertEqual(first.balanceAfter, 630)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 630, lifetimeEarned: 630, lifetimeSpent: 0))
        let page = try await store.listLedger(userId: user.uuidString, pageSize: 1, pageToken: "")
        let entry = try XCTUnwrap(page.entries.first)
        XCTAssertEqual(entry.amount, 630)
        let ext = try XCTUnwrap(
            (try JSONSerialization.jsonObject(with: Data(entry.metadataJSON.utf8)) as? [String: Any])?["ext"]
                as? [String: Any])
        XCTAssertEqual(ext["quantity"] as? Int, 3)
        XCTAssertEqual(ext["credits"] as? Int, 630)
        XCTAssertEqual(ext["package_credits"] as? Int, 210)

        let replay = try await store.grant(command)
        XCTAssertTrue(replay.replayed)
        XCTAssertEqual(replay.creditsAdded, 630)
        XCTAssertEqual(replay.ledgerEntryId, first.ledgerEntryId)
        for other: Int32 in [0, 1, 2, 4] {
            var changed = command
            changed.quantity = other
            await expectPointsError("EVENT_CONFLICT") { try await self.store.grant(changed) }
        }
        let after = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(after, 630)
    }

    func testQuantityZeroAndOneAreTheSameGrantAsOneStoredBeforeQuantityExisted() async throws {
        let user = newUser()
        let unset = grantRequest(user: user, product: "starter_pack")
        let first = try await store.grant(unset)
        XCTAssertEqual(first.creditsAdded, 100)
        // The stored fingerprint is the one computed before quantity existed, so old rows and new requests agree.
        let stored = try await store.pool.withConnection { connection in
            try await connection.query(
                "select request_fingerprint from points_ledger where event_id = $1", [.text(unset.eventId)]
            ).first!.string("request_fingerprint")
        }
        let oldWay = RequestFingerprint.make(
            kind: "grant.v1",
            fields: [user.uuidString.lowercased(), unset.productCode, unset.bizId, unset.emailHash]
                + unset.source!.namedFields.map(\.value))
        XCTAssertEqual(stored, oldWay)
        var explicitOne = unset
        explicitOne.quantity = 1
        let replay = try await store.grant(explicitOne)
        XCTAssertTrue(replay.replayed)
        XCTAssertEqual(replay.ledgerEntryId, first.ledgerEntryId)
        var two = unset
        two.quantity = 2
        await expectPointsError("EVENT_CONFLICT") { try await self.store.grant(two) }
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 1)
    }

    /// A grant whose reply was lost and whose product the catalog has since
    /// removed is still answered from its row (a replay), so the saga sees
    /// it applied; a new grant of that product is refused as before.
    func testAGrantCreditedBeforeTheCatalogChangedIsAnsweredAsAReplay() async throws {
        let user = newUser()
        let request = grantRequest(user: user, product: "popular_pack")
        let first = try await store.grant(request)
        let shipped = try PackageCatalog.load(path: ShippedConfiguration.packagesFile)
        let withoutIt = try PackageCatalog(packages: shipped.packages.filter { $0.productCode != "popular_pack" })
        let changed = PointsStore(pool: store.pool, catalog: withoutIt)
        let again = try await changed.grant(request)
        XCTAssertTrue(again.replayed)
        XCTAssertEqual(again.creditsAdded, first.creditsAdded)
        XCTAssertEqual(again.ledgerEntryId, first.ledgerEntryId)
        let rows = try await ledgerCount(eventId: request.eventId)
        XCTAssertEqual(rows, 1)
        // The same event id with other content is still a conflict, and a new purchase of the product is refused.
        var other = request
        other.bizId = UUID().uuidString
        await expectPointsError("EVENT_CONFLICT") { try await changed.grant(other) }
        await expectPointsError("PRODUCT_NOT_FOUND") {
            try await changed.grant(self.grantRequest(user: user, product: "popular_pack"))
        }
    }

    /// StoreKit lets a consumable be bought several at once; the starter pack
    /// is sold one unit, once per email identity: a grant for more is
    /// refused whole (nothing credited, the identity still free to buy one).
    func testAStarterPackBoughtSeveralAtOnceIsRefusedAndLeavesTheIdentityFree() async throws {
        let user = newUser()
        let hash = PointsTestDatabase.randomEmailHash()
        // new_user_pack is the catalog's starter kind (config/packages.json).
        for quantity: Int32 in [2, 10] {
            var several = grantRequest(user: user, product: "new_user_pack", emailHash: hash)
            several.quantity = quantity
            await expectPointsError("STARTER_PACK_INELIGIBLE") { try await self.store.grant(several) }
            let rows = try await ledgerCount(eventId: several.eventId)
            XCTAssertEqual(rows, 0, "quantity \(quantity)")
        }
        let packages = try await store.listPackages(userId: user.uuidString, emailHash: hash)
        XCTAssertFalse(packages.starterPackPurchased)
        var one = grantRequest(user: user, product: "new_user_pack", emailHash: hash)
        one.quantity = 1
        let granted = try await store.grant(one)
        XCTAssertEqual(granted.creditsAdded, 60)
        // Regular packs still multiply.
        var regular = grantRequest(user: user, product: "popular_pack", emailHash: hash)
        regular.quantity = 3
        let popular = try await store.grant(regular)
        XCTAssertEqual(popular.creditsAdded, 630)
    }

    func testStarterPackSellsOncePerEmailIdentity() async throws {
        let user = newUser()
        let hash = PointsTestDatabase.randomEmailHash()
        let before = try await store.listPackages(userId: user.uuidString, emailHash: hash)
        XCTAssertFalse(before.starterPackPurchased)
        XCTAssertEqual(
            before.packages.map(\.productCode), ["new_user_pack", "starter_pack", "popular_pack", "premium_pack"])

        let first = try await store.grant(grantRequest(user: user, product: "new_user_pack", emailHash: hash))
        XCTAssertEqual(first.creditsAdded, 60)
        let second = grantRequest(user: user, product: "new_user_pack", emailHash: hash)
        await expectPointsError("STARTER_PACK_INELIGIBLE") { try await self.store.grant(second) }
        let secondRows = try await ledgerCount(eventId: second.eventId)
        XCTAssertEqual(secondRows, 0)

        let after = try await store.listPackages(userId: user.uuidString, emailHash: hash)
        XCTAssertTrue(after.starterPackPurchased)
        XCTAssertEqual(after.packages.map(\.productCode), ["starter_pack", "popular_pack", "premium_pack"])

        let claim = try await store.pool.withConnection { connection in
            try await connection.query(
                """
                select has_purchased_starter_pack, user_email_snapshot, first_user_id_snapshot, grant_event_id
                from register_bonus_claims where email_hash = $1
                """, [.text(hash)]
            ).first!
        }
        XCTAssertTrue(try claim.bool("has_purchased_starter_pack"))
        XCTAssertEqual(try claim.string("user_email_snapshot"), "a***@example.com")
        XCTAssertEqual(try claim.uuid("first_user_id_snapshot"), user)
        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 60)
    }

    func testReRegistrationWithTheSameEmailCannotBuyTheStarterPackAgain() async throws {
        let hash = PointsTestDatabase.randomEmailHash()
        let original = newUser()
        _ = try await store.grant(grantRequest(user: original, product: "new_user_pack", emailHash: hash))
        let reRegistered = newUser()
        let attempt = grantRequest(user: reRegistered, product: "new_user_pack", emailHash: hash)
        await expectPointsError("STARTER_PACK_INELIGIBLE") { try await self.store.grant(attempt) }
        let listing = try await store.listPackages(userId: reRegistered.uuidString, emailHash: hash)
        XCTAssertTrue(listing.starterPackPurchased)
        let balance = try await store.getBalance(userId: reRegistered.uuidString)
        XCTAssertEqual(balance.balance, 0)
        // Regular packs stay available to the new account.
        let regular = try await store.grant(grantRequest(user: reRegistered, product: "starter_pack", emailHash: hash))
        XCTAssertEqual(regular.balance, 100)
    }

    func testAGrantThatWouldPassTheBalanceCeilingIsRefusedAndWritesNothing() async throws {
        let store = try await PointsTestDatabase.store()
        let user = newUser()
        try await PointsTestDatabase.adjust(store, userId: user, amount: PointsLimits.balanceMax - 50)
        do {
            _ = try await store.grant(grantRequest(user: user))
            XCTFail("expected the ceiling to refuse the grant")
        } catch {
            XCTAssertEqual(error.reason, "VALIDATION_FAILED")
        }
        let rows = try await store.pool.withConnection {
            try await $0.query("select count(*) as n from points_ledger where user_id = $1::uuid", [.uuid(user)]).first!
                .int64("n")
        }
        XCTAssertEqual(rows, 1, "only the adjustment")
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance.balance, PointsLimits.balanceMax - 50)
    }

    func testBadInputIsRefusedAndWritesNothing() async throws {
        let user = newUser()
        let good = grantRequest(user: user)
        var cases: [(String, GrantRequest)] = []
        func add(_ reason: String, _ change: (inout GrantRequest) -> Void) {
            var command = good
            change(&command)
            cases.append((reason, command))
        }
        add("VALIDATION_FAILED") { $0.eventId = "" }
        add("VALIDATION_FAILED") { $0.eventId = String(repeating: "e", count: 201) }
        add("VALIDATION_FAILED") { $0.eventId = "payment apple" }
        add("VALIDATION_FAILED") { $0.userId = "" }
        add("VALIDATION_FAILED") { $0.userId = "42" }
        add("VALIDATION_FAILED") { $0.bizId = "" }
        add("VALIDATION_FAILED") { $0.bizId = String(repeating: "b", count: 201) }
        add("VALIDATION_FAILED") { $0.emailHash = "not-a-hash" }
        add("VALIDATION_FAILED") { $0.source?.transactionId = "tx\u{0}" }
        add("VALIDATION_FAILED") { $0.source?.environment = String(repeating: "界", count: 100) }
        add("VALIDATION_FAILED") { $0.emailMasked = "alice@example.com" }
        add("PRODUCT_NOT_FOUND") { $0.productCode = "gold_pack" }
        add("VALIDATION_FAILED") { $0.productCode = "" }
        add("VALIDATION_FAILED") { $0.quantity = -1 }
        add("VALIDATION_FAILED") { $0.quantity = PointsLimits.quantityMax + 1 }
        add("VALIDATION_FAILED") { $0.quantity = Int32.min }
        for (reason, command) in cases {
            await expectPointsError(reason) { try await self.store.grant(command) }
        }
        await expectPointsError("VALIDATION_FAILED") { try await self.store.getBalance(userId: "nope") }
        await expectPointsError("VALIDATION_FAILED") {
            try await self.store.listPackages(userId: user.uuidString, emailHash: "")
        }
        await expectPointsError("VALIDATION_FAILED") {
            try await self.store.listLedger(userId: user.uuidString, pageSize: -1, pageToken: "")
        }
        await expectPointsError("VALIDATION_FAILED") {
            try await self.store.listLedger(userId: user.uuidString, pageSize: 10_000, pageToken: "")
        }
        await expectPointsError("VALIDATION_FAILED") {
            try await self.store.listLedger(userId: user.uuidString, pageSize: 10, pageToken: "forged")
        }
        await expectPointsError("VALIDATION_FAILED") {
            try await self.store.clawback(
                ClawbackCommand(eventId: "refund.x", userId: user.uuidString, originalEventId: "", bizId: "b"))
        }
        await expectPointsError("VALIDATION_FAILED") {
            try await self.store.clawback(
                ClawbackCommand(eventId: "same", userId: user.uuidString, originalEventId: "same", bizId: "b"))
        }
        await expectPointsError("VALIDATION_FAILED") {
            try await self.store.clawback(
                ClawbackCommand(
                    eventId: "refund.x", userId: user.uuidString, originalEventId: "payment.x",
                    bizId: "b", reason: String(repeating: "r", count: 101)))
        }
        await expectPointsError("VALIDATION_FAILED") {
            try await self.store.reverseClawback(
                ReverseClawbackCommand(eventId: "rev.x", userId: user.uuidString, clawbackEventId: "", bizId: "b"))
        }
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 0)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance.balance, 0)
    }

    func testUnknownUserHasAZeroBalanceAndAnEmptyLedger() async throws {
        let user = newUser()
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 0, lifetimeEarned: 0, lifetimeSpent: 0))
        let page = try await store.listLedger(userId: user.uuidString, pageSize: 10, pageToken: "")
        XCTAssertEqual(page, LedgerPage(entries: [], nextPageToken: ""))
    }

    // MARK: Clawback and reversal

    func testClawbackWithEnoughBalanceDeductsEverything() async throws {
        let user = newUser()
        let purchase = grantRequest(user: user, product: "popular_pack")
        _ = try await store.grant(purchase)
        _ = try await store.grant(grantRequest(user: user, product: "starter_pack"))
        let result = try await store.clawback(clawbackCommand(user: user, purchase: purchase.eventId))
        XCTAssertFalse(result.replayed)
        XCTAssertEqual(result.creditsDeducted, 210)
        XCTAssertEqual(result.overdueAmount, 0)
        XCTAssertFalse(result.partial)
        XCTAssertEqual(result.balance, 100)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 100, lifetimeEarned: 100, lifetimeSpent: 0))
        let refund = try await store.listLedger(userId: user.uuidString, pageSize: 1, pageToken: "").entries.first!
        XCTAssertEqual(refund.changeType, "refund")
        XCTAssertEqual(refund.direction, -1)
        XCTAssertEqual(refund.bizType, "payment")
        let ext = try XCTUnwrap(
            (try JSONSerialization.jsonObject(with: Data(refund.metadataJSON.utf8)) as? [String: Any])?["ext"]
                as? [String: Any])
        XCTAssertEqual(ext["original_event_id"] as? String, purchase.eventId)
        XCTAssertEqual(ext["refund_reason"] as? String, "CUSTOMER_REQUEST")
        XCTAssertEqual(ext["overdue_amount"] as? Int, 0)
    }

    func testClawbackWithTooLittleBalanceStopsAtZeroAndRecordsOverdue() async throws {
        let user = newUser()
        let purchase = grantRequest(user: user, product: "starter_pack")
        _ = try await store.grant(purchase)
        try await PointsTestDatabase.spend(store, userId: user, amount: 70)
        let partial = try await store.clawback(clawbackCommand(user: user, purchase: purchase.eventId))
        XCTAssertEqual(partial.creditsDeducted, 30)
        XCTAssertEqual(partial.overdueAmount, 70)
        XCTAssertTrue(partial.partial)
        XCTAssertEqual(partial.balance, 0)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 0, lifetimeEarned: 70, lifetimeSpent: 70))

        // A second purchase clawed back from a zero balance deducts nothing; all of it is overdue.
        let second = grantRequest(user: user, product: "premium_pack")
        _ = try await store.grant(second)
        try await PointsTestDatabase.spend(store, userId: user, amount: 415)
        let empty = try await store.clawback(clawbackCommand(user: user, purchase: second.eventId))
        XCTAssertEqual(empty.creditsDeducted, 0)
        XCTAssertEqual(empty.overdueAmount, 415)
        XCTAssertEqual(empty.balance, 0)
    }

    func testProratedClawbackTakesBackPartOfThePurchase() async throws {
        let user = newUser()
        let purchase = grantRequest(user: user, product: "popular_pack")
        _ = try await store.grant(purchase)
        let command = clawbackCommand(user: user, purchase: purchase.eventId, amount: 70)
        let result = try await store.clawback(command)
        XCTAssertFalse(result.replayed)
        XCTAssertEqual(result.creditsDeducted, 70)
        XCTAssertEqual(result.overdueAmount, 0)
        XCTAssertFalse(result.partial)
        XCTAssertEqual(result.balance, 140)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 140, lifetimeEarned: 140, lifetimeSpent: 0))
        let refund = try await newestEntry(user)
        XCTAssertEqual(refund.amount, 70)
        let metadata = try ext(refund)
        XCTAssertEqual(metadata["requested_amount"] as? Int, 70)
        XCTAssertEqual(metadata["purchase_credits"] as? Int, 210)
        XCTAssertEqual(metadata["overdue_amount"] as? Int, 0)

        let replay = try await store.clawback(command)
        XCTAssertTrue(replay.replayed)
        XCTAssertEqual(replay.creditsDeducted, 70)
        XCTAssertEqual(replay.balance, 140)
        for other: Int64 in [0, 69, 71, 210] {
            var changed = command
            changed.amount = other
            await expectPointsError("EVENT_CONFLICT") { try await self.store.clawback(changed) }
        }
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 2)
    }

    func testAClawbackOfAllIsOneRequestWhetherItSaysZeroOrThePurchasesCredits() async throws {
        let user = newUser()
        let purchase = grantRequest(user: user, product: "popular_pack")
        _ = try await store.grant(purchase)
        // Stored as "all" (amount 0, as every clawback before prorated refunds), retried with the explicit total.
        let implicit = clawbackCommand(user: user, purchase: purchase.eventId)
        let first = try await store.clawback(implicit)
        XCTAssertEqual(first.creditsDeducted, 210)
        var explicit = implicit
        explicit.amount = 210
        let replay = try await store.clawback(explicit)
        XCTAssertTrue(replay.replayed)
        XCTAssertEqual(replay.creditsDeducted, 210)
        var part = implicit
        part.amount = 209
        await expectPointsError("EVENT_CONFLICT") { try await self.store.clawback(part) }

        // And the other way round.
        let second = grantRequest(user: user, product: "starter_pack")
        _ = try await store.grant(second)
        let total = clawbackCommand(user: user, purchase: second.eventId, amount: 100)
        _ = try await store.clawback(total)
        var zero = total
        zero.amount = 0
        let secondReplay = try await store.clawback(zero)
        XCTAssertTrue(secondReplay.replayed)
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 4)
    }

    func testProratedClawbackBeyondTheBalanceRecordsTheOverdueRest() async throws {
        let user = newUser()
        let purchase = grantRequest(user: user, product: "premium_pack")
        _ = try await store.grant(purchase)
        try await PointsTestDatabase.spend(store, userId: user, amount: 385)
        let result = try await store.clawback(clawbackCommand(user: user, purchase: purchase.eventId, amount: 100))
        XCTAssertEqual(result.creditsDeducted, 30)
        XCTAssertEqual(result.overdueAmount, 70)
        XCTAssertTrue(result.partial)
        XCTAssertEqual(result.balance, 0)
        let metadata = try await newestExt(user)
        XCTAssertEqual(metadata["requested_amount"] as? Int, 100)
        XCTAssertEqual(metadata["purchase_credits"] as? Int, 415)
        XCTAssertEqual(metadata["overdue_amount"] as? Int, 70)
    }

    func testClawbackOfMoreThanThePurchaseCreditedIsRefusedAndWritesNothing() async throws {
        let user = newUser()
        var purchase = grantRequest(user: user, product: "starter_pack")
        purchase.quantity = 2
        _ = try await store.grant(purchase)
        _ = try await store.grant(grantRequest(user: user, product: "premium_pack"))
        for amount: Int64 in [201, 615, -1, Int64.max] {
            let command = clawbackCommand(
                user: user, purchase: purchase.eventId, eventId: "refund.too_much:\(UUID().uuidString)", amount: amount)
            do {
                _ = try await store.clawback(command)
                XCTFail("expected VALIDATION_FAILED for amount \(amount)")
            } catch {
                XCTAssertEqual(
                    error,
                    .validationFailed(
                        field: "amount", problem: "must be 0 (all of the purchase) or 1...the purchase's credits"))
            }
        }
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 2, "only the two purchases")
        // The whole of a multi-pack purchase may still be taken back.
        let all = try await store.clawback(clawbackCommand(user: user, purchase: purchase.eventId, amount: 200))
        XCTAssertEqual(all.creditsDeducted, 200)
        XCTAssertEqual(all.balance, 415)
    }

    func testReplayedClawbackReturnsTheFirstResult() async throws {
        let user = newUser()
        let purchase = grantRequest(user: user, product: "popular_pack")
        _ = try await store.grant(purchase)
        try await PointsTestDatabase.spend(store, userId: user, amount: 200)
        let command = clawbackCommand(user: user, purchase: purchase.eventId)
        let first = try await store.clawback(command)
        _ = try await store.grant(grantRequest(user: user, product: "starter_pack"))
        let replay = try await store.clawback(command)
        XCTAssertTrue(replay.replayed)
        XCTAssertEqual(replay.creditsDeducted, first.creditsDeducted)
        XCTAssertEqual(replay.overdueAmount, 200)
        XCTAssertTrue(replay.partial)
        XCTAssertEqual(replay.balance, 100)
        let rows = try await ledgerCount(eventId: command.eventId)
        XCTAssertEqual(rows, 1)

        var different = command
        different.reason = "OTHER"
        await expectPointsError("EVENT_CONFLICT") { try await self.store.clawback(different) }
        let secondEvent = clawbackCommand(
            user: user, purchase: purchase.eventId, eventId: "refund.other:\(UUID().uuidString)")
        await expectPointsError("EVENT_CONFLICT") { try await self.store.clawback(secondEvent) }
    }

    func testClawbackOfAnUnknownOrForeignPurchaseIsEventNotFound() async throws {
        let user = newUser()
        await expectPointsError("EVENT_NOT_FOUND") {
            try await self.store.clawback(self.clawbackCommand(user: user, purchase: "payment.apple_iap:404"))
        }
        let owner = newUser()
        let purchase = grantRequest(user: owner)
        _ = try await store.grant(purchase)
        await expectPointsError("EVENT_NOT_FOUND") {
            try await self.store.clawback(self.clawbackCommand(user: user, purchase: purchase.eventId))
        }
        let balance = try await store.getBalance(userId: owner.uuidString).balance
        XCTAssertEqual(balance, 100)
    }

    func testReversalRestoresExactlyTheDeductionOnce() async throws {
        let user = newUser()
        let purchase = grantRequest(user: user, product: "starter_pack")
        _ = try await store.grant(purchase)
        try await PointsTestDatabase.spend(store, userId: user, amount: 60)
        let clawback = clawbackCommand(user: user, purchase: purchase.eventId)
        let taken = try await store.clawback(clawback)
        XCTAssertEqual(taken.creditsDeducted, 40)

        let command = ReverseClawbackCommand(
            eventId: "refund_reversed." + purchase.eventId, userId: user.uuidString,
            clawbackEventId: clawback.eventId, bizId: clawback.bizId)
        let reversal = try await store.reverseClawback(command)
        XCTAssertFalse(reversal.replayed)
        XCTAssertEqual(reversal.creditsRestored, 40, "only what was deducted comes back, not the overdue part")
        XCTAssertEqual(reversal.balance, 40)

        let replay = try await store.reverseClawback(command)
        XCTAssertTrue(replay.replayed)
        XCTAssertEqual(replay.creditsRestored, 40)
        XCTAssertEqual(replay.balance, 40)

        var otherEvent = command
        otherEvent.eventId = "refund_reversed.other:\(UUID().uuidString)"
        await expectPointsError("EVENT_CONFLICT") { try await self.store.reverseClawback(otherEvent) }
        var unknown = command
        unknown.eventId = "refund_reversed.unknown:\(UUID().uuidString)"
        unknown.clawbackEventId = "refund.apple_iap:404"
        await expectPointsError("EVENT_NOT_FOUND") { try await self.store.reverseClawback(unknown) }
        // A purchase event id is not a clawback.
        var wrongKind = command
        wrongKind.eventId = "refund_reversed.kind:\(UUID().uuidString)"
        wrongKind.clawbackEventId = purchase.eventId
        await expectPointsError("EVENT_NOT_FOUND") { try await self.store.reverseClawback(wrongKind) }

        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 40, lifetimeEarned: 100, lifetimeSpent: 60))
    }

    // MARK: Refund cycles

    private func reversalCommand(user: UUID, clawback: ClawbackCommand, eventId: String) -> ReverseClawbackCommand {
        ReverseClawbackCommand(
            eventId: eventId, userId: user.uuidString, clawbackEventId: clawback.eventId, bizId: clawback.bizId)
    }

    func testAPurchaseMayBeClawedBackAgainOnlyAfterItsClawbackWasReversed() async throws {
        let user = newUser()
        let transactionId = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
        let purchase = grantRequest(user: user, product: "popular_pack", eventId: "payment.apple_iap:\(transactionId)")
        _ = try await store.grant(purchase)
        _ = try await store.grant(grantRequest(user: user, product: "starter_pack"))

        let first = clawbackCommand(
            user: user, purchase: purchase.eventId, eventId: "refund.apple_iap:\(transactionId)")
        let taken = try await store.clawback(first)
        XCTAssertEqual(taken.creditsDeducted, 210)
        XCTAssertEqual(taken.balance, 100)
        let cycle1 = try await newestExt(user)["refund_cycle"] as? Int
        XCTAssertEqual(cycle1, 1)
        let second = clawbackCommand(
            user: user, purchase: purchase.eventId, eventId: "refund.apple_iap:\(transactionId):2", amount: 70)
        await expectPointsError("EVENT_CONFLICT") { try await self.store.clawback(second) }
        let afterRefused = try await ledgerCount(user: user)
        XCTAssertEqual(afterRefused, 3, "the refused clawback wrote nothing")

        let firstReversal = reversalCommand(
            user: user, clawback: first, eventId: "refund_reversed.apple_iap:\(transactionId)")
        let restored = try await store.reverseClawback(firstReversal)
        XCTAssertEqual(restored.creditsRestored, 210)
        XCTAssertEqual(restored.balance, 310)

        // Cycle 2: a prorated refund of the same purchase.
        let secondTaken = try await store.clawback(second)
        XCTAssertFalse(secondTaken.replayed)
        XCTAssertEqual(secondTaken.creditsDeducted, 70)
        XCTAssertEqual(secondTaken.balance, 240)
        let cycle2 = try await newestExt(user)["refund_cycle"] as? Int
        XCTAssertEqual(cycle2, 2)
        // The first cycle's events still replay with their first results.
        let firstReplay = try await store.clawback(first)
        XCTAssertTrue(firstReplay.replayed)
        XCTAssertEqual(firstReplay.creditsDeducted, 210)
        XCTAssertEqual(firstReplay.balance, 240)
        let reversalReplay = try await store.reverseClawback(firstReversal)
        XCTAssertTrue(reversalReplay.replayed)
        XCTAssertEqual(reversalReplay.creditsRestored, 210)
        // The first clawback cannot be reversed a second time under another id.
        let again = reversalCommand(user: user, clawback: first, eventId: "refund_reversed.other:\(UUID().uuidString)")
        await expectPointsError("EVENT_CONFLICT") { try await self.store.reverseClawback(again) }

        let third = clawbackCommand(
            user: user, purchase: purchase.eventId, eventId: "refund.apple_iap:\(transactionId):3")
        await expectPointsError("EVENT_CONFLICT") { try await self.store.clawback(third) }
        let secondReversal = reversalCommand(
            user: user, clawback: second, eventId: "refund_reversed.apple_iap:\(transactionId):2")
        let secondRestored = try await store.reverseClawback(secondReversal)
        XCTAssertEqual(secondRestored.creditsRestored, 70, "a reversal restores exactly what its clawback deducted")
        XCTAssertEqual(secondRestored.balance, 310)
        let thirdTaken = try await store.clawback(third)
        XCTAssertEqual(thirdTaken.creditsDeducted, 210)
        XCTAssertEqual(thirdTaken.balance, 100)
        let cycle3 = try await newestExt(user)["refund_cycle"] as? Int
        XCTAssertEqual(cycle3, 3)

        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 100, lifetimeEarned: 100, lifetimeSpent: 0))
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 7)
    }

    func testAReversalOfAPartlyOverdueClawbackThenANewCycleStaysConsistent() async throws {
        let user = newUser()
        let purchase = grantRequest(user: user, product: "starter_pack")
        _ = try await store.grant(purchase)
        try await PointsTestDatabase.spend(store, userId: user, amount: 80)
        let first = clawbackCommand(user: user, purchase: purchase.eventId)
        let taken = try await store.clawback(first)
        XCTAssertEqual(taken.creditsDeducted, 20)
        XCTAssertEqual(taken.overdueAmount, 80)
        _ = try await store.reverseClawback(
            reversalCommand(user: user, clawback: first, eventId: "refund_reversed." + purchase.eventId))
        let second = clawbackCommand(
            user: user, purchase: purchase.eventId, eventId: "refund." + purchase.eventId + ":2", amount: 50)
        let secondTaken = try await store.clawback(second)
        XCTAssertEqual(secondTaken.creditsDeducted, 20)
        XCTAssertEqual(secondTaken.overdueAmount, 30)
        XCTAssertEqual(secondTaken.balance, 0)
    }

    func testParallelClawbacksOfOnePurchaseLeaveOneUnreversed() async throws {
        let store: PointsStore = self.store
        let user = newUser()
        let purchase = grantRequest(user: user, product: "premium_pack")
        _ = try await store.grant(purchase)
        let commands = (1...20).map { cycle in
            clawbackCommand(user: user, purchase: purchase.eventId, eventId: "refund.\(purchase.eventId):\(cycle)")
        }
        let outcomes = await withTaskGroup(of: String.self) { group in
            for command in commands {
                group.addTask {
                    do {
                        _ = try await store.clawback(command)
                        return "ok"
                    } catch {
                        return (error as? PointsError)?.reason.rawValue ?? "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        XCTAssertEqual(outcomes.filter { $0 == "ok" }.count, 1, "\(outcomes)")
        XCTAssertEqual(outcomes.filter { $0 == "EVENT_CONFLICT" }.count, 19, "\(outcomes)")
        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 0)
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 2)
    }

    func testParallelSubmissionsOfOneClawbackAllSucceedOnce() async throws {
        let store: PointsStore = self.store
        let user = newUser()
        let purchase = grantRequest(user: user, product: "popular_pack")
        _ = try await store.grant(purchase)
        let command = clawbackCommand(user: user, purchase: purchase.eventId, amount: 110)
        let results = try await withThrowingTaskGroup(of: ClawbackResult.self) { group in
            for _ in 0..<20 { group.addTask { try await store.clawback(command) } }
            return try await group.reduce(into: [ClawbackResult]()) { $0.append($1) }
        }
        XCTAssertEqual(results.filter { !$0.replayed }.count, 1)
        XCTAssertTrue(results.allSatisfy { $0.creditsDeducted == 110 && $0.balance == 100 })
        let rows = try await ledgerCount(eventId: command.eventId)
        XCTAssertEqual(rows, 1)
    }

    func testTheSchemaKeepsOneReversalPerClawback() async throws {
        let user = newUser()
        let purchase = grantRequest(user: user, product: "starter_pack")
        _ = try await store.grant(purchase)
        let clawback = clawbackCommand(user: user, purchase: purchase.eventId)
        _ = try await store.clawback(clawback)
        _ = try await store.reverseClawback(
            reversalCommand(user: user, clawback: clawback, eventId: "refund_reversed." + purchase.eventId))
        // Bypassing the store: a second reversal row of the same clawback must not fit the schema.
        do {
            try await store.pool.withTransaction { tx in
                try await tx.query(
                    """
                    insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id,
                                               related_event_id, request_fingerprint)
                    values ($1::uuid, $2, 'refund_reversal', 1, 0, 100, 'payment', 'b', $3, '')
                    """, [.uuid(user), .text("refund_reversed.dup:\(UUID().uuidString)"), .text(clawback.eventId)])
            }
            XCTFail("a second reversal of one clawback was accepted by the schema")
        } catch let error as PostgresError {
            XCTAssertTrue(error.isUniqueViolation, "\(error)")
        }
        let indexes = try await store.pool.withConnection { connection in
            try await connection.query("select indexname from pg_indexes where tablename = 'points_ledger'").map {
                try $0.string("indexname")
            }
        }
        XCTAssertFalse(indexes.contains("points_ledger_related_event_unique"), "one refund per purchase is gone")
        XCTAssertTrue(indexes.contains("points_ledger_reversal_unique"))
        XCTAssertTrue(indexes.contains("points_ledger_refund_related"))
    }

    // MARK: Operator adjustments

    private func adjustCommand(
        user: UUID, amount: Int64, reason: String = "goodwill, ticket \(UInt32.random(in: 1...UInt32.max))",
        operatorName: String = "alice", eventId: String = ""
    ) -> AdjustCommand {
        AdjustCommand(
            userId: user.uuidString, amount: amount, reason: reason, operatorName: operatorName, eventId: eventId)
    }

    func testAnAdjustmentWritesOneAuditedRowAndMovesBalanceAndEarned() async throws {
        let user = newUser()
        _ = try await store.grant(grantRequest(user: user, product: "starter_pack"))
        try await PointsTestDatabase.spend(store, userId: user, amount: 30)
        let command = adjustCommand(user: user, amount: 25, reason: "compensation for outage #12")
        let result = try await store.adjust(command)
        XCTAssertFalse(result.replayed)
        XCTAssertEqual(result.amount, 25)
        XCTAssertEqual(result.balanceBefore, 70)
        XCTAssertEqual(result.balanceAfter, 95)
        XCTAssertEqual(result.userId, user)
        XCTAssertTrue(result.eventId.hasPrefix("adjust:"))
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 95, lifetimeEarned: 125, lifetimeSpent: 30))

        let entry = try await newestEntry(user)
        XCTAssertEqual(entry.id, result.ledgerEntryId)
        XCTAssertEqual(entry.eventId, result.eventId)
        XCTAssertEqual(entry.changeType, "adjust")
        XCTAssertEqual(entry.direction, 1)
        XCTAssertEqual(entry.amount, 25)
        XCTAssertEqual(entry.balanceAfter, 95)
        XCTAssertEqual(entry.bizType, "support")
        let metadata = try ext(entry)
        XCTAssertEqual(metadata["source"] as? String, "operator")
        XCTAssertEqual(metadata["operator"] as? String, "alice")
        XCTAssertEqual(metadata["reason"] as? String, "compensation for outage #12")
        XCTAssertEqual(metadata["amount"] as? Int, 25)

        let taken = try await store.adjust(adjustCommand(user: user, amount: -95))
        XCTAssertEqual(taken.balanceBefore, 95)
        XCTAssertEqual(taken.balanceAfter, 0)
        let negative = try await newestEntry(user)
        XCTAssertEqual(negative.direction, -1)
        XCTAssertEqual(negative.amount, 95)
        let after = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(after, PointsBalance(userId: user, balance: 0, lifetimeEarned: 30, lifetimeSpent: 30))
    }

    func testRunningTheSameAdjustmentAgainIsAReplay() async throws {
        let user = newUser()
        let command = adjustCommand(user: user, amount: 40)
        let first = try await store.adjust(command)
        _ = try await store.grant(grantRequest(user: user, product: "starter_pack"))
        let replay = try await store.adjust(command)
        XCTAssertTrue(replay.replayed)
        XCTAssertEqual(replay.eventId, first.eventId)
        XCTAssertEqual(replay.ledgerEntryId, first.ledgerEntryId)
        XCTAssertEqual(replay.balanceBefore, 0, "the first application's figures")
        XCTAssertEqual(replay.balanceAfter, 40)
        let rows = try await ledgerCount(eventId: first.eventId)
        XCTAssertEqual(rows, 1)
        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 140)
        // A deliberate second adjustment with the same content needs its own event id.
        let again = try await store.adjust(
            adjustCommand(user: user, amount: 40, reason: command.reason, eventId: "adjust.again:\(UUID().uuidString)"))
        XCTAssertFalse(again.replayed)
        XCTAssertEqual(again.balanceAfter, 180)
    }

    func testAnAdjustmentEventIdWithOtherContentIsAConflictAndWritesNothing() async throws {
        let user = newUser()
        let eventId = "support.ticket:\(UUID().uuidString)"
        _ = try await store.adjust(adjustCommand(user: user, amount: 10, reason: "first", eventId: eventId))
        await expectPointsError("EVENT_CONFLICT") {
            try await self.store.adjust(self.adjustCommand(user: user, amount: 11, reason: "first", eventId: eventId))
        }
        await expectPointsError("EVENT_CONFLICT") {
            try await self.store.adjust(
                self.adjustCommand(user: user, amount: 10, reason: "first", operatorName: "bob", eventId: eventId))
        }
        let purchase = grantRequest(user: user)
        _ = try await store.grant(purchase)
        // A purchase's id is not an adjustment's to take, whether the purchase is credited yet or not.
        await expectPointsError("VALIDATION_FAILED") {
            try await self.store.adjust(self.adjustCommand(user: user, amount: 10, eventId: purchase.eventId))
        }
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 2)
        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 110)
    }

    func testANegativeAdjustmentBeyondTheBalanceIsRefusedAndWritesNothing() async throws {
        let user = newUser()
        _ = try await store.grant(grantRequest(user: user, product: "starter_pack"))
        do {
            _ = try await store.adjust(adjustCommand(user: user, amount: -101))
            XCTFail("expected the refusal")
        } catch {
            XCTAssertEqual(
                error, .validationFailed(field: "amount", problem: "takes 101 but the balance holds only 100"))
        }
        let stranger = UUID()
        await expectPointsError("VALIDATION_FAILED") {
            try await self.store.adjust(self.adjustCommand(user: stranger, amount: -1))
        }
        let strangerRows = try await ledgerCount(user: stranger)
        XCTAssertEqual(strangerRows, 0)
        let account = try await store.pool.withConnection { connection in
            try await connection.query(
                "select count(*) as n from user_points where user_id = $1::uuid", [.uuid(stranger)]
            ).first!.int64("n")
        }
        XCTAssertEqual(account, 0, "no account row is left behind")
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 1)
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance, PointsBalance(userId: user, balance: 100, lifetimeEarned: 100, lifetimeSpent: 0))
    }

    func testTheSchemaAllowsSupportOnlyForAdjustments() async throws {
        let user = newUser()
        _ = try await store.grant(grantRequest(user: user, product: "starter_pack"))
        // Bypassing the store: a support row of another change type, and an unknown biz_type, must not fit the schema.
        for (changeType, direction, bizType) in [
            ("consume", -1, "support"), ("grant", 1, "support"), ("adjust", 1, "Good will"),
            ("consume", -1, "payment"),
        ] {
            do {
                try await store.pool.withTransaction { tx in
                    try await tx.query(
                        """
                        insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, request_fingerprint)
                        values ($1::uuid, $2, $3, $4::smallint, 1, 100, $5, '')
                        """,
                        [
                            .uuid(user), .text("schema.check:\(UUID().uuidString)"), .text(changeType),
                            .int64(Int64(direction)), .text(bizType),
                        ])
                }
                XCTFail("\(changeType)/\(bizType) was accepted by the schema")
            } catch let error as PostgresError {
                XCTAssertEqual(error.sqlState, "23514", "a CHECK violation: \(error)")
            }
        }
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 1)
    }

    func testParallelRunsOfOneAdjustmentApplyItOnce() async throws {
        let store: PointsStore = self.store
        let user = newUser()
        let command = adjustCommand(user: user, amount: 7)
        let results = try await withThrowingTaskGroup(of: AdjustResult.self) { group in
            for _ in 0..<20 { group.addTask { try await store.adjust(command) } }
            return try await group.reduce(into: [AdjustResult]()) { $0.append($1) }
        }
        XCTAssertEqual(results.filter { !$0.replayed }.count, 1)
        XCTAssertTrue(results.allSatisfy { $0.balanceBefore == 0 && $0.balanceAfter == 7 })
        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 7)
    }

    func testParallelNegativeAdjustmentsNeverOverdraw() async throws {
        let store: PointsStore = self.store
        let user = newUser()
        _ = try await store.grant(grantRequest(user: user, product: "popular_pack"))
        let commands = (0..<20).map { index in adjustCommand(user: user, amount: -30, reason: "correction \(index)") }
        let applied = await withTaskGroup(of: Bool.self) { group in
            for command in commands { group.addTask { (try? await store.adjust(command)) != nil } }
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        XCTAssertEqual(applied, 7, "210 holds seven deductions of 30")
        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 0)
    }

    // MARK: Ledger paging

    func testLedgerPagesNewestFirstWithAnOpaqueToken() async throws {
        let user = newUser()
        var eventIds: [String] = []
        for _ in 0..<5 {
            let command = grantRequest(user: user)
            _ = try await store.grant(command)
            eventIds.append(command.eventId)
        }
        var seen: [String] = []
        var token = ""
        var pages = 0
        repeat {
            let page = try await store.listLedger(userId: user.uuidString, pageSize: 2, pageToken: token)
            XCTAssertLessThanOrEqual(page.entries.count, 2)
            seen += page.entries.map(\.eventId)
            token = page.nextPageToken
            pages += 1
        } while !token.isEmpty && pages < 10
        XCTAssertEqual(pages, 3)
        XCTAssertEqual(seen, eventIds.reversed())
        let balances = try await store.listLedger(userId: user.uuidString, pageSize: 0, pageToken: "").entries.map(
            \.balanceAfter)
        XCTAssertEqual(balances, [500, 400, 300, 200, 100])
    }

    // MARK: Concurrency

    func testTwoHundredParallelGrantsOfOneEventWriteOneRow() async throws {
        let store: PointsStore = self.store
        let user = newUser()
        let command = grantRequest(user: user, product: "premium_pack")
        let results = try await withThrowingTaskGroup(of: GrantResult.self) { group in
            for _ in 0..<200 { group.addTask { try await store.grant(command) } }
            var results: [GrantResult] = []
            for try await result in group { results.append(result) }
            return results
        }
        XCTAssertEqual(results.count, 200)
        XCTAssertEqual(results.filter { !$0.replayed }.count, 1)
        XCTAssertEqual(Set(results.map(\.ledgerEntryId)).count, 1)
        XCTAssertTrue(results.allSatisfy { $0.creditsAdded == 415 && $0.balanceAfter == 415 })
        let rows = try await ledgerCount(eventId: command.eventId)
        XCTAssertEqual(rows, 1)
        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 415)
    }

    func testTwoHundredParallelDistinctGrantsSumExactly() async throws {
        let store: PointsStore = self.store
        let user = newUser()
        let commands = (0..<200).map { index in
            grantRequest(user: user, product: index.isMultiple(of: 2) ? "starter_pack" : "popular_pack")
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for command in commands { group.addTask { _ = try await store.grant(command) } }
            try await group.waitForAll()
        }
        let balance = try await store.getBalance(userId: user.uuidString)
        XCTAssertEqual(balance.balance, 100 * 100 + 100 * 210)
        XCTAssertEqual(balance.lifetimeEarned, balance.balance)
        let rows = try await ledgerCount(user: user)
        XCTAssertEqual(rows, 200)
    }

    func testParallelStarterPackPurchasesByOneIdentitySellOnce() async throws {
        let store: PointsStore = self.store
        let hash = PointsTestDatabase.randomEmailHash()
        let accounts = (0..<20).map { _ in newUser() }
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for account in accounts {
                let command = grantRequest(user: account, product: "new_user_pack", emailHash: hash)
                group.addTask { (try? await store.grant(command)) != nil }
            }
            var outcomes: [Bool] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        XCTAssertEqual(outcomes.filter { $0 }.count, 1)
    }

    func testParallelGrantsAndClawbacksNeverGoNegative() async throws {
        let store: PointsStore = self.store
        let user = newUser()
        var purchases: [GrantRequest] = []
        for _ in 0..<40 {
            let command = grantRequest(user: user, product: "popular_pack")
            _ = try await store.grant(command)
            purchases.append(command)
        }
        try await PointsTestDatabase.spend(store, userId: user, amount: 40 * 210 - 500)
        let newGrants = (0..<40).map { _ in grantRequest(user: user, product: "starter_pack") }
        let clawbacks = purchases.map { clawbackCommand(user: user, purchase: $0.eventId) }
        let deducted = try await withThrowingTaskGroup(of: (Int64, Int64).self) { group in
            for command in newGrants {
                group.addTask {
                    _ = try await store.grant(command); return (0, 0)
                }
            }
            for command in clawbacks {
                group.addTask {
                    let result = try await store.clawback(command)
                    return (result.creditsDeducted, result.overdueAmount)
                }
            }
            var totals: (Int64, Int64) = (0, 0)
            for try await (deducted, overdue) in group { totals = (totals.0 + deducted, totals.1 + overdue) }
            return totals
        }
        XCTAssertEqual(deducted.0 + deducted.1, 40 * 210)
        let balance = try await store.getBalance(userId: user.uuidString).balance
        XCTAssertEqual(balance, 500 + 40 * 100 - deducted.0)
        XCTAssertGreaterThanOrEqual(balance, 0)
    }
}
