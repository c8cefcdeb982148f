import Foundation
@testable import PaymentsService
import XCTest

/// Purchases in every state the saga leaves, for the tests of a migration
/// over stored rows (`write`), and the saga going on after it (`carryOn`).
enum PaymentsRowsInEveryState {
    static let proratedRefund = AppleVerdict.revoked(
        Revocation(
            type: Revocation.prorated, percentageMilliunits: 50_000, revocationReason: 1,
            dateUnixMilliseconds: 1_738_645_700_000))

    /// Purchases in each state the saga leaves, and an owed consumption
    /// answer, written by the store; their transaction ids (the first owes
    /// its grant, the third is clawed back in part with an overdue rest).
    static func write(_ store: PaymentsStore) async throws -> [String] {
        let signedAt: Int64 = 1_738_645_600_000
        let owed = PaymentsTestDatabase.newPayment()
        _ = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: signedAt, for: owed)

        let granted = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, granted)
        _ = try await store.complete(
            .grant, with: .granted(), transactionId: granted.transactionId,
            ledgerEventId: LedgerEventId.purchase(transactionId: granted.transactionId))

        let refunded = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, refunded)
        _ = try await store.complete(.grant, with: .granted(), transactionId: refunded.transactionId)
        let word = try await PaymentsTestDatabase.record(
            store, PaymentsTestDatabase.newPayment(transactionId: refunded.transactionId, claimed: false),
            Self.proratedRefund, signedAt: 1_738_645_700_000)
        let clawback = try XCTUnwrap(word.after.pendingStep)
        let clawedBack = try await store.complete(
            clawback, with: .clawedBack(deducted: 30, overdue: 20), transactionId: refunded.transactionId)
        guard case .applied(let record) = clawedBack, record.status == .refundedInsufficient else {
            throw Unexpected(what: "the clawback's result: \(clawedBack)")
        }

        let revokedFirst = PaymentsTestDatabase.newPayment(claimed: false)
        _ = try await store.recordIfNew(
            Self.proratedRefund, signedAtUnixMilliseconds: 1_738_645_700_000, for: revokedFirst)

        let refused = PaymentsTestDatabase.newPayment()
        try await PaymentsTestDatabase.record(store, refused)
        _ = try await store.complete(
            .grant, with: .grantRefused(reason: "STARTER_PACK_INELIGIBLE"), transactionId: refused.transactionId)

        var twoPacks = PaymentsTestDatabase.newPayment(productCode: "popular_pack")
        twoPacks.quantity = 2
        try await PaymentsTestDatabase.record(store, twoPacks)

        try await store.pool.withTransaction {
            try await store.oweConsumptionAnswer(
                notificationUUID: UUID(), transactionId: refunded.transactionId, environment: "Sandbox",
                requestedAtUnixMilliseconds: 1_738_645_800_000, in: $0)
        }
        return [owed, granted, refunded, revokedFirst, refused, twoPacks].map(\.transactionId)
    }

    /// The saga goes on after the migration: a new purchase (step 1's
    /// insert) and its grant's result (step 3's guarded update), Apple
    /// reversing the refund and the reversal's result.
    static func carryOn(_ store: PaymentsStore, refunded: String) async throws {
        let payment = PaymentsTestDatabase.newPayment()
        let fresh = try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: 1_738_645_600_000, for: payment)
        let owed = try XCTUnwrap(fresh?.after)
        XCTAssertEqual(owed.pendingStep, .grant)
        let granted = try await store.completeIfUnchanged(
            .grant, with: .granted(), over: owed,
            ledgerEventId: LedgerEventId.purchase(transactionId: payment.transactionId))
        XCTAssertEqual(granted?.status, .granted)
        let reversal = try await PaymentsTestDatabase.record(
            store, PaymentsTestDatabase.newPayment(transactionId: refunded, claimed: false),
            .purchased, signedAt: 1_738_645_900_000)
        let step = try XCTUnwrap(reversal.after.pendingStep)
        guard case .applied(let reversed) = try await store.complete(step, with: .reversed, transactionId: refunded)
        else {
            return XCTFail("the reversal's result must apply")
        }
        XCTAssertEqual(reversed.status, .granted)
        XCTAssertEqual(reversed.state.cycle?.phase, .reversed)
    }

    struct Unexpected: Error {
        var what: String
    }
}
