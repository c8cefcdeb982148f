import Foundation
import IAPCreditsClient
import IAPCreditsClientTestSupport

/// A record store that logs its calls (and can refuse every write, like a full disk).
actor LoggingRecordStore: PurchaseRecordStore {
    let inner = InMemoryPurchaseRecordStore()
    let log: CallLog?
    var failWrites: Bool

    init(log: CallLog? = nil, failWrites: Bool = false) {
        self.log = log
        self.failWrites = failWrites
    }

    func allRecords() async throws -> [PendingPurchaseRecord] { await inner.allRecords() }

    func setFailWrites(_ fail: Bool) { failWrites = fail }

    func save(_ record: PendingPurchaseRecord) async throws {
        log?.note("save")
        if failWrites { throw PurchaseRecordStoreError.io(operation: "write", errno: 28) }
        try await inner.save(record)
    }

    func remove(transactionId: String) async throws {
        log?.note("remove")
        await inner.remove(transactionId: transactionId)
    }
}

/// A store front whose purchase sheet stays up until `release()`; with
/// `afterPayment`, the transaction is made (and unfinished) first, and only
/// the answer to the purchase call waits.
final class GatedStoreFront: StoreFront, @unchecked Sendable {
    let inner: ScriptedStoreFront
    private let afterPayment: Bool
    private let lock = NSLock()
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var open = false

    init(_ inner: ScriptedStoreFront, afterPayment: Bool = false) {
        self.inner = inner
        self.afterPayment = afterPayment
    }

    func release() {
        let resumed = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            open = true
            defer { waiting.removeAll() }
            return waiting
        }
        for continuation in resumed { continuation.resume() }
    }

    var sheetsWaiting: Int { lock.withLock { waiting.count } }

    func products(for productIDs: [String]) async throws -> [StoreProduct] { try await inner.products(for: productIDs) }

    func purchase(productID: String, appAccountToken: UUID) async throws -> StorePurchaseOutcome {
        if afterPayment {
            let outcome = try await inner.purchase(productID: productID, appAccountToken: appAccountToken)
            await gate()
            return outcome
        }
        await gate()
        return try await inner.purchase(productID: productID, appAccountToken: appAccountToken)
    }

    private func gate() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = lock.withLock { () -> Bool in
                if open { return true }
                waiting.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func transactionUpdates() -> AsyncStream<StoreTransactionResult> { inner.transactionUpdates() }
    func unfinishedTransactions() async -> [StoreTransactionResult] { await inner.unfinishedTransactions() }
    func finish(transactionID: String) async { await inner.finish(transactionID: transactionID) }
}

/// Collects a client's events.
final class EventCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [CreditsEvent] = []
    private var task: Task<Void, Never>?

    init(_ client: CreditsClient) {
        let events = client.events
        task = Task { [weak self] in
            for await event in events { self?.append(event) }
        }
    }

    private func append(_ event: CreditsEvent) { lock.withLock { collected.append(event) } }
    var events: [CreditsEvent] { lock.withLock { collected } }

    var creditedIds: [String] {
        events.compactMap { if case .credited(let grant) = $0 { grant.transactionId } else { nil } }
    }

    var revokedIds: [String] {
        events.compactMap { if case .revoked(let id) = $0 { id } else { nil } }
    }

    /// The packages of each `offersChanged`, in order.
    var offerLists: [PackageOffers] {
        events.compactMap { if case .offersChanged(let offers) = $0 { offers } else { nil } }
    }

    deinit { task?.cancel() }
}
