/// Records in memory: for tests and previews only (an app needs
/// `FilePurchaseRecordStore`, or records are lost with the process).
/// Handing one instance to a second client models a relaunch.
public actor InMemoryPurchaseRecordStore: PurchaseRecordStore {
    private var records: [String: PendingPurchaseRecord] = [:]
    /// How many saves happened (tests check what was written).
    public private(set) var saveCount = 0

    public init(_ records: [PendingPurchaseRecord] = []) {
        for record in records { self.records[record.transactionId] = record }
    }

    public func allRecords() -> [PendingPurchaseRecord] {
        records.values.sorted { $0.recordedAtUnixMilliseconds < $1.recordedAtUnixMilliseconds }
    }

    public func save(_ record: PendingPurchaseRecord) throws {
        guard PendingPurchaseRecord.isValidTransactionId(record.transactionId) else {
            throw PurchaseRecordStoreError.invalidTransactionId
        }
        guard records[record.transactionId] != nil || records.count < ClientLimits.pendingRecordsMax else {
            throw PurchaseRecordStoreError.full
        }
        records[record.transactionId] = record
        saveCount += 1
    }

    public func remove(transactionId: String) {
        records[transactionId] = nil
    }
}
