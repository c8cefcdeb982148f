import AppReceipt
import FieldRules
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
    /// The shared rules' sizes live in FieldRules; this one is still read here.
    static let transactionIdBytesMax = FieldLimits.transactionIdDigitsMax
    /// Rows the saga worker claims per poll, all run at once: a row is
    /// claimed only when it can start, so its lease (`SAGA_LEASE_MS`) runs
    /// from its start. A claimed row waiting for a slot could see its lease
    /// end before its step began, and another instance run it meanwhile.
    static let workerConcurrencyMax = 8
    /// Steps one runner takes in a row for one transaction (a grant, then a
    /// clawback and a reversal at most, with room to spare).
    static let inlineStepsMax = 6
    /// How long a verify waits for another runner's lease on its grant.
    static let leaseWaitMax: Duration = .seconds(3)
    /// Packs one transaction may buy: StoreKit's own bound for a consumable.
    static let quantityMax: Int32 = 10
    /// ListTransactions pages.
    static let transactionPageSizeDefault = 20
    static let transactionPageSizeMax = 100
    /// Transactions one app receipt may make us look up at Apple (one Get
    /// Transaction Info each, in sequence): StoreKit 1 keeps a consumable in
    /// the receipt only until the app finishes it, so a real receipt lists a
    /// few; 10 lookups of about a second fit the gateway's 30 s deadline.
    /// Of a receipt listing more, the first this many are looked up and the
    /// rest are answered as deferred (`deferred_count`): sent again once the
    /// app finished the credited ones.
    static let receiptTransactionsMax = 10
    /// The decoded receipt (AppReceiptReader's bound; its default, 512 KiB).
    static let receiptBytesMax = AppReceiptLimits.receiptBytesMaxDefault
    /// The base64 text of that many bytes (4 characters per 3 bytes).
    static let receiptDataBytesMax = (receiptBytesMax + 2) / 3 * 4
}

/// The request's field rules are FieldRules' (the gateway and PointsService
/// check the same ones); a refusal is VALIDATION_FAILED naming the proto field.
enum VerifyRequestValidation {
    static func validate(
        userId: String, emailHash: String, productCode: String, appStoreProductId: String,
        transactionId: String, signedTransactionInfo: String, appAccountToken: String, emailMasked: String
    ) throws(PaymentsError) -> ValidVerifyRequest {
        do {
            let user = try UUIDRule.uuid(userId, field: "user_id")
            _ = try EmailHashRule.validated(emailHash, field: "email_hash")
            _ = try ProductCodeRule.validated(productCode, field: "product_code")
            _ = try AppStoreProductIDRule.validated(appStoreProductId, field: "app_store_product_id")
            _ = try TransactionIDRule.validated(transactionId, field: "transaction_id")
            try checkSignedTransactionInfo(signedTransactionInfo)
            let token = appAccountToken.isEmpty ? nil : try UUIDRule.uuid(appAccountToken, field: "app_account_token")
            // Empty: no mask known. Otherwise the one mask check, which every
            // mask the gateway makes passes, so PointsService will too.
            if !emailMasked.isEmpty { _ = try EmailMask.validated(emailMasked, field: "email_masked") }
            return ValidVerifyRequest(
                userId: user, emailHash: emailHash, productCode: productCode, appStoreProductId: appStoreProductId,
                transactionId: transactionId, signedTransactionInfo: signedTransactionInfo, appAccountToken: token,
                emailMasked: emailMasked)
        } catch {
            throw .validationFailed(field: error.field, problem: error.problem)
        }
    }

    /// Only presence and size: the verifier checks the rest. PaymentsService's
    /// own rule, reported like the shared ones.
    private static func checkSignedTransactionInfo(_ text: String) throws(FieldRuleError) {
        let field = "signed_transaction_info", rule = "a compact JWS"
        guard !text.isEmpty else {
            throw FieldRuleError(
                field: field, code: .missing, rule: rule, bytesMax: PaymentsLimits.signedPayloadBytesMax)
        }
        guard text.utf8.count <= PaymentsLimits.signedPayloadBytesMax else {
            throw FieldRuleError(
                field: field, code: .tooLong, rule: rule, bytesMax: PaymentsLimits.signedPayloadBytesMax)
        }
    }
}

extension PaymentsError {
    /// A shared field rule's refusal as this service reports it.
    init(_ error: FieldRuleError) {
        self = .validationFailed(field: error.field, problem: error.problem)
    }
}
