import Foundation
@testable import PaymentsService
import PostgresClient
import XCTest

/// `consumption_answers` and `consumption_consents` on the real database:
/// one answer per notification, one claimant at a time, nothing past
/// Apple's 12 hours, consent stored idempotently.
final class ConsumptionAnswerStoreTests: XCTestCase {
    private func owe(_ store: PaymentsStore, _ uuid: UUID, requestedAgoMilliseconds: Int64 = 0) async throws {
        let requestedAt = Int64(Date().timeIntervalSince1970 * 1000) - requestedAgoMilliseconds
        try await store.pool.withTransaction { connection in
            try await store.oweConsumptionAnswer(
                notificationUUID: uuid, transactionId: PaymentsTestDatabase.randomTransactionId(),
                environment: "Production", requestedAtUnixMilliseconds: requestedAt, in: connection)
        }
    }

    private func status(_ store: PaymentsStore, _ uuid: UUID) async throws -> String? {
        try await store.pool.withConnection {
            try await $0.query(
                "select status from consumption_answers where notification_uuid = $1::uuid", [.uuid(uuid)]
            ).first?.string("status")
        }
    }

    func testAnAnswerIsOwedOnceAndClaimedByOneAttemptAtATime() async throws {
        let store = try await PaymentsTestDatabase.store()
        let uuid = UUID()
        try await owe(store, uuid)
        try await owe(store, uuid)  // a redelivery
        let first = try await store.claimDueConsumptionAnswers(only: uuid)
        XCTAssertEqual(first.map(\.notificationUUID), [uuid])
        XCTAssertEqual(first.first?.attempts, 1)
        let leased = try await store.claimDueConsumptionAnswers(only: uuid)
        XCTAssertTrue(leased.isEmpty, "leased to the first attempt")
        // A transient failure: due again after the retry delay (0 here).
        try await store.finishConsumptionAnswer(
            uuid, status: "pending", bodyJSON: nil, appleStatus: 503, detail: "x", retrySeconds: 0)
        let second = try await store.claimDueConsumptionAnswers(only: uuid)
        XCTAssertEqual(second.first?.attempts, 2)
        try await store.finishConsumptionAnswer(
            uuid, status: "sent", bodyJSON: #"{"customerConsented":true}"#, appleStatus: 202, detail: nil,
            retrySeconds: 0)
        let sentStatus = try await status(store, uuid)
        XCTAssertEqual(sentStatus, "sent")
        let after = try await store.claimDueConsumptionAnswers(only: uuid)
        XCTAssertTrue(after.isEmpty, "a sent answer is never claimed again")
        // A late outcome of another attempt does not overwrite it.
        try await store.finishConsumptionAnswer(
            uuid, status: "failed", bodyJSON: nil, appleStatus: 400, detail: "late", retrySeconds: 0)
        let still = try await status(store, uuid)
        XCTAssertEqual(still, "sent")
    }

    func testNothingIsClaimedPastApplesWindow() async throws {
        let store = try await PaymentsTestDatabase.store()
        let late = UUID(), inTime = UUID()
        try await owe(store, late, requestedAgoMilliseconds: 12 * 3_600_000 + 1_000)
        try await owe(store, inTime, requestedAgoMilliseconds: 11 * 3_600_000)
        let lateClaim = try await store.claimDueConsumptionAnswers(only: late)
        XCTAssertTrue(lateClaim.isEmpty)
        let lateStatus = try await status(store, late)
        XCTAssertEqual(lateStatus, "expired")
        let inTimeClaim = try await store.claimDueConsumptionAnswers(only: inTime)
        XCTAssertEqual(inTimeClaim.map(\.notificationUUID), [inTime])
    }

    /// The window closing while an attempt is in flight does not expire its
    /// answer: the attempt's outcome (here Apple's 202) is recorded. Once no
    /// attempt holds it, a pending answer past the window expires.
    func testAnAnswerInFlightWhenTheWindowClosesKeepsItsOutcome() async throws {
        let store = try await PaymentsTestDatabase.store()
        let uuid = UUID()
        try await owe(store, uuid, requestedAgoMilliseconds: 11 * 3_600_000)
        let claimed = try await store.claimDueConsumptionAnswers(only: uuid)
        XCTAssertEqual(claimed.map(\.notificationUUID), [uuid])
        try await store.pool.withConnection {
            _ = try await $0.query(
                "update consumption_answers set deadline = now() - interval '1 second' where notification_uuid = $1::uuid",
                [.uuid(uuid)])
        }
        _ = try await store.claimDueConsumptionAnswers()
        let during = try await status(store, uuid)
        XCTAssertEqual(during, "pending", "held by the attempt in flight")
        try await store.finishConsumptionAnswer(
            uuid, status: "sent", bodyJSON: #"{"customerConsented":true}"#, appleStatus: 202, detail: nil,
            retrySeconds: 0)
        let sent = try await status(store, uuid)
        XCTAssertEqual(sent, "sent", "Apple took it: recorded so")

        let other = UUID()
        try await owe(store, other, requestedAgoMilliseconds: 11 * 3_600_000)
        _ = try await store.claimDueConsumptionAnswers(only: other)
        try await store.pool.withConnection {
            _ = try await $0.query(
                "update consumption_answers set deadline = now() - interval '1 second' where notification_uuid = $1::uuid",
                [.uuid(other)])
        }
        try await store.finishConsumptionAnswer(
            other, status: "pending", bodyJSON: nil, appleStatus: 503, detail: "x", retrySeconds: 0)
        _ = try await store.claimDueConsumptionAnswers(only: other)
        let expired = try await status(store, other)
        XCTAssertEqual(expired, "expired")
    }

    func testConsentIsStoredIdempotentlyAndNeverSaidIsNil() async throws {
        let store = try await PaymentsTestDatabase.store()
        let user = UUID()
        let never = try await store.consumptionConsent(userId: user)
        XCTAssertNil(never)
        try await store.setConsumptionConsent(userId: user, consented: true)
        try await store.setConsumptionConsent(userId: user, consented: true)
        let yes = try await store.consumptionConsent(userId: user)
        XCTAssertEqual(yes, true)
        try await store.setConsumptionConsent(userId: user, consented: false)
        let no = try await store.consumptionConsent(userId: user)
        XCTAssertEqual(no, false)
    }
}
