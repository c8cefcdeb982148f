import Contracts
import Foundation
import RPCCore
import XCTest

/// Races over gRPC: one transaction submitted many times at once, by one
/// user and by two, and a REFUND racing the verify of the same purchase.
final class PaymentsRaceTests: XCTestCase {
    static let shared = SharedCluster()

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    /// What one racing call ended with.
    private enum Answer: Sendable, Equatable {
        case outcome(GrantOutcome)
        case refused(String)
    }

    /// Verifies, retrying UNAVAILABLE answers (bounded) as the app would.
    private static func verifyRetrying(_ cluster: PaymentsCluster, _ request: VerifyTransactionRequest) async throws
        -> Answer
    {
        for _ in 0..<50 {
            do {
                return .outcome(try await cluster.verify(request).outcome)
            } catch let error as RPCError where error.code == .unavailable {
                try await Task.sleep(for: .milliseconds(50))
            } catch let error as RPCError {
                return .refused(ErrorReason.reason(of: error) ?? "\(error.code)")
            }
        }
        return .refused("still unavailable")
    }

    func testOneTransactionSubmittedHundredTimesAtOnceIsGrantedOnce() async throws {
        let cluster = try await Self.shared.cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        let request = try cluster.verifyRequest(user: user, productCode: "premium_pack", transactionId: transactionId)
        let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
            for _ in 0..<100 { group.addTask { try await Self.verifyRetrying(cluster, request) } }
            return try await group.reduce(into: [Answer]()) { $0.append($1) }
        }
        XCTAssertEqual(answers.filter { $0 == .outcome(.granted) }.count, 1, "\(answers)")
        XCTAssertEqual(answers.filter { $0 == .outcome(.alreadyGranted) }.count, 99, "\(answers)")
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "premium_pack")
        let account = try await cluster.balance(user)
        XCTAssertEqual(account.balance, 415)
        try await cluster.assertPointsInvariants(users: [user])
    }

    /// The worker and many inline submissions want the same owed grant at
    /// once: the lease gives it to one runner at a time, so the grant's
    /// result is recorded once and no runner's result is found stale.
    func testTheInlinePathAndTheWorkerNeverRunOneRowAtOnce() async throws {
        let cluster = try await PaymentsCluster.start()
        do {
            let user = UUID()
            let transactionId = PaymentsCluster.randomTransactionId()
            let request = try cluster.verifyRequest(
                user: user, productCode: "popular_pack", transactionId: transactionId)
            try await cluster.killPoints()
            await expectRPCError(.unavailable, reason: "POINTS_UNAVAILABLE") { _ = try await cluster.verify(request) }
            // The grant is owed, due again after a short backoff; the worker polls every 100 ms.
            try await cluster.startPoints()
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for _ in 0..<20 { group.addTask { try await Self.verifyRetrying(cluster, request) } }
                return try await group.reduce(into: [Answer]()) { $0.append($1) }
            }
            XCTAssertLessThanOrEqual(answers.filter { $0 == .outcome(.granted) }.count, 1, "\(answers)")
            XCTAssertEqual(
                answers.filter { $0 == .outcome(.granted) || $0 == .outcome(.alreadyGranted) }.count, 20, "\(answers)")
            let settled = try await cluster.waitSettled(transactionId, status: "granted")
            XCTAssertTrue(settled)
            try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack")
            let lines = cluster.paymentsLogs.split(separator: "\n").filter { $0.contains(transactionId) }
            XCTAssertEqual(
                lines.filter { $0.contains("saga step done") && $0.contains("\"step\":\"grant\"") }.count, 1,
                "the grant's result is recorded once")
            XCTAssertEqual(
                lines.filter { $0.contains("already recorded") }.count, 0,
                "no runner ran the step while another held it")
            try await cluster.assertPointsInvariants(users: [user])
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
    }

    func testOneTransactionRacedByTwoUsersIsGrantedOnceToOne() async throws {
        let cluster = try await Self.shared.cluster()
        let users = [UUID(), UUID()]
        let transactionId = PaymentsCluster.randomTransactionId()
        let signed = try cluster.signedTransaction(transactionId, productCode: "popular_pack")
        let requests = try users.map {
            try cluster.verifyRequest(
                user: $0, productCode: "popular_pack", transactionId: transactionId, signed: signed)
        }
        let answers = try await withThrowingTaskGroup(of: (Int, Answer).self) { group in
            for index in 0..<60 {
                group.addTask { (index % 2, try await Self.verifyRetrying(cluster, requests[index % 2])) }
            }
            return try await group.reduce(into: [(Int, Answer)]()) { $0.append($1) }
        }
        let row = try await cluster.row(transactionId)
        let winner = try XCTUnwrap(users.firstIndex { $0.uuidString.lowercased() == row?.userId })
        let loser = 1 - winner
        let winnerAnswers = answers.filter { $0.0 == winner }.map(\.1)
        let loserAnswers = answers.filter { $0.0 == loser }.map(\.1)
        XCTAssertEqual(winnerAnswers.filter { $0 == .outcome(.granted) }.count, 1, "\(winnerAnswers)")
        XCTAssertTrue(
            winnerAnswers.allSatisfy { $0 == .outcome(.granted) || $0 == .outcome(.alreadyGranted) }, "\(winnerAnswers)"
        )
        XCTAssertTrue(loserAnswers.allSatisfy { $0 == .refused("TRANSACTION_CONFLICT") }, "\(loserAnswers)")
        try await cluster.assertGrantedOnce(transactionId, user: users[winner], productCode: "popular_pack")
        let loserRows = try await cluster.ledgerRows(user: users[loser])
        XCTAssertEqual(loserRows, 0)
        try await cluster.assertPointsInvariants(users: users)
    }

    func testRefundRacingTheVerifyAlwaysEndsConsistent() async throws {
        let cluster = try await Self.shared.cluster()
        var outcomes: [String: Int] = [:]
        for round in 0..<20 {
            let user = UUID()
            let transactionId = PaymentsCluster.randomTransactionId()
            let request = try cluster.verifyRequest(
                user: user, productCode: "starter_pack", transactionId: transactionId)
            let refund = try cluster.signedRefund(transactionId, productCode: "starter_pack")
            // Vary which call gets ahead (a nudge, not an assertion: every
            // interleaving must end consistent).
            let verifyDelayMilliseconds = [0, 5, 15, 30][round % 4]
            async let verified: Answer = {
                try await Task.sleep(for: .milliseconds(verifyDelayMilliseconds))
                return try await Self.verifyRetrying(cluster, request)
            }()
            async let notified: Void = {
                for _ in 0..<50 {
                    do {
                        _ = try await cluster.notify(refund)
                        return
                    } catch let error as RPCError where error.code == .unavailable {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                XCTFail("the refund notification was never accepted")
            }()
            let answer = try await verified
            try await notified
            let settled = try await cluster.eventually {
                let row = try await cluster.row(transactionId)
                return row != nil && row?.pendingAction == nil
            }
            XCTAssertTrue(settled, "round \(round) settled")
            let status = try await cluster.status(transactionId) ?? "none"
            outcomes[status, default: 0] += 1
            let purchases = try await cluster.purchaseRows(transactionId)
            let refunds = try await cluster.refundRows(transactionId)
            let account = try await cluster.balance(user)
            switch status {
            case "refunded":
                XCTAssertEqual(purchases, 1, "round \(round)")
                XCTAssertEqual(refunds, 1, "round \(round)")
            case "revoked":
                XCTAssertEqual(purchases, 0, "round \(round)")
                XCTAssertEqual(refunds, 0, "round \(round)")
                XCTAssertEqual(answer, .refused("TRANSACTION_REVOKED"), "round \(round)")
            default:
                XCTFail("round \(round) ended \(status) (verify answered \(answer))")
            }
            XCTAssertEqual(account.balance, 0, "round \(round): nothing kept after a refund")
            try await cluster.assertPointsInvariants(users: [user])
        }
        print("refund/verify race outcomes: \(outcomes)")
    }
}
