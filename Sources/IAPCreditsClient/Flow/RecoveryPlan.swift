import Foundation

/// What to do at launch (and on every transaction StoreKit delivers later)
/// with paid purchases not yet credited: StoreKit's unfinished
/// transactions merged with the library's own records by transaction id.
/// Pure.
///
/// - A purchase tagged with another user's appAccountToken is left alone
///   (unfinished, not submitted): the gateway would refuse it as a
///   conflict for this user, and it is credited when its owner signs in.
/// - A transaction StoreKit could not verify is never submitted nor finished.
/// - A transaction without a record gets one (its package code from the
///   packages shown); one no package names is resolved by asking the
///   gateway where it stands.
/// - A transaction with a record is submitted with StoreKit's current copy
///   of it, not the one saved at payment: after a refund StoreKit hands it
///   back with a `revocationDate`, and the saved copy, sent to a backend
///   that has not yet heard of the refund, would be credited. The record
///   keeps its package code and counters and is written again.
/// - A record StoreKit no longer lists unfinished is submitted too (the app
///   died after finishing but before removing the record, or before
///   writing it): the answer confirms the credit, and finishing it again
///   does nothing.
public struct RecoveryPlan: Sendable, Hashable {
    public enum Item: Sendable, Hashable {
        /// Submit it (`isNew`: the record is new, or now holds StoreKit's
        /// newer copy of the transaction: write it first).
        case submit(PendingPurchaseRecord, isNew: Bool)
        /// Bought by another account on this device: leave it for that account.
        case otherAccount(transactionId: String)
        /// StoreKit could not verify it: keep it, report it.
        case unverified(transactionId: String, reason: String)
        /// No package names its product: ask the gateway (GET transaction).
        case unknownProduct(StoreTransaction)
    }

    public let items: [Item]

    public init(items: [Item]) { self.items = items }

    public static func make(
        records: [PendingPurchaseRecord], unfinished: [StoreTransactionResult], accountToken: UUID,
        productCodes: [String: String], now: Date
    ) -> RecoveryPlan {
        var recordsById: [String: PendingPurchaseRecord] = [:]
        for record in records { recordsById[record.transactionId] = record }
        var items: [Item] = []
        var planned = Set<String>()

        func belongsToOther(_ token: UUID?) -> Bool { token.map { $0 != accountToken } ?? false }

        for result in unfinished {
            let transaction = result.transaction
            guard planned.insert(transaction.id).inserted else { continue }
            guard case .verified = result else {
                if case .unverified(_, let reason) = result {
                    items.append(.unverified(transactionId: transaction.id, reason: reason))
                }
                continue
            }
            if belongsToOther(transaction.appAccountToken) {
                items.append(.otherAccount(transactionId: transaction.id))
            } else if let stored = recordsById[transaction.id] {
                let current = stored.replacing(signedTransactionInfo: transaction.signedTransactionInfo)
                items.append(.submit(current, isNew: current != stored))
            } else if let productCode = productCodes[transaction.productID],
                PendingPurchaseRecord.isValidTransactionId(transaction.id)
            {
                items.append(
                    .submit(
                        PendingPurchaseRecord(transaction: transaction, productCode: productCode, now: now), isNew: true
                    ))
            } else {
                items.append(.unknownProduct(transaction))
            }
        }
        for record in records where planned.insert(record.transactionId).inserted {
            items.append(
                belongsToOther(record.appAccountToken)
                    ? .otherAccount(transactionId: record.transactionId) : .submit(record, isNew: false))
        }
        return RecoveryPlan(items: items)
    }

    /// The records to submit, in plan order.
    public var submissions: [PendingPurchaseRecord] {
        items.compactMap { if case .submit(let record, _) = $0 { record } else { nil } }
    }
}
