import StrictJSON

/// The JSON payloads a StoreKit 2 purchase and an App Store Server
/// Notification V2 carry, built as Apple shapes them (field names and
/// millisecond timestamps as documented), for the local testing CA to sign.
/// Written by StrictJSON's writer, the one JSON writer of the project.
enum SignedPayloads {
    /// A consumable purchase (or, with `revocationDateMilliseconds`, its refund).
    static func transaction(
        transactionId: String, productId: String, bundleId: String, environment: String,
        appAccountToken: String?, purchaseDateMilliseconds: Int64, signedDateMilliseconds: Int64,
        revocationDateMilliseconds: Int64? = nil, revocationReason: Int? = nil
    ) -> String {
        var object = JSONObject([
            "transactionId": .string(transactionId), "originalTransactionId": .string(transactionId),
            "bundleId": .string(bundleId),
            "productId": .string(productId), "purchaseDate": .integer(purchaseDateMilliseconds),
            "originalPurchaseDate": .integer(purchaseDateMilliseconds), "quantity": .integer(1),
            "type": .string("Consumable"),
            "inAppOwnershipType": .string("PURCHASED"), "signedDate": .integer(signedDateMilliseconds),
            "environment": .string(environment),
            "transactionReason": .string("PURCHASE"), "storefront": .string("USA"), "storefrontId": .string("143441"),
            "price": .integer(1990), "currency": .string("USD"),
        ])
        object.insertIfPresent("appAccountToken", appAccountToken.map(JSONValue.string))
        object.insertIfPresent("revocationDate", revocationDateMilliseconds.map(JSONValue.integer))
        object.insertIfPresent("revocationReason", revocationReason.map { .integer(Int64($0)) })
        return JSONWriter.string(of: .object(object))
    }

    /// A V2 notification with a `data` member wrapping a signed transaction.
    static func notification(
        type: String, notificationUUID: String, bundleId: String, appAppleId: Int64?, environment: String,
        signedTransactionInfo: String, signedDateMilliseconds: Int64
    ) -> String {
        var data = JSONObject([
            "bundleId": .string(bundleId), "bundleVersion": .string("1"), "environment": .string(environment),
            "signedTransactionInfo": .string(signedTransactionInfo),
        ])
        data.insertIfPresent("appAppleId", appAppleId.map(JSONValue.integer))
        return JSONWriter.string(
            of: .object(
                JSONObject([
                    "notificationType": .string(type), "notificationUUID": .string(notificationUUID),
                    "version": .string("2.0"),
                    "signedDate": .integer(signedDateMilliseconds), "data": .object(data),
                ])))
    }
}
