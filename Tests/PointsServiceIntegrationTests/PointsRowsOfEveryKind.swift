import Contracts
import Foundation
@testable import PointsService
import XCTest

/// Every kind of points write, for the tests of a migration over stored
/// rows: purchases, a starter pack's claim, spends and their reversal,
/// adjustments, a clawback and its reversal (`write`), and every kind once
/// more after the migration (`carryOn`).
enum PointsRowsOfEveryKind {
    /// Every kind of row, for `owner`; `other` spends all it has.
    static func write(_ store: PointsStore, owner: UUID, other: UUID) async throws {
        _ = try await store.grant(grant(owner, "starter_pack"))
        let popular = grant(owner, "popular_pack")
        _ = try await store.grant(popular)
        let spend = try await store.spend(
            SpendCommand(
                eventId: "chat.domains:\(UUID().uuidString)", userId: owner.uuidString, amount: 30,
                bizType: "chat", bizId: "session"))
        _ = try await store.reverseSpend(
            ReverseSpendCommand(
                eventId: "chat.domains.undo:\(UUID().uuidString)", userId: owner.uuidString,
                spendEventId: spend.eventId))
        _ = try await store.adjust(
            AdjustCommand(userId: owner.uuidString, amount: 7, reason: "goodwill", operatorName: "tests"))
        _ = try await store.adjust(
            AdjustCommand(userId: owner.uuidString, amount: -3, reason: "correction", operatorName: "tests"))
        let refund = "refund." + popular.eventId
        _ = try await store.clawback(
            ClawbackCommand(
                eventId: refund, userId: owner.uuidString, originalEventId: popular.eventId,
                bizId: popular.bizId, reason: "CUSTOMER_REQUEST", amount: 50))
        _ = try await store.reverseClawback(
            ReverseClawbackCommand(
                eventId: "reversal." + popular.eventId, userId: owner.uuidString,
                clawbackEventId: refund, bizId: popular.bizId))
        _ = try await store.grant(grant(other, "popular_pack"))
        let all = try await store.getBalance(userId: other.uuidString).balance
        _ = try await store.spend(
            SpendCommand(
                eventId: "chat.domains:\(UUID().uuidString)", userId: other.uuidString, amount: all,
                bizType: "chat"))
    }

    /// Every kind of write once more after the migration, `points_spend` included.
    static func carryOn(_ store: PointsStore, owner: UUID) async throws {
        let popular = grant(owner, "popular_pack")
        let granted = try await store.grant(popular)
        XCTAssertFalse(granted.replayed)
        let spend = try await store.spend(
            SpendCommand(
                eventId: "chat.domains:\(UUID().uuidString)", userId: owner.uuidString, amount: 12,
                bizType: "chat", bizId: "session"))
        XCTAssertEqual(spend.balanceAfter, granted.balance - 12)
        _ = try await store.reverseSpend(
            ReverseSpendCommand(
                eventId: "chat.domains.undo:\(UUID().uuidString)", userId: owner.uuidString,
                spendEventId: spend.eventId))
        let refund = "refund." + popular.eventId
        let clawedBack = try await store.clawback(
            ClawbackCommand(
                eventId: refund, userId: owner.uuidString, originalEventId: popular.eventId,
                bizId: popular.bizId, reason: "CUSTOMER_REQUEST"))
        XCTAssertEqual(clawedBack.creditsDeducted, granted.creditsAdded)
        _ = try await store.reverseClawback(
            ReverseClawbackCommand(
                eventId: "reversal." + popular.eventId, userId: owner.uuidString,
                clawbackEventId: refund, bizId: popular.bizId))
        let newcomer = UUID()
        let starter = try await store.grant(grant(newcomer, "starter_pack"))
        XCTAssertEqual(starter.balance, starter.creditsAdded)
        try await PointsTestDatabase.assertInvariants(pool: store.pool, users: [newcomer])
    }

    static func grant(_ user: UUID, _ product: String) -> GrantRequest {
        let transactionId = String(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999_999))
        return GrantRequest(
            eventId: "payment.apple_iap:\(transactionId)", userId: user.uuidString,
            emailHash: PointsTestDatabase.randomEmailHash(), productCode: product, bizId: "apple_iap:\(transactionId)",
            emailMasked: "a***@example.com")
    }
}
