import Foundation
import PostgresClient
import TestSupport
import XCTest

/// A model-based test of the money model through the public API: seeded
/// random sequences of the app's verify, Apple's REFUND (full and
/// prorated), REVOKE, REFUND_REVERSED, duplicate and reordered deliveries,
/// and PaymentsService or PointsService killed between steps. A pure model
/// of Apple's view says what each purchase must leave the user; after each
/// sequence the balance equals the model's and the ledger's sum. Apple and
/// the app behave as they really do: a delivery or a submission that did
/// not get a definitive answer is tried again later. Replay a failure with
/// LIFECYCLE_E2E_SEED=<the printed seed>.
final class LifecycleModelTests: XCTestCase {
    static let roundsPerRun = 8
    static let stepsPerRound = 18
    static let products = ["starter_pack", "popular_pack", "premium_pack"]

    /// One purchase as the model sees it.
    private struct Purchase {
        let transactionId: String
        let productCode: String
        let quantity: Int
        /// The JWS StoreKit gave the app at purchase time.
        let appJWS: String
        /// Apple's words: (signedAt, credits Apple lets the user keep as a fraction of all).
        var words: [(signedAt: Int64, keptOf: (Int64) -> Int64)] = []
        var submittedByApp = false

        var credits: Int64 { LifecycleSystem.credits[productCode]! * Int64(quantity) }

        /// What the ledger must hold for it once everything is delivered.
        var expectedCredits: Int64 {
            guard submittedByApp else { return 0 }
            guard let latest = words.max(by: { $0.signedAt < $1.signedAt }) else { return credits }
            return latest.keptOf(credits)
        }
    }

    /// A signed notification Apple is (re)trying to deliver.
    private struct Delivery {
        let payload: String
        let label: String
        var delivered = false
    }

    func testSeededSequencesThroughThePublicAPIEndWhereApplesLatestWordSays() async throws {
        let seed = SeededRandom.seed(from: "LIFECYCLE_E2E_SEED")
        var random = SeededRandom(seed: seed)
        try await LifecycleSystem.with { system in
            for round in 0..<Self.roundsPerRun {
                let trail = try await self.runRound(system, &random)
                let failed = try await self.check(system, trail, context: "seed \(seed) round \(round)")
                if failed { return }
            }
        }
    }

    private struct Trail {
        var user: TestUser
        var purchases: [Purchase]
        var steps: [String]
    }

    private func runRound(_ system: LifecycleSystem, _ random: inout SeededRandom) async throws -> Trail {
        var clock = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        func tick() -> Int64 { clock += 1_000; return clock }
        let user = system.user()
        var purchases: [Purchase] = []
        for _ in 0..<(2 + Int(random.next(upTo: 2))) {
            let transactionId = EndToEndSystem.randomTransactionId()
            let product = Self.products[Int(random.next(upTo: UInt64(Self.products.count)))]
            let quantity = 1 + Int(random.next(upTo: 3))
            let jws = try system.signedTransaction(
                transactionId, productCode: product, signedAt: tick(), quantity: quantity)
            purchases.append(
                Purchase(transactionId: transactionId, productCode: product, quantity: quantity, appJWS: jws))
        }
        var deliveries: [Delivery] = []
        var pendingVerifies: Set<Int> = []
        var steps: [String] = []
        var paymentsDown = false, pointsDown = false

        for _ in 0..<Self.stepsPerRound {
            let index = Int(random.next(upTo: UInt64(purchases.count)))
            let purchase = purchases[index]
            switch random.next(upTo: 11) {
            case 0, 1, 10:
                purchases[index].submittedByApp = true
                pendingVerifies.insert(index)
                steps.append("verify #\(index)")
            case 2, 3, 4:
                let at = tick()
                let (type, revocation, kept): (String, LifecycleSystem.Revocation, (Int64) -> Int64) =
                    switch random.next(upTo: 4) {
                    case 0:
                        ("REFUND", .init(type: "REFUND_FULL", reason: 0), { _ in 0 })
                    case 1:
                        ("REVOKE", .init(type: "FAMILY_REVOKE", reason: 0), { _ in 0 })
                    default:
                        {
                            let percentage = Int(random.next(upTo: 100_001))
                            return (
                                "REFUND", .init(type: "REFUND_PRORATED", percentage: percentage, reason: 1),
                                { credits in credits - credits * Int64(percentage) / 100_000 }
                            )
                        }()
                    }
                let transaction = try system.signedTransaction(
                    purchase.transactionId, productCode: purchase.productCode, signedAt: at,
                    quantity: purchase.quantity, revocation: revocation)
                deliveries.append(
                    Delivery(
                        payload: try system.signedNotification(type, signedAt: at, transaction: transaction),
                        label: "\(type)(\(revocation.type ?? ""),\(revocation.percentage ?? 100_000)) #\(index)@\(at)"))
                purchases[index].words.append((at, kept))
                steps.append(deliveries.last!.label)
            case 5, 6:
                let at = tick()
                deliveries.append(
                    Delivery(
                        payload: try system.signedNotification(
                            "REFUND_REVERSED", signedAt: at, transaction: purchase.appJWS),
                        label: "REFUND_REVERSED #\(index)@\(at)"))
                purchases[index].words.append((at, { $0 }))
                steps.append(deliveries.last!.label)
            case 7:
                // A duplicate delivery of something Apple already delivered.
                if let again = deliveries.filter(\.delivered).randomElement(using: &random) {
                    deliveries.append(Delivery(payload: again.payload, label: "duplicate of \(again.label)"))
                    steps.append(deliveries.last!.label)
                }
            case 8:
                if paymentsDown {
                    try await system.startPayments()
                    steps.append("PaymentsService restarted")
                } else {
                    try await system.killPayments()
                    steps.append("PaymentsService killed")
                }
                paymentsDown.toggle()
            default:
                if pointsDown {
                    try await system.startPoints()
                    steps.append("PointsService restarted")
                } else {
                    try await system.killPoints()
                    steps.append("PointsService killed")
                }
                pointsDown.toggle()
            }
            // Apple retries what is undelivered, in any order; some words wait (reordering).
            try await attempt(system, &deliveries, &random, share: 2)
            try await submit(system, user, purchases, &pendingVerifies)
        }
        if paymentsDown { try await system.startPayments(); steps.append("PaymentsService restarted") }
        if pointsDown { try await system.startPoints(); steps.append("PointsService restarted") }
        // Everything is eventually delivered and submitted (bounded).
        for _ in 0..<40 where deliveries.contains(where: { !$0.delivered }) || !pendingVerifies.isEmpty {
            try await attempt(system, &deliveries, &random, share: 1)
            try await submit(system, user, purchases, &pendingVerifies)
            if deliveries.contains(where: { !$0.delivered }) || !pendingVerifies.isEmpty {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        XCTAssertFalse(deliveries.contains { !$0.delivered }, "every notification was delivered: \(steps)")
        XCTAssertTrue(pendingVerifies.isEmpty, "every submission got a definitive answer: \(steps)")
        return Trail(user: user, purchases: purchases, steps: steps)
    }

    /// Tries to deliver the undelivered notifications (each with chance 1/share, shuffled).
    private func attempt(
        _ system: LifecycleSystem, _ deliveries: inout [Delivery], _ random: inout SeededRandom, share: UInt64
    ) async throws {
        var order = Array(deliveries.indices.filter { !deliveries[$0].delivered })
        order.shuffle(using: &random)
        for index in order where random.next(upTo: share) == 0 {
            let answer = try? await system.deliver(deliveries[index].payload)
            if answer?.status == 200 { deliveries[index].delivered = true }
        }
    }

    /// Resubmits the app's purchases still waiting for a definitive answer
    /// (granted, already granted, or refunded/revoked): a retryable problem
    /// or no answer keeps the StoreKit transaction unfinished.
    private func submit(_ system: LifecycleSystem, _ user: TestUser, _ purchases: [Purchase], _ pending: inout Set<Int>)
        async throws
    {
        for index in pending.sorted() {
            let purchase = purchases[index]
            guard
                let answer = try? await system.verify(
                    user, productCode: purchase.productCode,
                    transactionId: purchase.transactionId, jws: purchase.appJWS)
            else { continue }
            let definitive = answer.status == 200 || answer.problemCode == "PAYMENT_TRANSACTION_REVOKED"
            if definitive { pending.remove(index) }
            XCTAssert(
                definitive || answer.json["retryable"] as? Bool == true,
                "only retryable problems are retried: \(answer.text)")
        }
    }

    /// Returns true when the round failed.
    private func check(_ system: LifecycleSystem, _ trail: Trail, context: String) async throws -> Bool {
        let settled = try await system.settle(timeout: .seconds(40))
        XCTAssertTrue(settled, "\(context): every owed step ran. Steps: \(trail.steps)")
        var failed = !settled
        let expected = trail.purchases.map(\.expectedCredits).reduce(0, +)
        let balance = try await system.balance(trail.user.id)
        if balance != expected {
            XCTFail("\(context): balance \(balance), the model says \(expected). Steps: \(trail.steps)")
            failed = true
        }
        for (index, purchase) in trail.purchases.enumerated() {
            let held = try await system.creditsHeld(transactionId: purchase.transactionId)
            if held != purchase.expectedCredits {
                XCTFail(
                    "\(context): #\(index) \(purchase.productCode)x\(purchase.quantity) holds \(held), the model says \(purchase.expectedCredits). Steps: \(trail.steps)"
                )
                failed = true
            }
        }
        try await system.assertLedgerInvariants(trail.user.id)
        return failed
    }
}
