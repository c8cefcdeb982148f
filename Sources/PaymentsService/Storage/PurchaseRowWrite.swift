import PostgresClient
import ServiceKitDatabase

/// One caller's write of one `apple_iap_transactions` row on the purchase's
/// happy path: the row's transaction id and the statement's values for it.
struct PurchaseRowWrite: Sendable {
    let transactionId: String
    let values: [PostgresValue]
}

/// A happy-path statement over `apple_iap_transactions` that concurrent
/// callers share (group commit, `CommitBatcher`): saga step 1's insert of a
/// new row (`FirstSightInsertBatch`) and step 3's guarded update
/// (`StepResultUpdateBatch`). Each is written once against `StatementValue`,
/// so a lone write runs the same statement as before batching and a batch
/// runs it over a VALUES list of its rows. Per row a batch does exactly what
/// the lone statement does: the row is written, or it is not (a conflict, a
/// guard that misses) and its caller takes the locked path as before.
protocol PurchaseRowBatchedWrite: BatchedWrite where Item == PurchaseRowWrite, Outcome == PaymentRecord? {
    /// Values per row.
    static var width: Int { get }
    /// The statement for one row, values bound as `$1...`.
    static var single: String { get }
    /// The statement over `rows` rows of `BatchedRowValues`.
    static func batched(rows: Int) -> String
}

extension PurchaseRowBatchedWrite {
    /// Each statement writes its transaction's row once (`BatchQueue`).
    static func keys(_ write: PurchaseRowWrite) -> [String] {
        ["transaction " + write.transactionId]
    }

    /// The written row, or nil when the statement left it alone.
    static func runAlone(_ write: PurchaseRowWrite, on connection: PostgresConnection) async throws -> PaymentRecord? {
        precondition(write.values.count == width, "one row's values")
        return try await connection.query(single, write.values).first.map(PaymentsStore.record)
    }

    /// One outcome per write, in order: the row as written, or nil for a row
    /// the statement left alone. A lone write runs `single`, exactly as
    /// without batching. A batch lists its rows in transaction id order, and
    /// the statement takes them in the VALUES list's order, so batches of
    /// several instances that share rows (duplicate submissions of one
    /// purchase to two instances) insert and lock them in the same order and
    /// wait for each other instead of deadlocking (were one to happen, its
    /// batch fails and each write runs alone).
    static func execute(_ writes: [PurchaseRowWrite], on connection: PostgresConnection) async throws
        -> [PaymentRecord?]
    {
        if writes.count == 1 { return [try await runAlone(writes[0], on: connection)] }
        var values: [PostgresValue] = []
        values.reserveCapacity(writes.count * width)
        for write in writes.sorted(by: { $0.transactionId < $1.transactionId }) {
            precondition(write.values.count == width, "one row's values")
            values += write.values
        }
        var written: [String: PaymentRecord] = [:]
        for row in try await connection.query(batched(rows: writes.count), values) {
            let record = try PaymentsStore.record(row)
            written[record.transactionId] = record
        }
        return writes.map { written[$0.transactionId] }
    }

    /// The single path had no fault point before its commit either.
    static var beforeCommitFault: String? { nil }
}
