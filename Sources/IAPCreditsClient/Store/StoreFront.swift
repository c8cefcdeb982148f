import Foundation

/// The App Store as the library uses it: a small seam so the purchase flow
/// is tested on Linux with a fake and runs on StoreKit 2 in an app
/// (`StoreKit2StoreFront`).
public protocol StoreFront: Sendable {
    /// The products StoreKit knows among `productIDs` (unknown ids are left out).
    func products(for productIDs: [String]) async throws -> [StoreProduct]

    /// Shows the purchase sheet for `productID`, tagging the purchase with
    /// the user's `appAccountToken`. Throws when StoreKit failed before
    /// taking payment; a cancelled sheet is `.userCancelled`, not an error.
    func purchase(productID: String, appAccountToken: UUID) async throws -> StorePurchaseOutcome

    /// Transactions StoreKit delivers outside a purchase call: approved
    /// pending purchases, purchases from other devices, refunds, and (at
    /// launch) unfinished ones. One stream per call.
    func transactionUpdates() -> AsyncStream<StoreTransactionResult>

    /// Every transaction StoreKit still holds unfinished (`Transaction.unfinished`).
    func unfinishedTransactions() async -> [StoreTransactionResult]

    /// Finishes the transaction `transactionID`: StoreKit stops delivering
    /// it. Irreversible; the library calls it only after the gateway
    /// credited the purchase (or said Apple revoked it). Finishing one
    /// StoreKit no longer holds unfinished does nothing.
    func finish(transactionID: String) async
}
