import AppStoreVerification
import Contracts
import Foundation
import ServiceKit

/// Drives a purchase from a signed transaction to exactly one grant: verify
/// the JWS and its claims, record it (saga step 1), grant (step 2), mark
/// granted (step 3). Decisions come from `PaymentSaga`; every write goes
/// through `PaymentsStore` under the row lock.
final class PaymentProcessor: Sendable {
    let store: PaymentsStore
    let verifier: SignedDataVerifier
    let points: PointsLedger
    let catalog: CatalogCache
    let logger: Logger
    let creditPolicy: SandboxCreditPolicy

    init(store: PaymentsStore, verifier: SignedDataVerifier, points: PointsLedger, catalog: CatalogCache, logger: Logger, creditPolicy: SandboxCreditPolicy) {
        self.creditPolicy = creditPolicy
        self.store = store
        self.verifier = verifier
        self.points = points
        self.catalog = catalog
        self.logger = logger
    }

    // MARK: VerifyTransaction

    func verify(_ request: VerifyTransactionRequest, requestId: String?) async throws(PaymentsError) -> VerifyTransactionResponse {
        let valid = try VerifyRequestValidation.validate(
            userId: request.userId, emailHash: request.emailHash, productCode: request.productCode,
            appStoreProductId: request.appStoreProductId, transactionId: request.transactionId,
            signedTransactionInfo: request.signedTransactionInfo, appAccountToken: request.appAccountToken,
            emailMasked: request.emailMasked)
        let log = logger.with(["request_id": requestId ?? "", "transaction_id": valid.transactionId, "user_id": valid.userId.uuidString.lowercased()])

        guard let package = try await catalog.packages(requestId: requestId).first(where: { $0.productCode == valid.productCode }) else {
            throw .productNotFound
        }
        guard package.appStoreProductId == valid.appStoreProductId else {
            throw .productMismatch(problem: "app_store_product_id does not belong to product_code")
        }
        let transaction = try await verifiedTransaction(valid.signedTransactionInfo)
        try checkClaims(transaction, against: valid)
        try checkCreditPolicy(transaction, userId: valid.userId, log: log)
        try await checkAccountToken(transaction, against: valid)

        if transaction.revocationDate != nil {
            try await recordRevoked(transaction, signed: valid.signedTransactionInfo, userId: valid.userId, productCode: valid.productCode)
            log.notice("refused a revoked transaction")
            throw .transactionRevoked
        }

        // Saga step 1.
        let outcome = try await store.insertVerified(NewPayment(
            userId: valid.userId, productCode: valid.productCode, appStoreProductId: valid.appStoreProductId,
            transactionId: valid.transactionId, originalTransactionId: transaction.originalTransactionId,
            webOrderLineItemId: transaction.webOrderLineItemId, environment: transaction.environment?.rawValue ?? "",
            bundleId: transaction.bundleId ?? "", appAccountToken: transaction.appAccountToken,
            purchaseDateUnixMilliseconds: transaction.purchaseDate?.millisecondsSince1970 ?? 0, credits: package.credits,
            currency: transaction.currency, priceMilliunits: transaction.price, signedTransactionInfo: valid.signedTransactionInfo,
            applePayloadJSON: transaction.payloadJSON, emailHash: valid.emailHash, emailMasked: valid.emailMasked))
        switch outcome {
        case .inserted(let record):
            log.info("transaction verified", ["product_code": valid.productCode, "environment": record.environment])
            FaultInjection.hit("payments.after_step1")
            return try await grantInline(record, requestId: requestId)
        case .existing(let record):
            switch PaymentSaga.decideExisting(record.state, ownerUserId: record.userId?.uuidString, requestingUserId: valid.userId.uuidString) {
            case .alreadyGranted:
                return response(record, outcome: .alreadyGranted, creditsAdded: 0,
                                balance: try await points.balance(userId: valid.userId, requestId: requestId))
            case .resumeGrant:
                return try await grantInline(record, requestId: requestId)
            case .refusedEarlier(let failureCode):
                throw Self.refusal(failureCode)
            case .revoked:
                throw .transactionRevoked
            case .conflict:
                log.warning("transaction submitted by a second user")
                throw .transactionConflict
            }
        }
    }

    /// Verifies the JWS; Apple-side unavailability is retryable, anything
    /// else is an invalid transaction naming the verifier's failure.
    func verifiedTransaction(_ jws: String) async throws(PaymentsError) -> JWSTransaction {
        do {
            return try await verifier.verifyTransaction(jws)
        } catch {
            if error.isRetryable { throw .appleUnavailable(detail: error.code) }
            throw .transactionInvalid(jwsFailure: error.code, problem: error.code)
        }
    }

    /// The signed payload must say what the app says.
    private func checkClaims(_ transaction: JWSTransaction, against request: ValidVerifyRequest) throws(PaymentsError) {
        guard transaction.transactionId == request.transactionId else {
            throw .transactionInvalid(jwsFailure: "claims", problem: "transactionId does not match the signed transaction")
        }
        guard transaction.productId == request.appStoreProductId else {
            throw .productMismatch(problem: "the signed transaction is for another product")
        }
        if let type = transaction.type, type.rawValue != "Consumable" {
            throw .productMismatch(problem: "only consumable products are credited")
        }
        guard transaction.purchaseDate != nil, transaction.environment != nil, transaction.bundleId != nil else {
            throw .transactionInvalid(jwsFailure: "claims", problem: "purchaseDate, environment and bundleId are required")
        }
    }

    /// An appAccountToken, in the request or the signed payload, must be the
    /// one this service issued to the user (so a purchase cannot be moved
    /// to another account).
    private func checkAccountToken(_ transaction: JWSTransaction, against request: ValidVerifyRequest) async throws(PaymentsError) {
        let presented = [request.appAccountToken, transaction.appAccountToken].compactMap { $0 }
        guard !presented.isEmpty else { return }
        let issued = try await store.accountToken(userId: request.userId)
        guard presented.allSatisfy({ $0 == issued }) else { throw .transactionConflict }
    }

    private func grantInline(_ record: PaymentRecord, requestId: String?) async throws(PaymentsError) -> VerifyTransactionResponse {
        switch await points.grant(record, requestId: requestId) {
        case .success(let granted):
            FaultInjection.hit("payments.after_step2")
            let updated = try await store.apply(
                .init(transition: { PaymentSaga.afterGrant($0, outcome: .credited) }, ledgerEventId: granted.eventId),
                transactionId: record.transactionId)
            FaultInjection.hit("payments.after_step3")
            if updated.state.pendingAction == .clawback {
                // Apple took it back while the grant was in flight.
                await runPendingStep(updated, requestId: requestId)
                throw .transactionRevoked
            }
            logger.info("transaction granted", ["request_id": requestId ?? "", "transaction_id": record.transactionId,
                                                "credits": "\(granted.creditsAdded)", "replayed": "\(granted.replayed)"])
            return response(updated, outcome: granted.replayed ? .alreadyGranted : .granted,
                            creditsAdded: granted.replayed ? 0 : granted.creditsAdded, balance: granted.balance)
        case .refused(let reason):
            _ = try await store.apply(.init(transition: { PaymentSaga.afterGrant($0, outcome: .refused(reason: reason)) }),
                                      transactionId: record.transactionId)
            logger.notice("grant refused", ["request_id": requestId ?? "", "transaction_id": record.transactionId, "reason": reason])
            throw Self.refusal(reason)
        case .transient(let detail):
            _ = try await store.apply(.init(transition: { PaymentSaga.afterGrant($0, outcome: .transientFailure) }, transientError: detail),
                                      transactionId: record.transactionId)
            logger.warning("grant deferred to the saga worker", ["request_id": requestId ?? "", "transaction_id": record.transactionId, "error": detail])
            throw .pointsUnavailable(detail: detail)
        }
    }

    static func refusal(_ reason: String) -> PaymentsError {
        switch reason {
        case "STARTER_PACK_INELIGIBLE": return .starterPackIneligible
        case "PRODUCT_NOT_FOUND": return .productNotFound
        default: return .grantFailed(detail: reason)
        }
    }

    private func response(_ record: PaymentRecord, outcome: GrantOutcome, creditsAdded: Int64, balance: Int64) -> VerifyTransactionResponse {
        var response = VerifyTransactionResponse()
        response.outcome = outcome
        response.productCode = record.productCode ?? ""
        response.transactionId = record.transactionId
        response.creditsAdded = creditsAdded
        response.newBalance = balance
        response.ledgerEventId = LedgerEventId.purchase(transactionId: record.transactionId)
        return response
    }

    /// Records a transaction Apple already revoked so later submissions are
    /// refused too. If it was recorded before (e.g. granted, and the app now
    /// holds the revoked version), Apple's signed revocation takes it back
    /// exactly as a REFUND notification would.
    func recordRevoked(_ transaction: JWSTransaction, signed: String, userId: UUID?, productCode: String?) async throws(PaymentsError) {
        let owed: PaymentRecord?
        do {
            owed = try await store.pool.withTransaction { connection -> PaymentRecord? in
                let payment = Self.revokedPayment(transaction, signed: signed, userId: userId, productCode: productCode)
                if try await self.store.insertRevoked(payment, in: connection) != nil { return nil }
                guard let existing = try await self.store.lockedRecord(payment.transactionId, in: connection) else { return nil }
                return try await self.store.write(
                    .init(transition: PaymentSaga.afterRefundNotice, revocationDateUnixMilliseconds: payment.revocationDateUnixMilliseconds,
                          revocationReason: payment.revocationReason),
                    over: existing, in: connection)
            }
        } catch {
            throw PaymentsStore.paymentsError(from: error)
        }
        if let owed, owed.state.pendingAction != nil, let claimed = try? await store.claim(transactionId: owed.transactionId) {
            await runPendingStep(claimed)
        }
    }

    static func revokedPayment(_ transaction: JWSTransaction, signed: String, userId: UUID?, productCode: String?) -> RevokedPayment {
        RevokedPayment(
            userId: userId, productCode: productCode, appStoreProductId: transaction.productId ?? "",
            transactionId: transaction.transactionId ?? "", originalTransactionId: transaction.originalTransactionId,
            environment: transaction.environment?.rawValue ?? "", bundleId: transaction.bundleId ?? "",
            appAccountToken: transaction.appAccountToken,
            purchaseDateUnixMilliseconds: transaction.purchaseDate?.millisecondsSince1970 ?? 0,
            revocationDateUnixMilliseconds: transaction.revocationDate?.millisecondsSince1970,
            revocationReason: transaction.revocationReason.map { String($0) },
            signedTransactionInfo: signed, applePayloadJSON: transaction.payloadJSON)
    }

    // MARK: GetTransaction and account tokens

    func transaction(userId: String, transactionId: String) async throws(PaymentsError) -> Contracts.Transaction {
        guard let user = UUID(uuidString: userId) else { throw .validationFailed(field: "user_id", problem: "must be a UUID") }
        guard (1...PaymentsLimits.transactionIdBytesMax).contains(transactionId.utf8.count),
              transactionId.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw .validationFailed(field: "transaction_id", problem: "must be 1-32 digits")
        }
        guard let record = try await store.find(transactionId: transactionId), record.userId == user else {
            throw .transactionNotFound
        }
        return Self.transactionMessage(record)
    }

    static func transactionMessage(_ record: PaymentRecord) -> Contracts.Transaction {
        var out = Contracts.Transaction()
        out.id = record.id.uuidString.lowercased()
        out.transactionId = record.transactionId
        out.originalTransactionId = record.originalTransactionId ?? ""
        out.userId = record.userId?.uuidString.lowercased() ?? ""
        out.productCode = record.productCode ?? ""
        out.appStoreProductId = record.appStoreProductId
        out.environment = record.environment
        out.status = switch record.state.status {
        case .received: .received
        case .verified: .verified
        case .granted: .granted
        case .failed: .failed
        case .refunded: .refunded
        case .refundedInsufficient: .refundedInsufficient
        case .revoked: .revoked
        }
        out.credits = record.credits
        out.purchaseDateUnixMs = record.purchaseDateUnixMilliseconds
        out.revocationDateUnixMs = record.revocationDateUnixMilliseconds ?? 0
        out.ledgerEventId = record.ledgerEventId ?? ""
        out.failureCode = record.state.failureCode ?? ""
        out.overdueAmount = record.state.overdueAmount
        out.createdAtUnixMs = record.createdAtUnixMilliseconds
        out.updatedAtUnixMs = record.updatedAtUnixMilliseconds
        return out
    }

    func accountToken(userId: String) async throws(PaymentsError) -> String {
        guard let user = UUID(uuidString: userId) else { throw .validationFailed(field: "user_id", problem: "must be a UUID") }
        return try await store.accountToken(userId: user).uuidString.lowercased()
    }
}
