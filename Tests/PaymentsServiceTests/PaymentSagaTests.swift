@testable import PaymentsService
import XCTest

/// The saga's transitions, state by event, without I/O.
final class PaymentSagaTests: XCTestCase {
    // MARK: Verify on an existing row

    func testVerifyWhenGrantedBySameUserIsAlreadyGranted() {
        XCTAssertEqual(PaymentSaga.decideExisting(.init(status: .granted), ownerUserId: "u1", requestingUserId: "u1"), .alreadyGranted)
    }

    func testVerifyWhenOwnedByAnotherUserIsAConflict() {
        for status in [PaymentStatus.verified, .granted, .failed] {
            XCTAssertEqual(PaymentSaga.decideExisting(.init(status: status), ownerUserId: "u1", requestingUserId: "u2"), .conflict, "\(status)")
        }
    }

    func testVerifyWhenVerifiedResumesTheGrant() {
        XCTAssertEqual(PaymentSaga.decideExisting(.newlyVerified, ownerUserId: "u1", requestingUserId: "u1"), .resumeGrant)
    }

    func testVerifyWhenFailedRepeatsTheRefusal() {
        let state = PaymentState(status: .failed, failureCode: "STARTER_PACK_INELIGIBLE")
        XCTAssertEqual(PaymentSaga.decideExisting(state, ownerUserId: "u1", requestingUserId: "u1"), .refusedEarlier(failureCode: "STARTER_PACK_INELIGIBLE"))
    }

    func testVerifyWhenTakenBackIsRevokedForEveryone() {
        for status in [PaymentStatus.refunded, .refundedInsufficient, .revoked] {
            XCTAssertEqual(PaymentSaga.decideExisting(.init(status: status), ownerUserId: nil, requestingUserId: "u1"), .revoked)
            XCTAssertEqual(PaymentSaga.decideExisting(.init(status: status), ownerUserId: "u1", requestingUserId: "u1"), .revoked)
        }
        let refundPending = PaymentState(status: .granted, pendingAction: .clawback, revoked: true)
        XCTAssertEqual(PaymentSaga.decideExisting(refundPending, ownerUserId: "u1", requestingUserId: "u1"), .revoked)
    }

    // MARK: Grant outcomes

    func testGrantCreditedWhenVerifiedBecomesGranted() {
        XCTAssertEqual(PaymentSaga.afterGrant(.newlyVerified, outcome: .credited), PaymentState(status: .granted))
    }

    func testGrantCreditedWhenRevokedMeanwhileSchedulesAClawback() {
        let state = PaymentSaga.afterRefundNotice(.newlyVerified)
        XCTAssertEqual(PaymentSaga.afterGrant(state, outcome: .credited), PaymentState(status: .granted, pendingAction: .clawback, revoked: true))
    }

    func testGrantRefusedWhenVerifiedFailsForGood() {
        XCTAssertEqual(
            PaymentSaga.afterGrant(.newlyVerified, outcome: .refused(reason: "STARTER_PACK_INELIGIBLE")),
            PaymentState(status: .failed, failureCode: "STARTER_PACK_INELIGIBLE"))
    }

    func testGrantTransientFailureWhenVerifiedStaysOwed() {
        XCTAssertEqual(PaymentSaga.afterGrant(.newlyVerified, outcome: .transientFailure), .newlyVerified)
    }

    func testGrantRefusedWhenAlreadyGrantedChangesNothing() {
        let granted = PaymentState(status: .granted)
        XCTAssertEqual(PaymentSaga.afterGrant(granted, outcome: .refused(reason: "X")), granted)
    }

    // MARK: Refund notices and the clawback

    func testRefundWhenGrantedOwesAClawback() {
        XCTAssertEqual(PaymentSaga.afterRefundNotice(.init(status: .granted)), PaymentState(status: .granted, pendingAction: .clawback, revoked: true))
    }

    func testRefundWhenFailedIsRevokedWithNothingToTakeBack() {
        XCTAssertEqual(PaymentSaga.afterRefundNotice(.init(status: .failed, failureCode: "X")), PaymentState(status: .revoked, revoked: true, failureCode: "X"))
    }

    func testRefundRedeliveredWhenRefundedChangesNothing() {
        let refunded = PaymentState(status: .refunded, revoked: true)
        XCTAssertEqual(PaymentSaga.afterRefundNotice(refunded), refunded)
    }

    func testClawbackDeductedInFullIsRefunded() {
        let owed = PaymentState(status: .granted, pendingAction: .clawback, revoked: true)
        XCTAssertEqual(PaymentSaga.afterClawback(owed, outcome: .deducted(overdueAmount: 0)), PaymentState(status: .refunded, revoked: true))
    }

    func testClawbackShortIsRefundedInsufficientWithOverdue() {
        let owed = PaymentState(status: .granted, pendingAction: .clawback, revoked: true)
        XCTAssertEqual(
            PaymentSaga.afterClawback(owed, outcome: .deducted(overdueAmount: 40)),
            PaymentState(status: .refundedInsufficient, revoked: true, failureCode: "INSUFFICIENT_BALANCE", overdueAmount: 40))
    }

    func testClawbackOfNeverCreditedPurchaseWhenVerifiedIsRevoked() {
        let owed = PaymentSaga.afterRefundNotice(.newlyVerified)
        XCTAssertEqual(PaymentSaga.afterClawback(owed, outcome: .nothingToTakeBack), PaymentState(status: .revoked, revoked: true))
    }

    func testClawbackNothingToTakeBackWhenGrantedKeepsRetrying() {
        let owed = PaymentState(status: .granted, pendingAction: .clawback, revoked: true)
        XCTAssertEqual(PaymentSaga.afterClawback(owed, outcome: .nothingToTakeBack), owed)
    }

    func testClawbackTransientFailureStaysOwed() {
        let owed = PaymentState(status: .granted, pendingAction: .clawback, revoked: true)
        XCTAssertEqual(PaymentSaga.afterClawback(owed, outcome: .transientFailure), owed)
    }

    // MARK: Refund reversed

    func testRefundReversedWhenRefundedOwesARestore() {
        let refunded = PaymentState(status: .refunded, revoked: true)
        let next = PaymentSaga.afterRefundReversedNotice(refunded)
        XCTAssertEqual(next.pendingAction, .reverseClawback)
        XCTAssertEqual(PaymentSaga.afterReverseClawback(next, outcome: .restored), PaymentState(status: .granted))
    }

    func testRefundReversedBeforeTheClawbackRanCancelsIt() {
        let owed = PaymentState(status: .granted, pendingAction: .clawback, revoked: true)
        XCTAssertEqual(PaymentSaga.afterRefundReversedNotice(owed), PaymentState(status: .granted))
    }

    func testRefundReversedWhenNeverRefundedChangesNothing() {
        for state in [PaymentState(status: .granted), .newlyVerified, PaymentState(status: .revoked, revoked: true)] {
            XCTAssertEqual(PaymentSaga.afterRefundReversedNotice(state), state)
        }
    }

    func testEveryReachableStateEventuallySettlesWithoutAPendingAction() {
        // Drive every state through every event sequence of length <= 4 with
        // successful outcomes and check no state is left owing forever.
        let starts: [PaymentState] = [.newlyVerified, .init(status: .granted), .init(status: .failed, failureCode: "X")]
        var frontier = starts
        var seen: [PaymentState] = []
        for _ in 0..<4 {
            var next: [PaymentState] = []
            for state in frontier {
                next.append(PaymentSaga.afterRefundNotice(state))
                next.append(PaymentSaga.afterRefundReversedNotice(state))
                next.append(settle(state))
            }
            seen += next
            frontier = next
        }
        for state in seen {
            XCTAssertNil(settle(state).pendingAction, "\(state) never settles")
        }
    }

    /// Runs the owed step with a successful outcome until nothing is owed.
    private func settle(_ state: PaymentState) -> PaymentState {
        var state = state
        for _ in 0..<5 {
            switch state.pendingAction {
            case .grant: state = PaymentSaga.afterGrant(state, outcome: .credited)
            case .clawback: state = PaymentSaga.afterClawback(state, outcome: state.status == .granted ? .deducted(overdueAmount: 0) : .nothingToTakeBack)
            case .reverseClawback: state = PaymentSaga.afterReverseClawback(state, outcome: .restored)
            case nil: return state
            }
        }
        return state
    }

    // MARK: Backoff

    func testBackoffGrowsExponentiallyUpToTheCapWithJitterInTheUpperHalf() {
        let backoff = RetryBackoff(initialDelayMilliseconds: 100, maximumDelayMilliseconds: 10_000)
        XCTAssertEqual(backoff.delayMilliseconds(attempt: 1, jitter: 0), 50)
        XCTAssertEqual(backoff.delayMilliseconds(attempt: 1, jitter: 0.999), 99)
        XCTAssertEqual(backoff.delayMilliseconds(attempt: 3, jitter: 0), 200)
        XCTAssertEqual(backoff.delayMilliseconds(attempt: 40, jitter: 0), 5_000)
        XCTAssertLessThanOrEqual(backoff.delayMilliseconds(attempt: 1000, jitter: 5), 10_000)
    }

    func testLedgerEventIdsFollowThePRD() {
        XCTAssertEqual(LedgerEventId.purchase(transactionId: "1000000123456789"), "payment.apple_iap:1000000123456789")
        XCTAssertEqual(LedgerEventId.refund(transactionId: "1000000123456789"), "refund.apple_iap:1000000123456789")
    }
}
