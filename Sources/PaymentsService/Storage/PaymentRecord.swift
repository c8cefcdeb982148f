import Foundation

/// One row of `apple_iap_transactions` as the service reads it.
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
    var revocationDateUnixMilliseconds: Int64?
    var revocationReason: String?
    var credits: Int64
    var currency: String?
    var priceMilliunits: Int64?
    var ledgerEventId: String?
    var emailHash: String?
    var emailMasked: String?
    var state: PaymentState
    var attemptCount: Int64
    var lastError: String?
    var createdAtUnixMilliseconds: Int64
    var updatedAtUnixMilliseconds: Int64
}

/// What saga step 1 writes for a freshly verified purchase.
struct NewPayment: Sendable {
    var userId: UUID
    var productCode: String
    var appStoreProductId: String
    var transactionId: String
    var originalTransactionId: String?
    var webOrderLineItemId: String?
    var environment: String
    var bundleId: String
    var appAccountToken: UUID?
    var purchaseDateUnixMilliseconds: Int64
    var credits: Int64
    var currency: String?
    var priceMilliunits: Int64?
    var signedTransactionInfo: String
    var applePayloadJSON: String
    var emailHash: String
    var emailMasked: String
}

/// A transaction Apple refunded or revoked before this service ever
/// verified it: recorded as `revoked` so a later verify is refused.
struct RevokedPayment: Sendable {
    var userId: UUID?
    var productCode: String?
    var appStoreProductId: String
    var transactionId: String
    var originalTransactionId: String?
    var environment: String
    var bundleId: String
    var appAccountToken: UUID?
    var purchaseDateUnixMilliseconds: Int64
    var revocationDateUnixMilliseconds: Int64?
    var revocationReason: String?
    var signedTransactionInfo: String
    var applePayloadJSON: String
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
