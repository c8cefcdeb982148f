import Foundation
import IAPCreditsClient

/// A `StoreFront` for tests, standing in for StoreKit 2: it sells the
/// products it is given, answers each purchase as scripted, signs the
/// transactions it creates with `signer` (the local testing CA in the
/// integration tests), keeps them unfinished until `finish`, and delivers
/// updates (an approved pending purchase, a refund) on demand. It counts
/// every finish, so tests can check "finished once". Outlives the clients
/// that use it, as StoreKit outlives an app process.
public final class ScriptedStoreFront: StoreFront, @unchecked Sendable {
    /// What a transaction says, for the signer.
    public struct TransactionFacts: Sendable, Hashable {
        public let id: String
        public let productID: String
        public let appAccountToken: UUID?
        public let purchaseDateMilliseconds: Int64
        /// Set for a refunded transaction.
        public let revocationDateMilliseconds: Int64?

        public init(
            id: String, productID: String, appAccountToken: UUID?, purchaseDateMilliseconds: Int64,
            revocationDateMilliseconds: Int64?
        ) {
            self.id = id
            self.productID = productID
            self.appAccountToken = appAccountToken
            self.purchaseDateMilliseconds = purchaseDateMilliseconds
            self.revocationDateMilliseconds = revocationDateMilliseconds
        }
    }

    public typealias Signer = @Sendable (TransactionFacts) throws -> String

    /// How the next `purchase` call answers.
    public enum PurchaseScript: Sendable {
        case pay
        case pending
        case cancel
        case fail(String)
        /// Paid, but StoreKit's own verification failed.
        case payUnverified
    }

    private let lock = NSLock()
    private let signer: Signer
    private var products: [StoreProduct]
    private var scripts: [PurchaseScript] = []
    private var unfinished: [(id: String, result: StoreTransactionResult)] = []
    private var facts: [String: TransactionFacts] = [:]
    private var finishes: [String: Int] = [:]
    private var redundantFinishes = 0
    private var purchases: [(productID: String, appAccountToken: UUID)] = []
    private var streams: [AsyncStream<StoreTransactionResult>.Continuation] = []
    private var productRequests = 0
    private var productsFailure: String?
    private var nextId: UInt64
    private var callObserver: (@Sendable (String) -> Void)?

    public init(
        products: [StoreProduct],
        firstTransactionId: UInt64 = UInt64.random(in: 2_000_000_000_000_000...2_900_000_000_000_000),
        signer: @escaping Signer
    ) {
        self.products = products
        self.nextId = firstTransactionId
        self.signer = signer
    }

    // MARK: Scripting

    /// `observer` hears "purchase", "finish", "products" and "unfinished" as they happen (call-order checks).
    public func observeCalls(_ observer: @escaping @Sendable (String) -> Void) {
        lock.withLock { callObserver = observer }
    }

    private func onCall(_ name: String) {
        lock.withLock { callObserver }?(name)
    }

    /// Answers for the next purchases, in order (then `.pay`).
    public func script(_ next: PurchaseScript...) {
        lock.withLock { scripts.append(contentsOf: next) }
    }

    public func setProductsFailure(_ reason: String?) {
        lock.withLock { productsFailure = reason }
    }

    /// A purchase made elsewhere (another device, an approved Ask to Buy):
    /// unfinished, delivered as an update.
    @discardableResult
    public func deliverNewPurchase(productID: String, appAccountToken: UUID?) throws -> StoreTransaction {
        let transaction = try makeTransaction(productID: productID, appAccountToken: appAccountToken)
        deliver(.verified(transaction))
        return transaction
    }

    /// Apple refunded `transactionId`: StoreKit delivers it again, revoked
    /// (unfinished once more, as an update).
    @discardableResult
    public func refund(_ transactionId: String) throws -> StoreTransaction {
        guard let original = lock.withLock({ facts[transactionId] }) else {
            throw ScriptedStoreFrontError.unknownTransaction
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let revoked = TransactionFacts(
            id: original.id, productID: original.productID, appAccountToken: original.appAccountToken,
            purchaseDateMilliseconds: original.purchaseDateMilliseconds, revocationDateMilliseconds: now)
        let transaction = try transaction(from: revoked)
        deliver(.verified(transaction))
        return transaction
    }

    /// Sends an update to every listener (and keeps it unfinished).
    public func deliver(_ result: StoreTransactionResult) {
        let listeners = lock.withLock { () -> [AsyncStream<StoreTransactionResult>.Continuation] in
            unfinished.removeAll { $0.id == result.transaction.id }
            unfinished.append((result.transaction.id, result))
            return streams
        }
        for listener in listeners { listener.yield(result) }
    }

    // MARK: Observations

    public func finishCount(_ transactionId: String) -> Int { lock.withLock { finishes[transactionId] ?? 0 } }
    /// finish calls for transactions that were not unfinished (harmless, as in StoreKit).
    public var redundantFinishCount: Int { lock.withLock { redundantFinishes } }
    public var unfinishedIds: [String] { lock.withLock { unfinished.map(\.id) } }
    public var purchaseCount: Int { lock.withLock { purchases.count } }
    public var lastPurchaseAccountToken: UUID? { lock.withLock { purchases.last?.appAccountToken } }
    public var productRequestCount: Int { lock.withLock { productRequests } }

    // MARK: StoreFront

    public func products(for productIDs: [String]) async throws -> [StoreProduct] {
        onCall("products")
        let (known, failure) = lock.withLock { () -> ([StoreProduct], String?) in
            productRequests += 1
            return (products, productsFailure)
        }
        if let failure { throw ScriptedStoreFrontError.failed(failure) }
        return known.filter { productIDs.contains($0.id) }
    }

    public func purchase(productID: String, appAccountToken: UUID) async throws -> StorePurchaseOutcome {
        onCall("purchase")
        let script = lock.withLock { () -> PurchaseScript in
            purchases.append((productID, appAccountToken))
            return scripts.isEmpty ? .pay : scripts.removeFirst()
        }
        switch script {
        case .pending: return .pending
        case .cancel: return .userCancelled
        case .fail(let reason): throw ScriptedStoreFrontError.failed(reason)
        case .pay, .payUnverified:
            guard lock.withLock({ products.contains { $0.id == productID } }) else {
                throw ScriptedStoreFrontError.failed("unknown product")
            }
            let transaction = try makeTransaction(productID: productID, appAccountToken: appAccountToken)
            let result: StoreTransactionResult =
                if case .payUnverified = script {
                    .unverified(transaction, reason: "invalidSignature")
                } else {
                    .verified(transaction)
                }
            lock.withLock { unfinished.append((transaction.id, result)) }
            return .success(result)
        }
    }

    public func transactionUpdates() -> AsyncStream<StoreTransactionResult> {
        let (stream, continuation) = AsyncStream.makeStream(of: StoreTransactionResult.self)
        lock.withLock { streams.append(continuation) }
        return stream
    }

    public func unfinishedTransactions() async -> [StoreTransactionResult] {
        onCall("unfinished")
        return lock.withLock { unfinished.map(\.result) }
    }

    public func finish(transactionID: String) async {
        onCall("finish")
        lock.withLock {
            if unfinished.contains(where: { $0.id == transactionID }) {
                unfinished.removeAll { $0.id == transactionID }
                finishes[transactionID, default: 0] += 1
            } else {
                redundantFinishes += 1
            }
        }
    }

    // MARK: Making transactions

    private func makeTransaction(productID: String, appAccountToken: UUID?) throws -> StoreTransaction {
        let id = lock.withLock { () -> UInt64 in
            nextId += 1
            return nextId
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return try transaction(
            from: TransactionFacts(
                id: String(id), productID: productID, appAccountToken: appAccountToken,
                purchaseDateMilliseconds: now - 1_000, revocationDateMilliseconds: nil))
    }

    private func transaction(from facts: TransactionFacts) throws -> StoreTransaction {
        let signed = try signer(facts)
        lock.withLock {
            if self.facts[facts.id] == nil { self.facts[facts.id] = facts }
        }
        return StoreTransaction(
            id: facts.id, originalID: facts.id, productID: facts.productID, appAccountToken: facts.appAccountToken,
            purchaseDate: Date(timeIntervalSince1970: Double(facts.purchaseDateMilliseconds) / 1000),
            revocationDate: facts.revocationDateMilliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) },
            signedTransactionInfo: signed)
    }
}

public enum ScriptedStoreFrontError: Error, Sendable, Hashable {
    case failed(String)
    case unknownTransaction
}
