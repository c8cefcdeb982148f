/// Where the library keeps paid purchases not yet credited, across launches.
/// Implementations must survive the app being killed at any point: a save
/// that returned is on storage, and a save interrupted leaves the old
/// record (or none), never a torn one.
public protocol PurchaseRecordStore: Sendable {
    /// Every record, in no particular order.
    func allRecords() async throws -> [PendingPurchaseRecord]
    /// Adds or replaces the record of `record.transactionId`.
    func save(_ record: PendingPurchaseRecord) async throws
    /// Removes the record of `transactionId` (nothing when there is none).
    func remove(transactionId: String) async throws
}

/// Why a record store refused.
public enum PurchaseRecordStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `ClientLimits.pendingRecordsMax` records are already kept.
    case full
    /// The transaction id is not decimal digits (1 to 32).
    case invalidTransactionId
    /// A file operation failed with this errno.
    case io(operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .full: "the record store is full"
        case .invalidTransactionId: "not a transaction id"
        case .io(let operation, let code): "\(operation) failed (errno \(code))"
        }
    }
}
