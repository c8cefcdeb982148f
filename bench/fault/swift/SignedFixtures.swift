import AppStoreVerification
import Foundation

/// Signs what the App Store would send for one purchase: the StoreKit 2
/// transaction the app submits to verify, and later the REFUND notification
/// (App Store Server Notifications V2) Apple posts. Every value is ASCII the
/// driver chose (digits, ids), so the JSON is written directly.
struct SignedFixtures: Sendable {
    let authority: LocalTestingCertificateAuthority
    let bundleId: String
    let environment = "Sandbox"

    /// The verify route's body for a fresh transaction.
    func verifyBody(transactionId: String, purchaseMilliseconds: Int64) throws -> String {
        let jws = try authority.sign(
            payloadJSON: transaction(
                transactionId, purchaseMilliseconds: purchaseMilliseconds,
                signedMilliseconds: purchaseMilliseconds, revokedMilliseconds: nil))
        return
            "{\"productCode\":\"\(FaultLimits.productCode)\",\"appStoreProductId\":\"\(FaultLimits.appStoreProductId)\","
            + "\"transactionId\":\"\(transactionId)\",\"signedTransactionInfo\":\"\(jws)\"}"
    }

    /// The notification route's body: a signed REFUND of the transaction.
    /// Apple resends the same notification (same UUID) until it gets a 200.
    func refundBody(transactionId: String, purchaseMilliseconds: Int64) throws -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let revoked = try authority.sign(
            payloadJSON: transaction(
                transactionId, purchaseMilliseconds: purchaseMilliseconds,
                signedMilliseconds: now, revokedMilliseconds: now))
        let notification =
            "{\"notificationType\":\"REFUND\",\"notificationUUID\":\"\(UUID().uuidString.lowercased())\","
            + "\"version\":\"2.0\",\"signedDate\":\(now),\"data\":{\"bundleId\":\"\(bundleId)\",\"bundleVersion\":\"1\","
            + "\"environment\":\"\(environment)\",\"signedTransactionInfo\":\"\(revoked)\"}}"
        return "{\"signedPayload\":\"\(try authority.sign(payloadJSON: notification))\"}"
    }

    private func transaction(
        _ id: String, purchaseMilliseconds: Int64, signedMilliseconds: Int64, revokedMilliseconds: Int64?
    ) -> String {
        var json =
            "{\"transactionId\":\"\(id)\",\"originalTransactionId\":\"\(id)\",\"bundleId\":\"\(bundleId)\","
            + "\"productId\":\"\(FaultLimits.appStoreProductId)\",\"purchaseDate\":\(purchaseMilliseconds),"
            + "\"originalPurchaseDate\":\(purchaseMilliseconds),\"quantity\":1,\"type\":\"Consumable\","
            + "\"inAppOwnershipType\":\"PURCHASED\",\"environment\":\"\(environment)\",\"signedDate\":\(signedMilliseconds)"
        if let revokedMilliseconds { json += ",\"revocationDate\":\(revokedMilliseconds),\"revocationReason\":0" }
        return json + "}"
    }
}
