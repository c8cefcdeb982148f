import Foundation

/// Checks a VerifyTransaction request before any verification or I/O, so
/// bad input is refused with a field name and writes nothing.
struct ValidVerifyRequest: Sendable, Equatable {
    var userId: UUID
    var emailHash: String
    var productCode: String
    var appStoreProductId: String
    var transactionId: String
    var signedTransactionInfo: String
    var appAccountToken: UUID?
    var emailMasked: String
}

enum PaymentsLimits {
    /// A JWS larger than this is refused before parsing (Apple's are ~2-5 KiB).
    static let signedPayloadBytesMax = 64 * 1024
    static let productCodeBytesMax = 64
    static let appStoreProductIdBytesMax = 255
    static let transactionIdBytesMax = 32
    static let emailMaskedBytesMax = 320
    /// Rows the saga worker claims per poll, and steps it runs at once.
    static let workerBatchMax = 32
    static let workerConcurrencyMax = 8
    /// Steps one runner takes in a row for one transaction (a grant, then a
    /// clawback and a reversal at most, with room to spare).
    static let inlineStepsMax = 6
    /// How long a verify waits for another runner's lease on its grant.
    static let leaseWaitMax: Duration = .seconds(3)
    /// Packs one transaction may buy: StoreKit's own bound for a consumable.
    static let quantityMax: Int32 = 10
}

enum VerifyRequestValidation {
    static func validate(
        userId: String, emailHash: String, productCode: String, appStoreProductId: String,
        transactionId: String, signedTransactionInfo: String, appAccountToken: String, emailMasked: String
    ) throws(PaymentsError) -> ValidVerifyRequest {
        guard let user = UUID(uuidString: userId) else { throw .validationFailed(field: "user_id", problem: "must be a UUID") }
        guard emailHash.utf8.count == 64, emailHash.utf8.allSatisfy(isLowerHex) else {
            throw .validationFailed(field: "email_hash", problem: "must be 64 lower-case hex digits")
        }
        guard (1...PaymentsLimits.productCodeBytesMax).contains(productCode.utf8.count),
              productCode.utf8.allSatisfy({ isLowerAlphanumeric($0) || $0 == UInt8(ascii: "_") }) else {
            throw .validationFailed(field: "product_code", problem: "must be 1-64 of [a-z0-9_]")
        }
        guard (1...PaymentsLimits.appStoreProductIdBytesMax).contains(appStoreProductId.utf8.count),
              appStoreProductId.utf8.allSatisfy(isPrintableASCII) else {
            throw .validationFailed(field: "app_store_product_id", problem: "must be 1-255 printable ASCII characters")
        }
        guard (1...PaymentsLimits.transactionIdBytesMax).contains(transactionId.utf8.count),
              transactionId.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw .validationFailed(field: "transaction_id", problem: "must be 1-32 digits")
        }
        guard !signedTransactionInfo.isEmpty else {
            throw .validationFailed(field: "signed_transaction_info", problem: "is required")
        }
        guard signedTransactionInfo.utf8.count <= PaymentsLimits.signedPayloadBytesMax else {
            throw .validationFailed(field: "signed_transaction_info", problem: "is larger than 64 KiB")
        }
        var token: UUID?
        if !appAccountToken.isEmpty {
            guard let parsed = UUID(uuidString: appAccountToken) else {
                throw .validationFailed(field: "app_account_token", problem: "must be a UUID")
            }
            token = parsed
        }
        guard emailMasked.utf8.count <= PaymentsLimits.emailMaskedBytesMax, !emailMasked.utf8.contains(where: { $0 < 0x20 }) else {
            throw .validationFailed(field: "email_masked", problem: "too long or has control characters")
        }
        return ValidVerifyRequest(
            userId: user, emailHash: emailHash, productCode: productCode, appStoreProductId: appStoreProductId,
            transactionId: transactionId, signedTransactionInfo: signedTransactionInfo, appAccountToken: token, emailMasked: emailMasked)
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
    }

    private static func isPrintableASCII(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }
}
