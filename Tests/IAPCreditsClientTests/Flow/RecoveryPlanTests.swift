import Foundation
import IAPCreditsClient
import XCTest

/// What a launch does with StoreKit's unfinished transactions and the
/// library's records.
final class RecoveryPlanTests: XCTestCase {
    let me = UUID()
    let someoneElse = UUID()
    let codes = PackageOffers.match(packages: Fixtures.packages, products: []).productCodesByAppStoreProductId
    let now = Date(timeIntervalSince1970: 1_700_000_500)

    private func record(_ id: String, token: UUID?) -> PendingPurchaseRecord {
        PendingPurchaseRecord(
            transaction: Fixtures.transaction(id: id, token: token), productCode: "starter_pack", now: now)
    }

    func testAnUnfinishedTransactionWithoutARecordGetsOneFromThePackages() {
        let transaction = Fixtures.transaction(id: "11", productID: "com.meeyao.qianwen.popular_pack", token: me)
        let plan = RecoveryPlan.make(
            records: [], unfinished: [.verified(transaction)], accountToken: me, productCodes: codes, now: now)
        XCTAssertEqual(
            plan.items,
            [
                .submit(
                    PendingPurchaseRecord(transaction: transaction, productCode: "popular_pack", now: now), isNew: true)
            ])
        XCTAssertEqual(plan.submissions.first?.signedTransactionInfo, transaction.signedTransactionInfo)
        XCTAssertEqual(plan.submissions.first?.appAccountToken, me)
    }

    func testARecordedTransactionIsSubmittedFromItsRecordOnce() {
        let stored = record("12", token: me)
        let plan = RecoveryPlan.make(
            records: [stored],
            unfinished: [
                .verified(Fixtures.transaction(id: "12", token: me)),
                .verified(Fixtures.transaction(id: "12", token: me)),
            ],
            accountToken: me, productCodes: codes, now: now)
        XCTAssertEqual(plan.items, [.submit(stored, isNew: false)])
    }

    /// StoreKit handed the transaction back refunded: its copy is sent, the
    /// record's package code and counters kept, and the record written again.
    func testARecordedTransactionIsSubmittedWithStoreKitsCurrentCopy() {
        var stored = record("20", token: me)
        stored.submissionCount = 4
        stored.lastFailure = "PAYMENT_GRANT_FAILED"
        let refunded = Fixtures.transaction(id: "20", token: me, revoked: true)
        let current = StoreTransaction(
            id: refunded.id, originalID: refunded.originalID, productID: refunded.productID,
            appAccountToken: refunded.appAccountToken, purchaseDate: refunded.purchaseDate,
            revocationDate: refunded.revocationDate,
            signedTransactionInfo: "eyJhbGciOiJFUzI1NiJ9.payload-20-revoked.c2ln")
        let plan = RecoveryPlan.make(
            records: [stored], unfinished: [.verified(current)], accountToken: me, productCodes: codes, now: now)
        let expected = PendingPurchaseRecord(
            transactionId: "20", productCode: "starter_pack", appStoreProductId: stored.appStoreProductId,
            signedTransactionInfo: current.signedTransactionInfo, appAccountToken: me,
            recordedAtUnixMilliseconds: stored.recordedAtUnixMilliseconds, submissionCount: 4,
            lastFailure: "PAYMENT_GRANT_FAILED")
        XCTAssertEqual(plan.items, [.submit(expected, isNew: true)])
    }

    func testARecordStoreKitNoLongerHoldsIsStillSubmitted() {
        let stored = record("13", token: me)
        let plan = RecoveryPlan.make(records: [stored], unfinished: [], accountToken: me, productCodes: codes, now: now)
        XCTAssertEqual(plan.items, [.submit(stored, isNew: false)])
    }

    func testAnotherAccountsPurchaseIsLeftAlone() {
        let plan = RecoveryPlan.make(
            records: [record("14", token: someoneElse)],
            unfinished: [.verified(Fixtures.transaction(id: "15", token: someoneElse))],
            accountToken: me, productCodes: codes, now: now)
        XCTAssertEqual(plan.items, [.otherAccount(transactionId: "15"), .otherAccount(transactionId: "14")])
        XCTAssertTrue(plan.submissions.isEmpty)
    }

    func testAPurchaseWithoutAnAccountTokenIsThisUsers() {
        let plan = RecoveryPlan.make(
            records: [], unfinished: [.verified(Fixtures.transaction(id: "16", token: nil))], accountToken: me,
            productCodes: codes, now: now)
        XCTAssertEqual(plan.submissions.map(\.transactionId), ["16"])
    }

    func testAnUnverifiedTransactionIsNeverSubmitted() {
        let plan = RecoveryPlan.make(
            records: [],
            unfinished: [.unverified(Fixtures.transaction(id: "17", token: me), reason: "invalidSignature")],
            accountToken: me, productCodes: codes, now: now)
        XCTAssertEqual(plan.items, [.unverified(transactionId: "17", reason: "invalidSignature")])
    }

    func testAProductNoPackageNamesIsAskedAbout() {
        let transaction = Fixtures.transaction(id: "18", productID: "com.meeyao.qianwen.retired_pack", token: me)
        let plan = RecoveryPlan.make(
            records: [], unfinished: [.verified(transaction)], accountToken: me, productCodes: codes, now: now)
        XCTAssertEqual(plan.items, [.unknownProduct(transaction)])
    }

    func testARevokedTransactionIsSubmittedSoTheBackendHearsOfIt() {
        let plan = RecoveryPlan.make(
            records: [], unfinished: [.verified(Fixtures.transaction(id: "19", token: me, revoked: true))],
            accountToken: me, productCodes: codes, now: now)
        XCTAssertEqual(plan.submissions.map(\.transactionId), ["19"])
    }

    func testAMalformedTransactionIdIsNotRecorded() {
        let transaction = Fixtures.transaction(id: "../../etc", token: me)
        let plan = RecoveryPlan.make(
            records: [], unfinished: [.verified(transaction)], accountToken: me, productCodes: codes, now: now)
        XCTAssertEqual(plan.items, [.unknownProduct(transaction)])
    }
}
