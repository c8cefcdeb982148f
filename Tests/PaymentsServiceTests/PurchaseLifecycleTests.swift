import Contracts
@testable import PaymentsService
import TestSupport
import XCTest

/// The money model's transitions, state by event, without I/O; then seeded
/// random sequences of Apple's words, duplicates, reorderings and lost
/// replies run against an in-memory ledger that behaves as PointsService
/// does (idempotent by event id, deducts at most the balance).
final class PurchaseLifecycleTests: XCTestCase {
    private let full = AppleVerdict.revoked(
        Revocation(type: "REFUND_FULL", percentageMilliunits: nil, revocationReason: 0, dateUnixMilliseconds: 5))
    private func prorated(_ milliunits: Int32) -> AppleVerdict {
        .revoked(
            Revocation(
                type: "REFUND_PRORATED", percentageMilliunits: milliunits, revocationReason: 1, dateUnixMilliseconds: 5)
        )
    }

    private func claimed(credits: Int64 = 100) -> PurchaseState {
        PurchaseLifecycle.start(verdict: .purchased, signedAtUnixMilliseconds: 10, claimed: true, credits: credits)
    }

    private func granted(credits: Int64 = 100) -> PurchaseState {
        var state = claimed(credits: credits)
        state.grant = .applied
        return state
    }

    private func completed(_ step: LedgerStep, with outcome: StepOutcome, in state: PurchaseState, line: UInt = #line)
        throws -> PurchaseState
    {
        try XCTUnwrap(PurchaseLifecycle.complete(step, with: outcome, in: state), "\(step) must be owed", line: line)
    }

    // MARK: Start and claim

    func testStartWhenClaimedAndPurchasedOwesTheGrant() {
        XCTAssertEqual(PurchaseLifecycle.pendingStep(claimed()), .grant)
        XCTAssertEqual(PurchaseLifecycle.status(claimed()), .verified)
    }

    func testStartWhenUnclaimedOwesNothing() {
        let state = PurchaseLifecycle.start(
            verdict: .purchased, signedAtUnixMilliseconds: 10, claimed: false, credits: 0)
        XCTAssertNil(PurchaseLifecycle.pendingStep(state))
        XCTAssertEqual(PurchaseLifecycle.status(state), .received)
    }

    func testTheSubmissionThatClaimsTheRowOwnsItsCreditsAndAResubmissionDoesNot() {
        XCTAssertTrue(PurchaseLifecycle.claimMadeBySubmission(before: nil), "a new row")
        // Recorded from Apple's word alone: no owner, or a starter pack whose
        // owner the token names while its grant waits for the app.
        let unclaimed = PurchaseLifecycle.start(
            verdict: .purchased, signedAtUnixMilliseconds: 10, claimed: false, credits: 0)
        XCTAssertTrue(PurchaseLifecycle.claimMadeBySubmission(before: unclaimed))
        XCTAssertFalse(PurchaseLifecycle.claimMadeBySubmission(before: claimed()), "claimed, grant owed")
        XCTAssertFalse(PurchaseLifecycle.claimMadeBySubmission(before: granted()), "claimed and granted")
    }

    func testStartWhenRevokedInFullOwesNothingAndIsRevoked() {
        let state = PurchaseLifecycle.start(verdict: full, signedAtUnixMilliseconds: 10, claimed: true, credits: 100)
        XCTAssertNil(PurchaseLifecycle.pendingStep(state))
        XCTAssertEqual(PurchaseLifecycle.status(state), .revoked)
    }

    func testStartWhenRevokedProratedGrantsThenTakesTheShareBack() throws {
        var state = PurchaseLifecycle.start(
            verdict: prorated(25_000), signedAtUnixMilliseconds: 10, claimed: true, credits: 100)
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .grant)
        state = try completed(.grant, with: .granted(), in: state)
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .clawback(cycle: 1, amount: 25, reason: "APP_ISSUE"))
    }

    func testClaimWhenRevokedBeforeVerifyAndReversedOwesTheGrant() {
        // Case 1 of the issue: REFUND, REFUND_REVERSED, then the app's verify.
        var state = PurchaseLifecycle.start(verdict: full, signedAtUnixMilliseconds: 10, claimed: false, credits: 0)
        state = PurchaseLifecycle.receive(.purchased, signedAtUnixMilliseconds: 20, in: state).state
        XCTAssertNil(PurchaseLifecycle.pendingStep(state))
        // The app's JWS is older than both notifications: it changes no verdict, but its claim owes the grant.
        state = PurchaseLifecycle.claim(credits: 100, in: state)
        let (next, accepted) = PurchaseLifecycle.receive(.purchased, signedAtUnixMilliseconds: 1, in: state)
        XCTAssertFalse(accepted)
        XCTAssertEqual(PurchaseLifecycle.pendingStep(next), .grant)
    }

    func testClaimWhenAlreadyClaimedChangesNothing() {
        XCTAssertEqual(PurchaseLifecycle.claim(credits: 5, in: granted()), granted())
    }

    // MARK: Who may claim (the app's verify, or Apple's word through an appAccountToken)

    private let alice = UUID(uuidString: "0f8fad5b-d9cb-469f-a165-70867728950e")!
    private let bob = UUID(uuidString: "16fd2706-8baf-433b-82eb-8c7fada847da")!

    func testAdmitWhenUnclaimedAndOwnerUnknownWritesEitherClaim() {
        XCTAssertEqual(PurchaseLifecycle.admit(claimBy: alice, fromApp: true, claimed: false, owner: nil), .write)
        XCTAssertEqual(PurchaseLifecycle.admit(claimBy: alice, fromApp: false, claimed: false, owner: nil), .write)
    }

    func testAdmitWhenUnclaimedAndTheTokenNamedTheSameOwnerWrites() {
        XCTAssertEqual(PurchaseLifecycle.admit(claimBy: alice, fromApp: true, claimed: false, owner: alice), .write)
        XCTAssertEqual(PurchaseLifecycle.admit(claimBy: alice, fromApp: false, claimed: false, owner: alice), .write)
    }

    func testAdmitWhenUnclaimedAndAnotherOwnerIsKnownIsAConflictOnlyForTheApp() {
        XCTAssertEqual(PurchaseLifecycle.admit(claimBy: bob, fromApp: true, claimed: false, owner: alice), .conflict)
        XCTAssertEqual(
            PurchaseLifecycle.admit(claimBy: bob, fromApp: false, claimed: false, owner: alice), .keep,
            "Apple's word never moves a purchase to another owner, nor fails for it")
    }

    func testAdmitWhenClaimedBySameUserKeepsTheFirstClaim() {
        // The app's verify after ONE_TIME_CHARGE credited it, and the reverse:
        // the claim written first stands (its grant request never changes).
        XCTAssertEqual(PurchaseLifecycle.admit(claimBy: alice, fromApp: true, claimed: true, owner: alice), .keep)
        XCTAssertEqual(PurchaseLifecycle.admit(claimBy: alice, fromApp: false, claimed: true, owner: alice), .keep)
    }

    func testAdmitWhenClaimedByAnotherUserIsAConflictOnlyForTheApp() {
        XCTAssertEqual(PurchaseLifecycle.admit(claimBy: bob, fromApp: true, claimed: true, owner: alice), .conflict)
        XCTAssertEqual(PurchaseLifecycle.admit(claimBy: bob, fromApp: false, claimed: true, owner: alice), .keep)
    }

    func testClaimFromAppleThenTheAppsVerifyGrantsOnce() throws {
        // ONE_TIME_CHARGE claims through the token; the grant runs; the app's
        // verify then finds a claimed row (keep) and owes nothing.
        var state = PurchaseLifecycle.start(
            verdict: .purchased, signedAtUnixMilliseconds: 10, claimed: false, credits: 0)
        state = PurchaseLifecycle.claim(credits: 420, in: state)
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .grant)
        state = try completed(.grant, with: .granted(), in: state)
        let verify = PurchaseLifecycle.receive(
            .purchased, signedAtUnixMilliseconds: 5, in: PurchaseLifecycle.claim(credits: 999, in: state))
        XCTAssertNil(PurchaseLifecycle.pendingStep(verify.state))
        XCTAssertEqual(verify.state.credits, 420, "the first claim's value stands")
        XCTAssertEqual(verify.state.creditsHeld, 420)
    }

    func testClaimFromAppleOfATransactionRefundedInFullOwesNothing() {
        // A REFUND's transaction carrying a known token claims the row, which
        // stays revoked: Apple took it all back before any credit.
        var state = PurchaseLifecycle.start(verdict: full, signedAtUnixMilliseconds: 10, claimed: false, credits: 0)
        state = PurchaseLifecycle.claim(credits: 210, in: state)
        XCTAssertNil(PurchaseLifecycle.pendingStep(state))
        XCTAssertEqual(PurchaseLifecycle.status(state), .revoked)
        // REFUND_REVERSED later: the claimed row is owed its grant, no app needed.
        state = PurchaseLifecycle.receive(.purchased, signedAtUnixMilliseconds: 20, in: state).state
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .grant)
    }

    /// PointsService credits from its own catalog; the figure claimed came
    /// from a cached copy that may be older. What was credited is recorded,
    /// and a prorated refund takes back its share of that.
    func testTheCreditsGrantedAreWhatLaterClawbacksTakeAShareOf() throws {
        var state = try completed(.grant, with: .granted(credits: 40), in: claimed(credits: 100))
        XCTAssertEqual(state.credits, 40)
        XCTAssertEqual(state.creditsHeld, 40)
        state = PurchaseLifecycle.receive(prorated(50_000), signedAtUnixMilliseconds: 20, in: state).state
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .clawback(cycle: 1, amount: 20, reason: "APP_ISSUE"))
        // No figure from PointsService: the claimed one stands.
        XCTAssertEqual(try completed(.grant, with: .granted(), in: claimed(credits: 100)).credits, 100)
    }

    func testAWordAndTheClaimThatCameWithItJudgeTheClaimByTheWord() throws {
        // Recorded unclaimed while Apple said "purchased" (a ONE_TIME_CHARGE
        // before the catalog knew the product); then Apple's REFUND names our
        // token and claims the row in the same call: nothing is owed.
        let unclaimed = PurchaseLifecycle.start(
            verdict: .purchased, signedAtUnixMilliseconds: 10, claimed: false, credits: 0)
        let refunded = PurchaseLifecycle.receive(
            full, signedAtUnixMilliseconds: 20, claimingCredits: 210, in: unclaimed)
        XCTAssertTrue(refunded.accepted)
        XCTAssertTrue(refunded.state.claimed)
        XCTAssertNil(PurchaseLifecycle.pendingStep(refunded.state), "never credited, so nothing to claw back")
        XCTAssertEqual(PurchaseLifecycle.status(refunded.state), .revoked)
        // The claim judged first owes a grant the word can no longer stop.
        let claimFirst = PurchaseLifecycle.receive(
            full, signedAtUnixMilliseconds: 20, in: PurchaseLifecycle.claim(credits: 210, in: unclaimed))
        XCTAssertEqual(PurchaseLifecycle.pendingStep(claimFirst.state), .grant)
        // Refunded in part: the grant, then the refunded share back.
        var partly = PurchaseLifecycle.receive(
            prorated(25_000), signedAtUnixMilliseconds: 20, claimingCredits: 200, in: unclaimed
        ).state
        XCTAssertEqual(PurchaseLifecycle.pendingStep(partly), .grant)
        partly = try completed(.grant, with: .granted(), in: partly)
        XCTAssertEqual(PurchaseLifecycle.pendingStep(partly), .clawback(cycle: 1, amount: 50, reason: "APP_ISSUE"))
        // A word older than the one in force changes nothing, and the claim
        // is judged by the verdict in force.
        let revoked = PurchaseLifecycle.start(verdict: full, signedAtUnixMilliseconds: 30, claimed: false, credits: 0)
        let stale = PurchaseLifecycle.receive(
            .purchased, signedAtUnixMilliseconds: 10, claimingCredits: 210, in: revoked)
        XCTAssertFalse(stale.accepted)
        XCTAssertTrue(stale.state.claimed)
        XCTAssertNil(PurchaseLifecycle.pendingStep(stale.state))
    }

    func testReconciliationWordWithAFreshSignedDateDrivesTheClawback() throws {
        // Get Transaction Info signs "now": its revocation is newer than the
        // app's word, so the model owes the clawback; fetched again, the same
        // revocation owes nothing more.
        var state = try completed(.grant, with: .granted(), in: claimed())
        state = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 1_000, in: state).state
        state = try completed(
            .clawback(cycle: 1, amount: 100, reason: "OTHER"), with: .clawedBack(deducted: 100, overdue: 0), in: state)
        let again = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 2_000, in: state)
        XCTAssertTrue(again.accepted)
        XCTAssertNil(PurchaseLifecycle.pendingStep(again.state))
        XCTAssertEqual(again.state.creditsHeld, 0)
    }

    // MARK: Signed dates

    func testReceiveWhenOlderThanTheWordInForceIsIgnored() throws {
        // Case 3: a late REFUND after the REFUND_REVERSED that followed it.
        var state = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 20, in: granted()).state
        state = try completed(
            .clawback(cycle: 1, amount: 100, reason: "OTHER"), with: .clawedBack(deducted: 100, overdue: 0), in: state)
        state = PurchaseLifecycle.receive(.purchased, signedAtUnixMilliseconds: 40, in: state).state
        state = try completed(.reverse(cycle: 1), with: .reversed, in: state)
        let late = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 20, in: state)
        XCTAssertFalse(late.accepted)
        XCTAssertEqual(late.state, state)
        XCTAssertNil(PurchaseLifecycle.pendingStep(late.state))
        XCTAssertEqual(late.state.creditsHeld, 100)
    }

    func testReceiveWhenEquallyNewIsApplied() {
        let (state, accepted) = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 10, in: granted())
        XCTAssertTrue(accepted)
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .clawback(cycle: 1, amount: 100, reason: "OTHER"))
    }

    func testReceiveWithoutDateLosesToADatedWord() {
        XCTAssertFalse(PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: nil, in: granted()).accepted)
    }

    // MARK: Cycles

    func testRefundReversedRefundTakesBackTwiceAndRestoresOnce() throws {
        // Case 2: every movement is its own event.
        var state = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 20, in: granted()).state
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .clawback(cycle: 1, amount: 100, reason: "OTHER"))
        state = try completed(
            .clawback(cycle: 1, amount: 100, reason: "OTHER"), with: .clawedBack(deducted: 100, overdue: 0), in: state)
        XCTAssertEqual(PurchaseLifecycle.status(state), .refunded)
        state = PurchaseLifecycle.receive(.purchased, signedAtUnixMilliseconds: 30, in: state).state
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .reverse(cycle: 1))
        state = try completed(.reverse(cycle: 1), with: .reversed, in: state)
        XCTAssertEqual(PurchaseLifecycle.status(state), .granted)
        let second = AppleVerdict.revoked(
            Revocation(type: "REFUND_FULL", percentageMilliunits: nil, revocationReason: 1, dateUnixMilliseconds: 40))
        state = PurchaseLifecycle.receive(second, signedAtUnixMilliseconds: 40, in: state).state
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .clawback(cycle: 2, amount: 100, reason: "APP_ISSUE"))
    }

    func testReversedWhileTheClawbackOutcomeIsUnknownCompletesItThenReverses() throws {
        // Case 5: the clawback's reply was lost; Apple then reverses the refund.
        var state = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 20, in: granted()).state
        state = PurchaseLifecycle.receive(.purchased, signedAtUnixMilliseconds: 30, in: state).state
        XCTAssertEqual(
            PurchaseLifecycle.pendingStep(state), .clawback(cycle: 1, amount: 100, reason: "OTHER"),
            "the clawback may have run: it is completed, never assumed away")
        state = try completed(
            .clawback(cycle: 1, amount: 100, reason: "OTHER"), with: .clawedBack(deducted: 100, overdue: 0), in: state)
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .reverse(cycle: 1))
        state = try completed(.reverse(cycle: 1), with: .reversed, in: state)
        XCTAssertNil(PurchaseLifecycle.pendingStep(state))
        XCTAssertEqual(state.creditsHeld, 100)
    }

    func testRefundWhileTheGrantIsOwedGrantsThenClawsBack() throws {
        var state = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 20, in: claimed()).state
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .grant, "the grant may have landed: complete it first")
        state = try completed(.grant, with: .granted(), in: state)
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .clawback(cycle: 1, amount: 100, reason: "OTHER"))
    }

    func testNewTermsForARevocationInForceReverseAndReopen() throws {
        var state = PurchaseLifecycle.receive(prorated(50_000), signedAtUnixMilliseconds: 20, in: granted()).state
        state = try completed(
            .clawback(cycle: 1, amount: 50, reason: "APP_ISSUE"), with: .clawedBack(deducted: 50, overdue: 0), in: state
        )
        state = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 30, in: state).state
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .reverse(cycle: 1))
        state = try completed(.reverse(cycle: 1), with: .reversed, in: state)
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .clawback(cycle: 2, amount: 100, reason: "OTHER"))
    }

    func testTheSameRevocationAgainOwesNothing() throws {
        var state = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 20, in: granted()).state
        state = try completed(
            .clawback(cycle: 1, amount: 100, reason: "OTHER"), with: .clawedBack(deducted: 60, overdue: 40), in: state)
        XCTAssertEqual(PurchaseLifecycle.status(state), .refundedInsufficient)
        let again = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 25, in: state)
        XCTAssertTrue(again.accepted)
        XCTAssertNil(PurchaseLifecycle.pendingStep(again.state))
    }

    // MARK: Prorated shares

    func testCreditsToTakeBackRoundInTheUsersFavour() {
        func share(_ type: String?, _ milliunits: Int32?, of credits: Int64) -> Int64 {
            Revocation(type: type, percentageMilliunits: milliunits, revocationReason: nil, dateUnixMilliseconds: nil)
                .creditsToTakeBack(of: credits)
        }
        XCTAssertEqual(share("REFUND_PRORATED", 50_000, of: 415), 207)
        XCTAssertEqual(share("REFUND_PRORATED", 33_333, of: 100), 33)
        // Apple rounds the percentage to a milliunit: one of 3 items (33.333 %)
        // of 630 credits is 210, not 209.99 rounded down; two of 3 (66.667 %) 420.
        XCTAssertEqual(share("REFUND_PRORATED", 33_333, of: 630), 210)
        XCTAssertEqual(share("REFUND_PRORATED", 66_667, of: 630), 420)
        XCTAssertEqual(share("REFUND_PRORATED", 14_286, of: 7 * 210), 210, "one of 7 items")
        XCTAssertEqual(share("REFUND_PRORATED", 28_571, of: 7 * 210), 420, "two of 7 items")
        XCTAssertEqual(share("REFUND_PRORATED", 50_000, of: 21), 10, "a genuine half credit stays with the customer")
        XCTAssertEqual(share("REFUND_PRORATED", 100_000, of: 60), 60)
        XCTAssertEqual(share("REFUND_PRORATED", 0, of: 60), 0)
        XCTAssertEqual(share("REFUND_PRORATED", 250_000, of: 60), 60, "clamped to 100%")
        XCTAssertEqual(share("REFUND_PRORATED", -5, of: 60), 0)
        XCTAssertEqual(share("REFUND_PRORATED", nil, of: 60), 60, "prorated without a share takes everything")
        XCTAssertEqual(share("REFUND_FULL", 10_000, of: 60), 60)
        XCTAssertEqual(share("FAMILY_REVOKE", 10_000, of: 60), 60)
        XCTAssertEqual(share(nil, nil, of: 60), 60)
        XCTAssertEqual(share("SOMETHING_NEW", 10_000, of: 60), 60)
    }

    func testAZeroPercentProratedRefundOwesNoClawback() {
        let state = PurchaseLifecycle.receive(prorated(0), signedAtUnixMilliseconds: 20, in: granted()).state
        XCTAssertNil(PurchaseLifecycle.pendingStep(state))
    }

    // MARK: Step results

    func testCompleteWhenTheStepIsNoLongerOwedIsStale() {
        XCTAssertNil(PurchaseLifecycle.complete(.grant, with: .granted(), in: granted()))
        let owing = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 20, in: granted()).state
        XCTAssertNil(
            PurchaseLifecycle.complete(
                .clawback(cycle: 2, amount: 100, reason: "OTHER"), with: .clawedBack(deducted: 1, overdue: 0), in: owing
            ))
        XCTAssertNil(
            PurchaseLifecycle.complete(
                .clawback(cycle: 1, amount: 99, reason: "OTHER"), with: .clawedBack(deducted: 1, overdue: 0), in: owing)
        )
        XCTAssertNil(PurchaseLifecycle.complete(.reverse(cycle: 1), with: .reversed, in: owing))
    }

    func testGrantRefusedFailsUntilRedriven() throws {
        var state = try completed(.grant, with: .grantRefused(reason: "STARTER_PACK_INELIGIBLE"), in: claimed())
        XCTAssertEqual(PurchaseLifecycle.status(state), .failed)
        XCTAssertNil(PurchaseLifecycle.pendingStep(state))
        state = PurchaseLifecycle.redrive(state)
        XCTAssertEqual(PurchaseLifecycle.pendingStep(state), .grant)
    }

    func testGrantRefusedAndRevokedIsRevoked() throws {
        var state = try completed(.grant, with: .grantRefused(reason: "STARTER_PACK_INELIGIBLE"), in: claimed())
        state = PurchaseLifecycle.receive(full, signedAtUnixMilliseconds: 20, in: state).state
        XCTAssertEqual(PurchaseLifecycle.status(state), .revoked)
        XCTAssertNil(PurchaseLifecycle.pendingStep(state))
        XCTAssertEqual(PurchaseLifecycle.redrive(state).grant, .notOwed, "a redrive credits nothing Apple took back")
    }

    func testRedriveWhenNothingIsRefusedChangesNothing() {
        XCTAssertEqual(PurchaseLifecycle.redrive(granted()), granted())
    }

    func testEventIdsOfCycles() {
        XCTAssertEqual(LedgerEventId.refund(transactionId: "7", cycle: 1), "refund.apple_iap:7")
        XCTAssertEqual(LedgerEventId.refund(transactionId: "7", cycle: 3), "refund.apple_iap:7:3")
        XCTAssertEqual(LedgerEventId.refundReversal(transactionId: "7", cycle: 1), "refund_reversed.apple_iap:7")
        XCTAssertEqual(LedgerEventId.refundReversal(transactionId: "7", cycle: 2), "refund_reversed.apple_iap:7:2")
        XCTAssertEqual(LedgerEventId.purchase(transactionId: "7"), "payment.apple_iap:7")
        // Every id the saga uses lies in a namespace PointsService keeps from spend callers.
        for id in [
            LedgerEventId.purchase(transactionId: "7"), LedgerEventId.refund(transactionId: "7", cycle: 2),
            LedgerEventId.refundReversal(transactionId: "7"),
        ] {
            XCTAssertTrue(LedgerEventNamespace.isReserved(id), id)
        }
        XCTAssertFalse(LedgerEventNamespace.isReserved("chat.turn:7"))
    }

    // MARK: Seeded random sequences

    /// PointsService's behaviour for one purchase, in memory: idempotent by
    /// event id, a clawback deducts at most the balance, a reversal restores
    /// exactly what its clawback deducted.
    private struct MemoryLedger {
        var balance: Int64 = 0
        var applied: [String: (deducted: Int64, overdue: Int64)] = [:]

        mutating func run(_ step: LedgerStep, credits: Int64) -> StepOutcome {
            switch step {
            case .grant:
                if applied["grant"] == nil { balance += credits; applied["grant"] = (0, 0) }
                return .granted(credits: credits)
            case .clawback(let cycle, let amount, _):
                let key = "clawback\(cycle)"
                if let first = applied[key] { return .clawedBack(deducted: first.deducted, overdue: first.overdue) }
                let deducted = min(balance, amount)
                balance -= deducted
                applied[key] = (deducted, amount - deducted)
                return .clawedBack(deducted: deducted, overdue: amount - deducted)
            case .reverse(let cycle):
                let key = "reverse\(cycle)"
                if applied[key] == nil {
                    precondition(applied["clawback\(cycle)"] != nil, "a reversal only after its clawback")
                    balance += applied["clawback\(cycle)"]!.deducted
                    applied[key] = (0, 0)
                }
                return .reversed
            }
        }
    }

    func testRandomSequencesEndWhereApplesLatestWordSays() {
        let seed = SeededRandom.seed(from: "LIFECYCLE_MODEL_SEED")
        var random = SeededRandom(seed: seed)
        for round in 0..<2_000 {
            let credits = Int64(random.next(upTo: 500) + 1)
            var words: [(verdict: AppleVerdict, signedAt: Int64)] = []
            for index in 0..<Int(random.next(upTo: 6)) {
                let verdict: AppleVerdict =
                    switch random.next(upTo: 4) {
                    case 0: .purchased
                    case 1: full
                    case 2: prorated(Int32(random.next(upTo: 100_001)))
                    default:
                        .revoked(
                            Revocation(
                                type: "FAMILY_REVOKE", percentageMilliunits: nil, revocationReason: nil,
                                dateUnixMilliseconds: 1))
                    }
                words.append((verdict, Int64(100 + index * 10)))
            }
            // Deliveries: shuffled, some twice; the app's claim somewhere among them.
            var deliveries = words + words.filter { _ in random.next(upTo: 3) == 0 }
            deliveries.shuffle(using: &random)
            let claimAt = Int(random.next(upTo: UInt64(deliveries.count + 1)))
            var ledger = MemoryLedger()
            var state = PurchaseLifecycle.start(
                verdict: .purchased, signedAtUnixMilliseconds: 50, claimed: false, credits: 0)
            var lostReplies = 0
            func runSome(_ limit: Int) {
                for _ in 0..<limit {
                    guard let step = PurchaseLifecycle.pendingStep(state) else { return }
                    let outcome = ledger.run(step, credits: credits)
                    // A reply lost now and then: the step ran but its result was not recorded.
                    if random.next(upTo: 4) == 0 { lostReplies += 1; continue }
                    state = PurchaseLifecycle.complete(step, with: outcome, in: state) ?? state
                }
            }
            for (index, delivery) in deliveries.enumerated() {
                // The app's claim arrives with one of the words (a verify's signed transaction).
                let before = state
                state =
                    PurchaseLifecycle.receive(
                        delivery.verdict, signedAtUnixMilliseconds: delivery.signedAt,
                        claimingCredits: index == claimAt ? credits : nil, in: state
                    ).state
                if PurchaseLifecycle.pendingStep(before) != .grant && PurchaseLifecycle.pendingStep(state) == .grant {
                    XCTAssertGreaterThan(
                        state.verdict.creditsKept(of: credits), 0,
                        "seed \(seed) round \(round): a grant is owed only under a verdict that keeps credits")
                }
                runSome(Int(random.next(upTo: 3)))
            }
            if claimAt == deliveries.count { state = PurchaseLifecycle.claim(credits: credits, in: state) }
            runSome(100)
            XCTAssertNil(PurchaseLifecycle.pendingStep(state), "seed \(seed) round \(round): settles")
            let latest = words.last?.verdict ?? .purchased
            let expected = latest.creditsKept(of: credits)
            XCTAssertEqual(
                ledger.balance, expected,
                "seed \(seed) round \(round): the ledger holds what Apple's latest word leaves")
            XCTAssertEqual(state.creditsHeld, expected, "seed \(seed) round \(round): the row agrees with the ledger")
            if ledger.balance != expected { return }
        }
    }
}
