import Foundation
@testable import PaymentsService
import PostgresClient
import Synchronization
import TestSupport
import XCTest

/// Group commit of saga steps 1 and 3 (`FirstSightInsertBatch`,
/// `StepResultUpdateBatch`) on the real database: a batch writes each of
/// its rows exactly as the lone statement writes it, or leaves it alone
/// exactly where the lone statement would; it is all or nothing; and
/// concurrent purchases through the store do share statements.
final class BatchedPurchaseRowTests: XCTestCase {
    private static let signedAt: Int64 = 1_738_645_600_000
    private static let refund = AppleVerdict.revoked(
        Revocation(
            type: "REFUND_FULL", percentageMilliunits: nil, revocationReason: 0,
            dateUnixMilliseconds: 1_738_645_700_000))
    private static let prorated = AppleVerdict.revoked(
        Revocation(
            type: "REFUND_PRORATED", percentageMilliunits: 50_000, revocationReason: 1,
            dateUnixMilliseconds: 1_738_645_800_000))

    /// Every stored column but those that name the row or the time it was
    /// written (the schedule is compared as "set or not").
    private static let comparedRow = """
        select (to_jsonb(t) - 'id' - 'transaction_id' - 'original_transaction_id' - 'apple_payload' - 'created_at' - 'updated_at'
                - 'next_attempt_at' - 'owed_since' - 'ledger_event_id')::text as row,
               next_attempt_at is null as unscheduled, owed_since is null as not_owed, ledger_event_id is null as no_event
        from apple_iap_transactions t where transaction_id = $1
        """

    // MARK: Step 1

    func testABatchOfFirstSightsWritesEachRowAsALoneInsertWritesIt() async throws {
        let store = try await PaymentsTestDatabase.store()
        var unclaimed = PaymentsTestDatabase.newPayment(claimed: false)
        unclaimed.tokenOwner = UUID()
        unclaimed.appAccountToken = UUID()
        var noPrice = PaymentsTestDatabase.newPayment(productCode: "points_1000")
        noPrice.currency = nil
        noPrice.priceMilliunits = nil
        noPrice.quantity = 3
        noPrice.webOrderLineItemId = "line-item-7"
        let cases: [(NewPayment, AppleVerdict)] = [
            (PaymentsTestDatabase.newPayment(), .purchased), (PaymentsTestDatabase.newPayment(), Self.refund),
            (unclaimed, .purchased),
            (noPrice, Self.prorated), (PaymentsTestDatabase.newPayment(claimed: false), Self.refund),
        ]
        // A row that exists already: the batch leaves it alone.
        let existing = PaymentsTestDatabase.newPayment()
        let before = try await PaymentsTestDatabase.record(store, existing, Self.refund).after
        let existingAgain = store.firstSightWrite(
            existing,
            state: PaymentsStore.firstState(
                .purchased, signedAtUnixMilliseconds: Self.signedAt,
                of: existing))
        var writes: [PurchaseRowWrite] = []
        var twins: [(batched: String, lone: String)] = []
        for (payment, verdict) in cases {
            var twin = payment
            twin.transactionId = PaymentsTestDatabase.randomTransactionId()
            let state = PaymentsStore.firstState(verdict, signedAtUnixMilliseconds: Self.signedAt, of: payment)
            writes.append(store.firstSightWrite(payment, state: state))
            let lone = try await store.pool.withConnection { try await store.insert(twin, state: state, in: $0) }
            XCTAssertNotNil(lone)
            twins.append((payment.transactionId, twin.transactionId))
        }
        writes.insert(existingAgain, at: 2)
        let outcomes = try await store.pool.withConnection { try await FirstSightInsertBatch.execute(writes, on: $0) }
        XCTAssertEqual(outcomes.count, writes.count)
        XCTAssertNil(outcomes[2], "the existing row is left alone")
        let untouched = try await store.find(transactionId: existing.transactionId)
        XCTAssertEqual(untouched, before)
        for (index, write) in writes.enumerated() where index != 2 {
            XCTAssertEqual(
                outcomes[index]?.transactionId, write.transactionId, "outcomes come back in the writes' order")
            let stored = try await store.find(transactionId: write.transactionId)
            XCTAssertEqual(outcomes[index], stored, "the outcome is the row as stored")
        }
        for (batched, lone) in twins {
            let batchedRow = try await comparable(store, batched)
            let loneRow = try await comparable(store, lone)
            XCTAssertEqual(batchedRow.count, 4)
            XCTAssertEqual(batchedRow, loneRow, "transaction \(batched)")
            let payload = try await comparablePayload(store, batched)
            XCTAssertEqual(payload, "{\"transactionId\": \"\(batched)\"}")
        }
    }

    func testABatchOfFirstSightsIsAllOrNothing() async throws {
        let store = try await PaymentsTestDatabase.store()
        let good = PaymentsTestDatabase.newPayment()
        var bad = PaymentsTestDatabase.newPayment()
        bad.quantity = 11  // purchase_quantity_in_range refuses it
        let writes = [good, bad].map {
            store.firstSightWrite(
                $0,
                state: PaymentsStore.firstState(
                    .purchased, signedAtUnixMilliseconds: Self.signedAt,
                    of: $0))
        }
        do {
            _ = try await store.pool.withConnection { try await FirstSightInsertBatch.execute(writes, on: $0) }
            XCTFail("a row the schema refuses fails its batch")
        } catch let error as PostgresError {
            XCTAssertEqual(error.sqlState, "23514")
        }
        for payment in [good, bad] {
            let found = try await store.find(transactionId: payment.transactionId)
            XCTAssertNil(found, "nothing of a failed batch is written")
        }
    }

    // MARK: Step 3

    /// Twin rows get the same words; the step result each runner read is
    /// written for one twin by a batch and for the other by the lone guarded
    /// update. Whether it applied, and the row after, must be the same, over
    /// random words between the read and the write. Seeded
    /// (BATCHED_RESULT_SEED replays one).
    func testABatchOfStepResultsWritesExactlyWhereTheLoneUpdateWrites() async throws {
        let store = try await PaymentsTestDatabase.store()
        let seed = SeededRandom.seed(from: "BATCHED_RESULT_SEED")
        var random = SeededRandom(seed: seed)
        let verdicts: [AppleVerdict] = [.purchased, Self.refund, Self.prorated]
        var applied = 0, missed = 0
        for round in 0..<6 {
            var pairs: [(batched: PaymentRecord, lone: PaymentRecord)] = []
            for _ in 0..<6 {
                let user = UUID()
                let payments = [
                    PaymentsTestDatabase.newPayment(userId: user), PaymentsTestDatabase.newPayment(userId: user),
                ]
                var signedAt = Self.signedAt
                var seen: [PaymentRecord] = []
                for payment in payments {
                    seen.append(try await PaymentsTestDatabase.record(store, payment, signedAt: signedAt).after)
                }
                // Some rows move on before the runner reads them, some after.
                for moment in 0..<2 {
                    guard random.next(upTo: 2) == 0 else { continue }
                    let verdict = verdicts[Int(random.next(upTo: UInt64(verdicts.count)))]
                    signedAt += random.next(upTo: 4) == 0 ? -500 : 1_000
                    for payment in payments {
                        let word = PaymentsTestDatabase.newPayment(transactionId: payment.transactionId, claimed: false)
                        try await PaymentsTestDatabase.record(store, word, verdict, signedAt: signedAt)
                    }
                    if moment == 0 {
                        for index in seen.indices {
                            seen[index] = try await store.find(transactionId: seen[index].transactionId) ?? seen[index]
                        }
                    }
                }
                pairs.append((seen[0], seen[1]))
            }
            var writes: [PurchaseRowWrite] = []
            var lone: [PaymentRecord?] = []
            for pair in pairs {
                guard let step = pair.batched.pendingStep else { continue }
                let outcome = StepOutcomeSamples.outcome(of: step, &random)
                // A grant names its own row's ledger event (unique), as the runner passes it.
                func eventId(_ record: PaymentRecord) -> String? {
                    step == .grant ? LedgerEventId.purchase(transactionId: record.transactionId) : nil
                }
                guard
                    let write = PaymentsStore.stepResultWrite(
                        step, with: outcome, over: pair.batched, ledgerEventId: eventId(pair.batched)),
                    let twin = PaymentsStore.stepResultWrite(
                        step, with: outcome, over: pair.lone, ledgerEventId: eventId(pair.lone))
                else {
                    return XCTFail("a row that owes a step takes its result")
                }
                writes.append(write)
                lone.append(
                    try await store.pool.withConnection { try await StepResultUpdateBatch.runAlone(twin, on: $0) })
            }
            guard writes.count > 1 else { continue }
            let batched = try await store.pool.withConnection {
                try await StepResultUpdateBatch.execute(writes, on: $0)
            }
            for (index, write) in writes.enumerated() {
                let context = "seed \(seed) round \(round) row \(index)"
                XCTAssertEqual(batched[index] == nil, lone[index] == nil, context)
                if batched[index] == nil { missed += 1 } else { applied += 1 }
                XCTAssertEqual(batched[index]?.state, lone[index]?.state, context)
                let twinId = pairs.first { $0.batched.transactionId == write.transactionId }?.lone.transactionId ?? ""
                let batchedRow = try await comparable(store, write.transactionId)
                let loneRow = try await comparable(store, twinId)
                XCTAssertEqual(batchedRow, loneRow, context)
            }
        }
        XCTAssertGreaterThan(applied, 0, "seed \(seed): some results applied in a batch")
        XCTAssertGreaterThan(missed, 0, "seed \(seed): some guards missed in a batch")
    }

    // MARK: Through the store

    func testConcurrentPurchasesShareStatementsAndEachIsWrittenOnce() async throws {
        let shared = try await PaymentsTestDatabase.store()
        let batches = Mutex<[PaymentsStore.BatchedStatement: [Int]]>([:])
        let store = PaymentsStore(pool: shared.pool, backoff: shared.backoff) { statement, writes, failed in
            XCTAssertFalse(failed)
            batches.withLock { $0[statement, default: []].append(writes) }
        }
        let payments = (0..<24).map { _ in PaymentsTestDatabase.newPayment() }
        let seen = try await withThrowingTaskGroup(of: PaymentRecord?.self) { group in
            for payment in payments {
                group.addTask {
                    try await store.recordIfNew(.purchased, signedAtUnixMilliseconds: Self.signedAt, for: payment)?
                        .after
                }
            }
            return try await group.reduce(into: [PaymentRecord]()) { if let record = $1 { $0.append(record) } }
        }
        XCTAssertEqual(
            Set(seen.map(\.transactionId)), Set(payments.map(\.transactionId)), "every new purchase is inserted once")
        let granted = try await withThrowingTaskGroup(of: PaymentRecord?.self) { group in
            for record in seen {
                group.addTask {
                    try await store.completeIfUnchanged(
                        .grant, with: .granted(), over: record,
                        ledgerEventId: LedgerEventId.purchase(transactionId: record.transactionId))
                }
            }
            return try await group.reduce(into: [PaymentRecord]()) { if let record = $1 { $0.append(record) } }
        }
        XCTAssertEqual(granted.count, 24)
        XCTAssertTrue(granted.allSatisfy { $0.status == .granted && $0.pendingStep == nil })
        for payment in payments {
            let row = try await store.find(transactionId: payment.transactionId)
            XCTAssertEqual(row?.status, .granted)
            XCTAssertEqual(row?.ledgerEventId, LedgerEventId.purchase(transactionId: payment.transactionId))
        }
        let counted = batches.withLock { $0 }
        for statement in PaymentsStore.BatchedStatement.allCases {
            let sizes = counted[statement] ?? []
            XCTAssertEqual(sizes.reduce(0, +), 24, "\(statement): every write was carried once")
            XCTAssertGreaterThan(sizes.max() ?? 0, 1, "\(statement): concurrent writes shared a statement (\(sizes))")
            XCTAssertLessThanOrEqual(
                sizes.max() ?? 0, PaymentsStore.batchRowsMax, "\(statement): batches stay within their bound")
        }
    }

    // MARK: Helpers

    /// The row's comparable columns, and whether its schedule, owed time and ledger event are set.
    private func comparable(_ store: PaymentsStore, _ transactionId: String) async throws -> [String] {
        try await store.pool.withConnection { connection in
            guard let row = try await connection.query(Self.comparedRow, [.text(transactionId)]).first else {
                return []
            }
            return [
                try row.string("row"), "\(try row.bool("unscheduled"))", "\(try row.bool("not_owed"))",
                "\(try row.bool("no_event"))",
            ]
        }
    }

    private func comparablePayload(_ store: PaymentsStore, _ transactionId: String) async throws -> String? {
        try await store.pool.withConnection { connection in
            try await connection.query(
                "select apple_payload::text as payload from apple_iap_transactions where transaction_id = $1",
                [.text(transactionId)]
            ).first?.string("payload")
        }
    }
}
