import AppStoreVerification
import Contracts
import FieldRules
import Foundation
import Logging
import Metrics
import ServiceKit
import UUIDText

/// Drives a purchase from a signed transaction to the credits Apple's latest
/// word allows: verify the JWS and its claims, record it with the app's
/// claim (saga step 1), then run the owed ledger steps inline (step 2 and
/// its compensations). Decisions come from `PurchaseLifecycle`; every write
/// goes through `PaymentsStore` under the row lock.
final class PaymentProcessor: Sendable {
    let store: PaymentsStore
    let verifier: SignedDataVerifier
    let points: PointsLedger
    let catalog: CatalogCache
    let logger: Logger
    let runner: LedgerStepRunner
    let creditPolicy: SandboxCreditPolicy
    /// Answers Apple's CONSUMPTION_REQUEST (nil: requests are only recorded).
    let consumption: ConsumptionAnswerer?
    /// Saga, notification, JWS and catalog counts (nil: not counted).
    let metrics: PaymentsMetrics?

    init(
        store: PaymentsStore, verifier: SignedDataVerifier, points: PointsLedger, catalog: CatalogCache, logger: Logger,
        creditPolicy: SandboxCreditPolicy, consumption: ConsumptionAnswerer? = nil, metrics: PaymentsMetrics? = nil
    ) {
        self.metrics = metrics
        self.creditPolicy = creditPolicy
        self.consumption = consumption
        self.store = store
        self.verifier = verifier
        self.points = points
        self.catalog = catalog
        self.logger = logger
        self.runner = LedgerStepRunner(store: store, points: points, logger: logger, metrics: metrics)
    }

    // MARK: VerifyTransaction

    func verify(_ request: VerifyTransactionRequest, requestId: String?) async throws(PaymentsError)
        -> VerifyTransactionResponse
    {
        let valid = try VerifyRequestValidation.validate(
            userId: request.userId, emailHash: request.emailHash, productCode: request.productCode,
            appStoreProductId: request.appStoreProductId, transactionId: request.transactionId,
            signedTransactionInfo: request.signedTransactionInfo, appAccountToken: request.appAccountToken,
            emailMasked: request.emailMasked)
        let log = logger.with([
            "request_id": requestId ?? "", "transaction_id": valid.transactionId,
            "user_id": UUIDText.lowercased(valid.userId),
        ])

        let known = try await package(for: valid, requestId: requestId)
        let transaction = try await verifiedTransaction(valid.signedTransactionInfo)
        return try await credit(transaction, claimedBy: valid, package: known, log: log, requestId: requestId)
    }

    /// The rest of a verify, once the JWS is verified: the claims, the
    /// Sandbox policy, the catalog, the account token, then saga step 1 and
    /// the owed steps. Shared by the app's verify and each transaction of a
    /// StoreKit 1 receipt (`ReceiptCrediting`). `known` is nil when the
    /// catalog has no package for the product.
    func credit(
        _ transaction: JWSTransaction, claimedBy valid: ValidVerifyRequest, package known: Contracts.Package?,
        log: Logger, requestId: String?
    ) async throws(PaymentsError) -> VerifyTransactionResponse {
        try checkClaims(transaction, against: valid)
        try checkCreditPolicy(transaction, userId: valid.userId, log: log)
        guard let package = known else {
            // Apple signed a purchase of a product the catalog does not have
            // (e.g. an app release ahead of the catalog during a rollout):
            // paid, so never refused for good. Nothing is written; the app
            // keeps the transaction and resubmits once the catalog has it.
            metrics?.catalogMissingProducts.labels().increment()
            log.critical(
                "ALERT verified purchase of a product missing from the catalog",
                [
                    "alert": "catalog_missing_product", "app_store_product_id": valid.appStoreProductId,
                    "product_code": valid.productCode,
                ])
            throw .grantFailed(detail: "the catalog has no product \(valid.appStoreProductId)")
        }
        try await checkAccountToken(transaction, against: valid)
        let quantity = try Self.quantity(of: transaction)
        let (credits, overflow) = package.credits.multipliedReportingOverflow(by: Int64(quantity))
        guard !overflow else {
            throw .transactionInvalid(jwsFailure: "claims", problem: "quantity \(quantity) overflows the credits")
        }

        // Saga step 1: record Apple's word and the app's claim. A transaction
        // seen for the first time is one autocommitted insert; an existing
        // row is locked and updated in one transaction.
        let claim = PaymentClaim(
            userId: valid.userId, productCode: valid.productCode, credits: credits,
            emailHash: valid.emailHash, emailMasked: valid.emailMasked)
        let payment = Self.newPayment(transaction, signed: valid.signedTransactionInfo, tokenOwner: nil, claim: claim)
        let verdict = Self.verdict(of: transaction)
        let signedAt = transaction.signedDate?.millisecondsSince1970
        let word: PaymentsStore.WordResult
        if let inserted = try await store.recordIfNew(verdict, signedAtUnixMilliseconds: signedAt, for: payment) {
            word = inserted
        } else {
            word = try await store.mappingErrors {
                try await self.store.pool.withTransaction { connection in
                    try await self.store.record(
                        verdict, signedAtUnixMilliseconds: signedAt, for: payment, in: connection, rowExists: true)
                }
            }
        }
        guard !word.conflict else {
            log.warning("transaction submitted by a second user")
            throw .transactionConflict
        }
        if word.before == nil {
            log.info(
                "transaction verified",
                ["product_code": valid.productCode, "environment": word.after.environment, "quantity": "\(quantity)"])
            FaultInjection.hit("payments.after_step1")
        }
        let run = try await settle(word.after, leased: word.before == nil, requestId: requestId)
        // This submission made the claim: its credits are this submission's,
        // whichever runner (inline or the worker) applied them.
        let claimedHere = PurchaseLifecycle.claimMadeBySubmission(before: word.before?.state)
        return try await answer(run, claimedHere: claimedHere, log: log, requestId: requestId)
    }

    /// Runs what the row owes: inline when this caller holds (or can take)
    /// the lease; otherwise waits, bounded, for the runner that holds it.
    private func settle(_ record: PaymentRecord, leased: Bool, requestId: String?) async throws(PaymentsError)
        -> LedgerStepRunner.Run
    {
        guard record.pendingStep != nil else { return .init(record: record) }
        if leased { return await runner.runOwedSteps(record, requestId: requestId) }
        if let claimed = try await store.claim(transactionId: record.transactionId) {
            return await runner.runOwedSteps(claimed, requestId: requestId)
        }
        // Another runner (the worker, a concurrent submission) holds the
        // lease: its answer is ours once it records it.
        if let settled = await awaitLeaseHolder(record, until: { $0.state.grant != .owed }) {
            return .init(record: settled)
        }
        return .init(
            record: try await store.find(transactionId: record.transactionId) ?? record,
            failure: .transient(detail: "the grant is being run by another instance"))
    }

    /// Waits, bounded by `PaymentsLimits.leaseWaitMax`, for the runner that
    /// holds `record`'s lease to record its step: the row once `done` holds,
    /// nil when the wait ran out (or the row is gone).
    func awaitLeaseHolder(_ record: PaymentRecord, until done: (PaymentRecord) -> Bool) async -> PaymentRecord? {
        let deadline = ContinuousClock.now + PaymentsLimits.leaseWaitMax
        while ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(25))
            guard let current = try? await store.find(transactionId: record.transactionId) else { return nil }
            if done(current) { return current }
        }
        return nil
    }

    /// The answer to a verify, from where the row ended. `granted` when this
    /// submission's claim was credited (by this call or by another runner
    /// that took the owed step first), `already_granted` for a resubmission.
    private func answer(
        _ run: LedgerStepRunner.Run, claimedHere: Bool, log: Logger,
        requestId: String?
    ) async throws(PaymentsError) -> VerifyTransactionResponse {
        let record = run.record
        // Refused only when Apple's word leaves the purchase nothing: after a
        // prorated refund the rest stays credited, and the app must hear
        // granted or already_granted, so it finishes the transaction.
        if record.state.verdict.revocation != nil && record.state.verdict.creditsKept(of: record.state.credits) == 0 {
            log.notice("refused a refunded or revoked transaction", ["status": record.status.rawValue])
            throw .transactionRevoked
        }
        switch record.state.grant {
        case .applied:
            if let granted = run.grant, !granted.replayed {
                log.info("transaction granted", ["credits": "\(granted.creditsAdded)"])
                return response(record, outcome: .granted, creditsAdded: granted.creditsAdded, balance: granted.balance)
            }
            var balance = run.grant?.balance ?? 0
            if run.grant == nil, let owner = record.userId {
                balance = try await points.balance(userId: owner, requestId: requestId)
            }
            if claimedHere {
                log.info("transaction granted by another runner", ["credits": "\(record.state.credits)"])
                return response(record, outcome: .granted, creditsAdded: record.state.credits, balance: balance)
            }
            // Every verify leaves a line with its request id, a resubmission too.
            log.info("transaction already granted", ["credits": "\(record.state.credits)"])
            return response(record, outcome: .alreadyGranted, creditsAdded: 0, balance: balance)
        case .refused(let reason):
            throw Self.refusal(ErrorReason(rawValue: reason))
        case .owed:
            switch run.failure {
            case .needsOperator(let reason, let detail)?:
                throw .grantFailed(detail: "\(reason.rawValue): \(detail)")
            case .transient(let detail)?:
                throw .pointsUnavailable(detail: detail)
            case .refused(let reason)?:
                throw Self.refusal(reason)
            case nil:
                throw .pointsUnavailable(detail: "the grant is still owed")
            }
        case .notOwed:
            throw .internalFailure(detail: "a claimed purchase Apple did not take back owes no grant")
        }
    }

    static func refusal(_ reason: ErrorReason) -> PaymentsError {
        reason == .starterPackIneligible ? .starterPackIneligible : .grantFailed(detail: reason.rawValue)
    }

    /// The request's package. A code the cached catalog lacks is looked up
    /// again in a fresh copy; then an unknown code for a known App Store
    /// product is the app's mistake (PRODUCT_NOT_FOUND), while nil means
    /// the catalog knows neither (decided after the JWS is verified).
    private func package(for request: ValidVerifyRequest, requestId: String?) async throws(PaymentsError) -> Contracts
        .Package?
    {
        var packages = try await catalog.packages(requestId: requestId)
        if !packages.contains(where: { $0.productCode == request.productCode }) {
            packages = try await catalog.packages(fresh: true, requestId: requestId)
        }
        guard let package = packages.first(where: { $0.productCode == request.productCode }) else {
            if packages.contains(where: { $0.appStoreProductId == request.appStoreProductId }) {
                throw .productNotFound
            }
            return nil
        }
        guard package.appStoreProductId == request.appStoreProductId else {
            throw .productMismatch(problem: "app_store_product_id does not belong to product_code")
        }
        return package
    }

    /// The catalog's package sold as `appStoreProductId` (looked up again in
    /// a fresh copy when the cached one lacks it), nil when there is none.
    func catalogPackage(appStoreProductId: String, requestId: String?) async throws(PaymentsError) -> Contracts.Package?
    {
        var packages = try await catalog.packages(requestId: requestId)
        if !packages.contains(where: { $0.appStoreProductId == appStoreProductId }) {
            packages = try await catalog.packages(fresh: true, requestId: requestId)
        }
        return packages.first(where: { $0.appStoreProductId == appStoreProductId })
    }

    /// Verifies the JWS; Apple-side unavailability is retryable, anything
    /// else is an invalid transaction naming the verifier's failure.
    func verifiedTransaction(_ jws: String) async throws(PaymentsError) -> JWSTransaction {
        do {
            let transaction = try await verifier.verifyTransaction(jws)
            metrics?.recordJWSVerification(.transaction, failureCode: nil)
            return transaction
        } catch {
            metrics?.recordJWSVerification(.transaction, failureCode: error.code)
            if error.isRetryable { throw .appleUnavailable(detail: error.code) }
            throw .transactionInvalid(jwsFailure: error.code, problem: error.code)
        }
    }

    /// The signed payload must say what the app says.
    private func checkClaims(_ transaction: JWSTransaction, against request: ValidVerifyRequest) throws(PaymentsError) {
        guard transaction.transactionId == request.transactionId else {
            throw .transactionInvalid(
                jwsFailure: "claims", problem: "transactionId does not match the signed transaction")
        }
        guard transaction.productId == request.appStoreProductId else {
            throw .productMismatch(problem: "the signed transaction is for another product")
        }
        // Fails closed: a payload without `type` (Apple always sends one) is
        // not known to be a consumable.
        guard transaction.type?.rawValue == AppleClaimRule.consumableType else {
            throw .productMismatch(problem: "only consumable products are credited")
        }
        guard transaction.purchaseDate != nil, transaction.environment != nil, transaction.bundleId != nil else {
            throw .transactionInvalid(
                jwsFailure: "claims", problem: "purchaseDate, environment and bundleId are required")
        }
    }

    /// StoreKit's quantity: absent means 1; above `PaymentsLimits.quantityMax`
    /// (StoreKit's own bound) the payload is not one StoreKit produces.
    static func quantity(of transaction: JWSTransaction) throws(PaymentsError) -> Int32 {
        let quantity = transaction.quantity ?? 1
        guard (1...PaymentsLimits.quantityMax).contains(quantity) else {
            throw .transactionInvalid(
                jwsFailure: "claims", problem: "quantity \(quantity) is outside 1...\(PaymentsLimits.quantityMax)")
        }
        return quantity
    }

    /// An appAccountToken, in the request or the signed payload, must be the
    /// one this service issued to the user (so a purchase cannot be moved
    /// to another account).
    private func checkAccountToken(_ transaction: JWSTransaction, against request: ValidVerifyRequest)
        async throws(PaymentsError)
    {
        let presented = [request.appAccountToken, transaction.appAccountToken].compactMap { $0 }
        guard !presented.isEmpty else { return }
        let issued = try await store.accountToken(userId: request.userId)
        guard presented.allSatisfy({ $0 == issued }) else { throw .transactionConflict }
    }

    private func response(_ record: PaymentRecord, outcome: GrantOutcome, creditsAdded: Int64, balance: Int64)
        -> VerifyTransactionResponse
    {
        var response = VerifyTransactionResponse()
        response.outcome = outcome
        response.productCode = record.productCode ?? ""
        response.transactionId = record.transactionId
        response.creditsAdded = creditsAdded
        response.newBalance = balance
        response.ledgerEventId = LedgerEventId.purchase(transactionId: record.transactionId)
        return response
    }

    // MARK: Apple's word

    /// What a signed transaction says: revoked (on its terms) or standing.
    static func verdict(of transaction: JWSTransaction) -> AppleVerdict {
        guard transaction.revocationDate != nil || transaction.revocationType != nil else { return .purchased }
        return .revoked(
            Revocation(
                type: transaction.revocationType?.rawValue, percentageMilliunits: transaction.revocationPercentage,
                revocationReason: transaction.revocationReason,
                dateUnixMilliseconds: transaction.revocationDate?.millisecondsSince1970))
    }

    static func newPayment(_ transaction: JWSTransaction, signed: String, tokenOwner: UUID?, claim: PaymentClaim?)
        -> NewPayment
    {
        NewPayment(
            appStoreProductId: transaction.productId ?? "", transactionId: transaction.transactionId ?? "",
            originalTransactionId: transaction.originalTransactionId,
            webOrderLineItemId: transaction.webOrderLineItemId,
            environment: transaction.environment?.rawValue ?? "", bundleId: transaction.bundleId ?? "",
            appAccountToken: transaction.appAccountToken,
            purchaseDateUnixMilliseconds: transaction.purchaseDate?.millisecondsSince1970 ?? 0,
            quantity: min(max(transaction.quantity ?? 1, 1), PaymentsLimits.quantityMax),
            currency: transaction.currency, priceMilliunits: transaction.price, signedTransactionInfo: signed,
            applePayloadJSON: transaction.payloadJSON, tokenOwner: tokenOwner, claim: claim)
    }

    // MARK: GetTransaction and account tokens

    func transaction(userId: String, transactionId: String) async throws(PaymentsError) -> Contracts.Transaction {
        let user: UUID
        do {
            user = try UUIDRule.uuid(userId)
            _ = try TransactionIDRule.validated(transactionId)
        } catch {
            throw PaymentsError(error)
        }
        guard let record = try await store.find(transactionId: transactionId), record.state.claimed,
            record.userId == user
        else {
            throw .transactionNotFound
        }
        return Self.transactionMessage(record)
    }

    static func transactionMessage(_ record: PaymentRecord) -> Contracts.Transaction {
        var out = Contracts.Transaction()
        out.id = UUIDText.lowercased(record.id)
        out.transactionId = record.transactionId
        out.originalTransactionId = record.originalTransactionId ?? ""
        out.userId = record.userId.map(UUIDText.lowercased) ?? ""
        out.productCode = record.productCode ?? ""
        out.appStoreProductId = record.appStoreProductId
        out.environment = record.environment
        out.status =
            switch record.status {
            case .received: .received
            case .verified: .verified
            case .granted: .granted
            case .failed: .failed
            case .refunded: .refunded
            case .refundedInsufficient: .refundedInsufficient
            case .revoked: .revoked
            }
        out.credits = record.state.credits
        out.quantity = record.quantity
        out.purchaseDateUnixMs = record.purchaseDateUnixMilliseconds
        let revocation = record.state.verdict.revocation
        out.revocationDateUnixMs = revocation?.dateUnixMilliseconds ?? 0
        out.revocationType = revocation?.type ?? ""
        out.revocationPercentage = revocation?.percentageMilliunits ?? 0
        out.creditsTakenBack =
            record.state.cycle.map { $0.isInForce && $0.phase != .clawbackOwed ? $0.deducted + $0.overdue : 0 } ?? 0
        // Present once credited: a refused grant stored before the runner stopped passing its event id still names one.
        out.ledgerEventId = record.state.grant == .applied ? record.ledgerEventId ?? "" : ""
        out.failureCode = {
            if case .refused(let reason) = record.state.grant { return reason }
            return (record.state.cycle.map { $0.isInForce && $0.overdue > 0 } ?? false) ? "INSUFFICIENT_BALANCE" : ""
        }()
        out.overdueAmount = record.state.cycle.map { $0.isInForce ? $0.overdue : 0 } ?? 0
        out.createdAtUnixMs = record.createdAtUnixMilliseconds
        out.updatedAtUnixMs = record.updatedAtUnixMilliseconds
        return out
    }

    /// The user's own purchases, newest first, one page.
    func listTransactions(userId: String, pageSize: Int32, pageToken: String) async throws(PaymentsError)
        -> ListTransactionsResponse
    {
        let user: UUID
        do { user = try UUIDRule.uuid(userId) } catch { throw PaymentsError(error) }
        let size = pageSize == 0 ? PaymentsLimits.transactionPageSizeDefault : Int(pageSize)
        guard (1...PaymentsLimits.transactionPageSizeMax).contains(size) else {
            throw .validationFailed(
                field: "page_size",
                problem:
                    "must be 1...\(PaymentsLimits.transactionPageSizeMax) (0 means \(PaymentsLimits.transactionPageSizeDefault))"
            )
        }
        let afterId = try TransactionPageToken.decode(pageToken)
        let records = try await store.listTransactions(userId: user, limit: size + 1, afterId: afterId)
        var response = ListTransactionsResponse()
        response.transactions = records.prefix(size).map(Self.transactionMessage)
        if records.count > size, let last = records.prefix(size).last {
            response.nextPageToken = TransactionPageToken.encode(lastId: last.id)
        }
        return response
    }

    func accountToken(userId: String) async throws(PaymentsError) -> String {
        let user: UUID
        do { user = try UUIDRule.uuid(userId) } catch { throw PaymentsError(error) }
        return try await UUIDText.lowercased(store.accountToken(userId: user))
    }

    // MARK: Consumption consent

    func setConsumptionConsent(userId: String, consented: Bool) async throws(PaymentsError)
        -> ConsumptionConsentResponse
    {
        let user: UUID
        do { user = try UUIDRule.uuid(userId) } catch { throw PaymentsError(error) }
        try await store.setConsumptionConsent(userId: user, consented: consented)
        logger.info("consumption consent stored", ["user_id": UUIDText.lowercased(user), "consented": "\(consented)"])
        var response = ConsumptionConsentResponse()
        response.consented = consented
        response.recorded = true
        return response
    }

    func consumptionConsent(userId: String) async throws(PaymentsError) -> ConsumptionConsentResponse {
        let user: UUID
        do { user = try UUIDRule.uuid(userId) } catch { throw PaymentsError(error) }
        let stored = try await store.consumptionConsent(userId: user)
        var response = ConsumptionConsentResponse()
        response.consented = stored ?? false
        response.recorded = stored != nil
        return response
    }
}
