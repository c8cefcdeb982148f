import Foundation

/// One row of `apple_iap_transactions` as the service reads it: the facts
/// Apple signed and the app claimed, plus the lifecycle `state`.
struct PaymentRecord: Equatable, Sendable {
    var id: UUID
    var userId: UUID?
    var productCode: String?
    var appStoreProductId: String
    var transactionId: String
    var originalTransactionId: String?
    var environment: String
    var bundleId: String
    var appAccountToken: UUID?
    var purchaseDateUnixMilliseconds: Int64
    var quantity: Int32
    var currency: String?
    var priceMilliunits: Int64?
    var ledgerEventId: String?
    var emailHash: String?
    var emailMasked: String?
    var state: PurchaseState
    var attemptCount: Int64
    var lastError: String?
    var createdAtUnixMilliseconds: Int64
    var updatedAtUnixMilliseconds: Int64
    /// Since when the row owes its pending step (`owed_since`, nil when
    /// nothing is owed): the step's owing period. A step stays in one period
    /// until its result is recorded; only a redrive of a refused grant owes
    /// the same step again, in a new period. A runner's result and its
    /// postponement apply only within the period it was leased in.
    var owedSinceUnixMicroseconds: Int64? = nil

    var status: PaymentStatus { PurchaseLifecycle.status(state) }
    var pendingStep: LedgerStep? { PurchaseLifecycle.pendingStep(state) }
}

/// A transaction seen for the first time, as saga step 1 (the app's verify),
/// a notification or reconciliation records it. `claim` is nil when Apple's
/// word alone could not name an owner and a value (`AppleClaimRule`).
struct NewPayment: Sendable {
    var appStoreProductId: String
    var transactionId: String
    var originalTransactionId: String?
    var webOrderLineItemId: String?
    var environment: String
    var bundleId: String
    var appAccountToken: UUID?
    var purchaseDateUnixMilliseconds: Int64
    var quantity: Int32
    var currency: String?
    var priceMilliunits: Int64?
    var signedTransactionInfo: String
    var applePayloadJSON: String
    /// The user Apple's appAccountToken names, kept on a row left unclaimed.
    var tokenOwner: UUID?
    var claim: PaymentClaim?
}

/// A verified App Store Server Notification, recorded by `notificationUUID`.
struct NotificationRecord: Sendable {
    var notificationUUID: UUID
    var notificationType: String
    var subtype: String?
    var environment: String?
    var transactionId: String?
    var signedDateUnixMilliseconds: Int64?
    var payloadJSON: String
}
