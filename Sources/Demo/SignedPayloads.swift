import Foundation

/// The JSON payloads a StoreKit 2 purchase and an App Store Server
/// Notification V2 carry, built as Apple shapes them (field names and
/// millisecond timestamps as documented), for the local testing CA to sign.
enum SignedPayloads {
    /// A consumable purchase (or, with `revocationDateMilliseconds`, its refund).
    static func transaction(
        transactionId: String, productId: String, bundleId: String, environment: String,
        appAccountToken: String?, purchaseDateMilliseconds: Int64, signedDateMilliseconds: Int64,
        revocationDateMilliseconds: Int64? = nil, revocationReason: Int? = nil
    ) -> String {
        var object: [String: Any] = [
            "transactionId": transactionId, "originalTransactionId": transactionId, "bundleId": bundleId,
            "productId": productId, "purchaseDate": purchaseDateMilliseconds, "originalPurchaseDate": purchaseDateMilliseconds,
            "quantity": 1, "type": "Consumable", "inAppOwnershipType": "PURCHASED", "signedDate": signedDateMilliseconds,
            "environment": environment, "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441",
            "price": 1990, "currency": "USD",
        ]
        if let appAccountToken { object["appAccountToken"] = appAccountToken }
        if let revocationDateMilliseconds { object["revocationDate"] = revocationDateMilliseconds }
        if let revocationReason { object["revocationReason"] = revocationReason }
        return json(object)
    }

    /// A V2 notification with a `data` member wrapping a signed transaction.
    static func notification(
        type: String, notificationUUID: String, bundleId: String, appAppleId: Int64?, environment: String,
        signedTransactionInfo: String, signedDateMilliseconds: Int64
    ) -> String {
        var data: [String: Any] = [
            "bundleId": bundleId, "bundleVersion": "1", "environment": environment, "signedTransactionInfo": signedTransactionInfo,
        ]
        if let appAppleId { data["appAppleId"] = appAppleId }
        return json([
            "notificationType": type, "notificationUUID": notificationUUID, "version": "2.0",
            "signedDate": signedDateMilliseconds, "data": data,
        ])
    }

    private static func json(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
