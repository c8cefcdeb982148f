import AppReceipt
import AppStoreServerAPI
import AppStoreVerification
import Contracts
import FieldRules
import Foundation
import Logging
import ServiceKit
import UUIDText

/// Credits the purchases a StoreKit 1 app receipt lists (`VerifyReceipt`).
/// The receipt is read locally (`AppReceiptReader`) and its PKCS #7
/// signature checked (`AppReceiptSignatureVerifier`: Apple's
/// receipt-signing chain under a configured root, at the receipt's creation
/// date), so only a receipt the App Store made is acted on; even so its
/// transaction ids only say what to ask Apple: each is looked up with
/// Get Transaction Info (production, then sandbox after a 404, of the
/// environments this deployment accepts), verified with the same
/// `SignedDataVerifier`, and credited through the app's verify path
/// (`PaymentProcessor.credit`), each on its own: one item's failure is its
/// result and undoes nothing of another's. Apple's deprecated
/// `verifyReceipt` is never called.
struct ReceiptCrediting: Sendable {
    let processor: PaymentProcessor
    /// Nil when the App Store Server API key is not configured: the route is off.
    let client: AppStoreServerAPIClient?
    let signatureVerifier: AppReceiptSignatureVerifier

    func verify(_ request: VerifyReceiptRequest, requestId: String?) async throws(PaymentsError)
        -> VerifyReceiptResponse
    {
        let claimant = try Self.validate(request)
        guard let client else { throw .appleAPINotConfigured }
        let reader = AppReceiptReader(receiptBytesMax: PaymentsLimits.receiptBytesMax)
        let bytes: [UInt8]
        let receipt: AppReceipt
        do {
            bytes = try reader.decode(base64: request.receiptData)
            receipt = try reader.read(bytes: bytes)
        } catch {
            // Only the stable code: the detail could describe the content.
            throw .receiptInvalid(code: error.code.name)
        }
        let log = processor.logger.with([
            "request_id": requestId ?? "", "user_id": UUIDText.lowercased(claimant.userId),
        ])
        try checkSignature(bytes, of: receipt, log: log)
        guard receipt.bundleId == processor.verifier.configuration.bundleId else {
            log.notice("refused an app receipt for another bundle id")
            throw .transactionInvalid(jwsFailure: "wrong_bundle", problem: "the receipt is for another app")
        }
        // Past the bound the rest waits for the next submission: the app
        // finishes what this one credits, StoreKit 1 drops those from the
        // receipt, and the same receipt then lists the rest. Refusing the
        // whole receipt would leave a user with more unfinished purchases
        // than the bound without any of them credited, for good.
        let looked = receipt.transactionIds.prefix(PaymentsLimits.receiptTransactionsMax)
        var response = VerifyReceiptResponse()
        response.deferredCount = UInt32(receipt.transactionIds.count - looked.count)
        if response.deferredCount > 0 {
            log.notice(
                "deferred the transactions of an app receipt past the bound", ["deferred": "\(response.deferredCount)"])
        }
        var ignored = 0
        for transactionId in looked {
            if let result = await credit(
                transactionId, claimant: claimant, client: client, log: log, requestId: requestId)
            {
                response.results.append(result)
            } else {
                ignored += 1
            }
        }
        log.info(
            "app receipt processed",
            [
                "matched": "\(response.results.count)",
                "failed": "\(response.results.filter { $0.status == .failed }.count)",
                "ignored": "\(ignored)",
            ])
        return response
    }

    /// Refuses a receipt the App Store did not sign: its chain is checked at
    /// the receipt's own creation date (signed with it), so a receipt signed
    /// before Apple's older certificates expired stays genuine.
    private func checkSignature(_ bytes: [UInt8], of receipt: AppReceipt, log: Logger) throws(PaymentsError) {
        guard let createdAt = receipt.creationDate?.millisecondsSince1970 else {
            log.notice("refused an app receipt without a readable creation date")
            throw .receiptInvalid(code: Self.creationDateMissing)
        }
        do {
            try signatureVerifier.verify(receipt: bytes, createdAt: AppStoreTimestamp(millisecondsSince1970: createdAt))
        } catch {
            var fields = ["receipt_failure": error.code]
            // OpenSSL's verify error (never receipt content): a root Apple
            // moved to reads "unable to get local issuer certificate".
            if case .chainUntrusted(let reason) = error { fields["reason"] = reason }
            log.notice("refused an app receipt whose signature is not Apple's", fields)
            throw .receiptInvalid(code: error.code)
        }
    }

    /// The `receipt-failure` code of a receipt without its creation date
    /// (type 12), or with one that is not an RFC 3339 date.
    static let creationDateMissing = "creationDateMissing"

    /// One transaction id of the receipt, to its result; nil for a purchase
    /// of another account (its appAccountToken is another user's, or another
    /// user claimed it first): ignored, as the receipt-confirmation contract
    /// says, with an audit line (ids only), and nothing about it is
    /// answered: a device shared by two accounts must not tell one of the
    /// other's purchases.
    private func credit(
        _ transactionId: String, claimant: ValidVerifyRequest, client: AppStoreServerAPIClient, log: Logger,
        requestId: String?
    ) async -> ReceiptItemResult? {
        var result = ReceiptItemResult()
        result.transactionId = transactionId
        // The receipt's unsigned text: logged only once it is a transaction id
        // (it could be an email or a token someone put there).
        let isTransactionId = (try? TransactionIDRule.validated(transactionId, field: "transaction_id")) != nil
        let itemLog = log.with(["transaction_id": isTransactionId ? transactionId : "(not a transaction id)"])
        do throws(PaymentsError) {
            do {
                _ = try TransactionIDRule.validated(transactionId, field: "transaction_id")
            } catch {
                throw PaymentsError(error)
            }
            let signed = try await signedTransaction(transactionId, client: client, log: itemLog)
            let transaction = try await processor.verifiedTransaction(signed)
            guard let productId = transaction.productId else {
                throw .transactionInvalid(jwsFailure: "claims", problem: "productId is required")
            }
            let package = try await processor.catalogPackage(appStoreProductId: productId, requestId: requestId)
            result.productCode = package?.productCode ?? ""
            var valid = claimant
            valid.transactionId = transactionId
            valid.appStoreProductId = productId
            valid.productCode = package?.productCode ?? ""
            valid.signedTransactionInfo = signed
            let answer = try await processor.credit(
                transaction, claimedBy: valid, package: package, log: itemLog, requestId: requestId)
            result.status = answer.outcome == .granted ? .success : .duplicate
            result.creditsAdded = answer.creditsAdded
        } catch .transactionConflict {
            itemLog.notice("ignored a transaction of another account in an app receipt")
            return nil
        } catch {
            itemLog.notice("app receipt item not credited", ["reason": error.reason.rawValue])
            result.status = .failed
            result.errorGrpcCode = Int32(error.grpcStatusCode)
            result.errorReason = error.reason.rawValue
            if case .transactionInvalid(let failure, _) = error { result.errorDetail = failure }
        }
        return result
    }

    /// Apple's signed transaction for `transactionId`. Unknown to Apple in
    /// every environment asked: invalid (an id Apple never issued). Any
    /// other failure of Apple's API: retryable, as verify's OCSP failures.
    private func signedTransaction(_ transactionId: String, client: AppStoreServerAPIClient, log: Logger)
        async throws(PaymentsError) -> String
    {
        let accepted = processor.verifier.configuration.allowedEnvironments
        let environments = AppStoreServerEnvironment.allCases.filter {
            accepted.contains(AppStoreEnvironment(rawValue: $0.rawValue))
        }
        do {
            if environments == [.production, .sandbox] {
                return try await client.transactionInfoProductionThenSandbox(transactionId: transactionId).value
                    .signedTransactionInfo
            }
            guard let only = environments.first else {
                throw PaymentsError.transactionInvalid(
                    jwsFailure: "not_on_the_api", problem: "no App Store environment is accepted")
            }
            return try await client.transactionInfo(transactionId: transactionId, environment: only)
                .signedTransactionInfo
        } catch let error as PaymentsError {
            throw error
        } catch let error as AppStoreServerAPIError where error.isNotFound {
            log.notice("Apple does not know a transaction of the receipt")
            throw .transactionInvalid(jwsFailure: "not_found_at_apple", problem: "Apple does not know the transaction")
        } catch let error as AppStoreServerAPIError where error.kind == .badRequest {
            // Apple refuses the id itself (4000006 InvalidTransactionId):
            // asking again cannot change that.
            log.notice(
                "Apple refuses a transaction id of the receipt",
                ["error_code": error.apiErrorCode.map { "\($0.rawValue)" } ?? ""])
            throw .transactionInvalid(jwsFailure: "refused_by_apple", problem: "Apple refuses the transaction id")
        } catch let error as AppStoreServerAPIError {
            // Transient, or ours to fix (401, 403, TLS, a 404 without Apple's
            // code; the client logged it, a 401 as an alert): the app's
            // retry succeeds once it is fixed.
            throw .appleUnavailable(detail: "App Store Server API: \(error.kind.rawValue)")
        } catch {
            throw .internalFailure(detail: "unexpected error looking up a transaction")
        }
    }

    /// The caller's identity, as verify checks it; the receipt's size.
    static func validate(_ request: VerifyReceiptRequest) throws(PaymentsError) -> ValidVerifyRequest {
        let user: UUID
        do {
            user = try UUIDRule.uuid(request.userId, field: "user_id")
            _ = try EmailHashRule.validated(request.emailHash, field: "email_hash")
            if !request.emailMasked.isEmpty { _ = try EmailMask.validated(request.emailMasked, field: "email_masked") }
        } catch {
            throw PaymentsError(error)
        }
        guard !request.receiptData.isEmpty else {
            throw .validationFailed(field: "receipt_data", problem: "is required")
        }
        guard request.receiptData.utf8.count <= PaymentsLimits.receiptDataBytesMax else {
            throw .validationFailed(
                field: "receipt_data", problem: "longer than \(PaymentsLimits.receiptDataBytesMax) bytes")
        }
        return ValidVerifyRequest(
            userId: user, emailHash: request.emailHash, productCode: "", appStoreProductId: "", transactionId: "",
            signedTransactionInfo: "", appAccountToken: nil, emailMasked: request.emailMasked)
    }
}
