#if canImport(StoreKit) && !os(visionOS)
import Foundation
import StoreKit

/// `StoreFront` on StoreKit 2. Create one per app and hand it to
/// `CreditsClient`; `transactionUpdates()` must be listened to from launch
/// (the client does that in `start()`). Compiled only where StoreKit exists
/// (visionOS is left out: its purchases need a confirmation scene).
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
public final class StoreKit2StoreFront: StoreFront, @unchecked Sendable {
    /// StoreKit's own transactions by id, so `finish` reaches the one it was given.
    private let lock = NSLock()
    private var seen: [UInt64: Transaction] = [:]

    public init() {}

    public func products(for productIDs: [String]) async throws -> [StoreProduct] {
        try await Product.products(for: productIDs).map { product in
            StoreProduct(
                id: product.id, displayName: product.displayName, displayPrice: product.displayPrice,
                price: product.price, currencyCode: product.priceFormatStyle.currencyCode)
        }
    }

    public func purchase(productID: String, appAccountToken: UUID) async throws -> StorePurchaseOutcome {
        guard let product = try await Product.products(for: [productID]).first else {
            throw StoreKit2StoreFrontError.productNotFound
        }
        let result: Product.PurchaseResult
        do {
            result = try await product.purchase(options: [.appAccountToken(appAccountToken)])
        } catch StoreKitError.userCancelled {
            return .userCancelled
        }
        switch result {
        case .success(let verification): return .success(remember(verification))
        case .pending: return .pending
        case .userCancelled: return .userCancelled
        @unknown default: throw StoreKit2StoreFrontError.unknownPurchaseResult
        }
    }

    public func transactionUpdates() -> AsyncStream<StoreTransactionResult> {
        AsyncStream { continuation in
            let task = Task {
                for await verification in Transaction.updates {
                    continuation.yield(self.remember(verification))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    public func unfinishedTransactions() async -> [StoreTransactionResult] {
        var results: [StoreTransactionResult] = []
        for await verification in Transaction.unfinished {
            results.append(remember(verification))
            if results.count >= ClientLimits.pendingRecordsMax { break }
        }
        return results
    }

    public func finish(transactionID: String) async {
        guard let id = UInt64(transactionID) else { return }
        if let known = lock.withLock({ seen.removeValue(forKey: id) }) {
            await known.finish()
            return
        }
        for await verification in Transaction.unfinished where verification.unsafePayloadValue.id == id {
            await verification.unsafePayloadValue.finish()
            return
        }
    }

    private func remember(_ verification: VerificationResult<Transaction>) -> StoreTransactionResult {
        let transaction = verification.unsafePayloadValue
        lock.withLock {
            if seen.count >= ClientLimits.pendingRecordsMax { seen.removeAll() }
            seen[transaction.id] = transaction
        }
        let converted = StoreTransaction(
            id: String(transaction.id), originalID: String(transaction.originalID), productID: transaction.productID,
            appAccountToken: transaction.appAccountToken, purchaseDate: transaction.purchaseDate,
            revocationDate: transaction.revocationDate, signedTransactionInfo: verification.jwsRepresentation)
        switch verification {
        case .verified: return .verified(converted)
        case .unverified(_, let error): return .unverified(converted, reason: String(describing: error))
        }
    }
}

/// Why `StoreKit2StoreFront.purchase` failed before payment.
public enum StoreKit2StoreFrontError: Error, Sendable {
    /// StoreKit does not sell the product (not in App Store Connect or not approved).
    case productNotFound
    /// A purchase result this version of the library does not know.
    case unknownPurchaseResult
}
#endif
