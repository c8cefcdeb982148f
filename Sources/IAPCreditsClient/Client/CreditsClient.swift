import Foundation

/// The app's one entry point for credits: packages with StoreKit prices,
/// the purchase flow (docs/CLIENT.md), resubmission of paid purchases not yet
/// credited (on every launch, with backoff), and the balance.
///
/// One client per signed-in user: build it after sign-in, call `start()`,
/// and `stop()` it on sign-out (a stopped client does nothing more, and a
/// purchase it held stays unfinished for the next client).
///
/// Rules it keeps (docs/CLIENT.md, "The rules it keeps"; docs/protocols/payments/apple-iap-protocol.md section 4):
/// - pending, cancelled and failed purchases never reach the gateway;
/// - a paid purchase is recorded durably before it is submitted;
/// - the StoreKit transaction is finished only after `granted`,
///   `already_granted` or PAYMENT_TRANSACTION_REVOKED, once;
/// - retryable answers keep it and resubmit with backoff; refusals keep it
///   and report it; nothing is ever finished on an unknown answer.
public actor CreditsClient {
    /// Changes as they happen (newest kept when the app reads slowly).
    public nonisolated let events: AsyncStream<CreditsEvent>
    nonisolated let eventSink: AsyncStream<CreditsEvent>.Continuation

    let api: any CreditsAPI
    let storeFront: any StoreFront
    let records: any PurchaseRecordStore
    let configuration: CreditsClientConfiguration

    var cachedAccountToken: UUID?
    var cachedOffers: PackageOffers?
    /// When `cachedOffers` was read (the configuration's clock).
    var cachedOffersAt: Date?
    var purchaseRunning = false
    var stopped = false
    /// Transactions being submitted or finished right now (never twice at once).
    var inFlight = Set<String>()
    /// How each transaction this client finished was settled (`.credited`
    /// or `.revoked`): a redelivery of one is not submitted again (unless it
    /// now carries a refund), and a purchase call that gets its transaction
    /// back after a recovery pass settled it reports that settlement.
    var settledThisSession: [String: PurchaseOutcome] = [:]
    /// The verify in flight for each transaction. The purchase path and a
    /// recovery pass that meet one transaction share its call and its
    /// answer (`verifyOnce`), so it is submitted once and both report the
    /// same credits.
    var verifying: [String: Task<Result<VerifiedGrant, CreditsError>, Never>] = [:]
    /// Transactions whose `credited` event was sent (once each).
    var announcedCredits = Set<String>()
    /// Transactions whose `revoked` event was sent (once each).
    var announcedRevocations = Set<String>()
    /// Records rebuilt this session after PRODUCT_NOT_FOUND / PRODUCT_MISMATCH (once each).
    var rebuiltThisSession = Set<String>()
    /// Records known to this client, also those the store failed to write.
    var knownRecords: [String: PendingPurchaseRecord] = [:]
    /// Known records whose last write failed: the next pass writes them again.
    var unsavedRecords = Set<String>()
    var retryAttempts: [String: Int] = [:]
    var retryTasks: [String: Task<Void, Never>] = [:]
    /// When each transaction with a retry scheduled may be submitted again:
    /// the later of its backoff and the answer's Retry-After. A recovery
    /// pass (a foreground) leaves it to its timer until then.
    var retryNotBefore: [String: ContinuousClock.Instant] = [:]
    var passRetryAttempt = 0
    var passRetry: PassRetry?
    var summaries: [String: PendingPurchaseSummary] = [:]
    var updatesTask: Task<Void, Never>?

    public init(
        api: any CreditsAPI, storeFront: any StoreFront, records: any PurchaseRecordStore,
        configuration: CreditsClientConfiguration = CreditsClientConfiguration()
    ) {
        self.api = api
        self.storeFront = storeFront
        self.records = records
        self.configuration = configuration
        (events, eventSink) = AsyncStream.makeStream(
            of: CreditsEvent.self, bufferingPolicy: .bufferingNewest(ClientLimits.eventsBufferedMax))
    }

    deinit {
        updatesTask?.cancel()
        passRetry?.task.cancel()
        for task in retryTasks.values { task.cancel() }
        eventSink.finish()
    }

    /// Call once at launch (after sign-in): listens to StoreKit's
    /// transaction updates and resubmits every paid purchase not yet credited.
    @discardableResult
    public func start() async -> RecoveryReport {
        guard !stopped else { return RecoveryReport() }
        if updatesTask == nil {
            let updates = storeFront.transactionUpdates()
            updatesTask = Task { [weak self] in
                for await update in updates {
                    guard let self else { return }
                    await self.handleUpdate(update)
                }
            }
        }
        return await resumePendingPurchases()
    }

    /// Stops everything: no more submissions, finishes or events. Purchases
    /// not yet credited stay unfinished and recorded for the next client.
    public func stop() {
        stopped = true
        updatesTask?.cancel()
        updatesTask = nil
        cancelPassRetry()
        for task in retryTasks.values { task.cancel() }
        retryTasks.removeAll()
        eventSink.finish()
    }

    // MARK: Reading

    /// The user's appAccountToken (fetched once per client).
    public func accountToken() async throws(CreditsError) -> UUID {
        if let cachedAccountToken { return cachedAccountToken }
        let token = try await api.accountToken()
        cachedAccountToken = token
        return token
    }

    /// The packages this user may buy with StoreKit's products and prices
    /// (docs/protocols/payments/apple-iap-protocol.md 3.1 and user-points-chat-data-protocol.md section 2). When StoreKit cannot answer, every offer
    /// comes back unavailable rather than failing the screen.
    public func packageOffers() async throws(CreditsError) -> PackageOffers {
        let packages = try await api.packages()
        let products = (try? await storeFront.products(for: PackageOffers.productIDs(of: packages))) ?? []
        let offers = PackageOffers.match(packages: packages, products: products)
        cachedOffers = offers
        cachedOffersAt = configuration.now()
        emit(.offersChanged(offers))
        return offers
    }

    public func balance() async throws(CreditsError) -> CreditBalance {
        let balance = try await api.balance()
        emit(.balanceChanged(balance))
        return balance
    }

    /// Where one of the user's purchases stands on the backend.
    public func transactionStatus(transactionId: String) async throws(CreditsError) -> TransactionStatus {
        try await api.transactionStatus(transactionId: transactionId)
    }

    /// Paid purchases not yet credited, for a "being processed" list.
    public func pendingPurchases() -> [PendingPurchaseSummary] {
        var list = summaries
        for record in knownRecords.values where list[record.transactionId] == nil {
            list[record.transactionId] = PendingPurchaseSummary(
                transactionId: record.transactionId, appStoreProductId: record.appStoreProductId,
                state: .awaitingCredit(nil, nextAttemptInMilliseconds: nil))
        }
        return list.values.sorted { $0.transactionId < $1.transactionId }
    }

    // MARK: Purchase

    /// Buys `offer` (docs/protocols/payments/apple-iap-protocol.md 3.2 and 4.1): StoreKit's sheet with the
    /// user's appAccountToken; a verified payment is recorded, submitted,
    /// finished only once credited, then balance and packages are refreshed.
    /// The new user pack, and any offer from a list older than
    /// `ClientLimits.offersReuseSecondsMax`, is looked up in a fresh list
    /// first: `.productUnavailable` when it is gone.
    public func purchase(_ offer: PackageOffer) async -> PurchaseOutcome {
        guard !stopped else { return .notStarted(CreditsError(.notSignedIn)) }
        guard !purchaseRunning else { return .alreadyInProgress }
        purchaseRunning = true
        defer { purchaseRunning = false }
        let token: UUID
        let listed: PackageOffer?
        do {
            token = try await accountToken()
            listed = try await offerListedNow(offer)
        } catch {
            return .notStarted(error)
        }
        guard let offer = listed else { return .productUnavailable }
        var flow = PurchaseFlow(offers: cachedOffers ?? PackageOffers(offers: [offer]))
        var held: String?
        defer { if let held { inFlight.remove(held) } }
        do {
            var action = try flow.start(offer, appAccountToken: token)
            for _ in 0..<PurchaseFlowRunner.stepsMax {
                if stopped { return flow.outcomeIfAbandoned(Self.stoppedError) }
                switch action {
                case .purchase(let productID, let appAccountToken):
                    let answer: Result<StorePurchaseOutcome, StoreFailure>
                    do {
                        answer = .success(
                            try await storeFront.purchase(productID: productID, appAccountToken: appAccountToken))
                    } catch {
                        answer = .failure(StoreFailure(reason: String(describing: error)))
                    }
                    action = try flow.storeAnswered(answer, now: configuration.now())
                case .record(let record):
                    // A recovery pass (the app came to the foreground as the sheet
                    // closed) credited and finished it already: report that, without
                    // a record for a finished transaction or a second verify.
                    if let settled = settledThisSession[record.transactionId] {
                        action = try flow.settledElsewhere(settled)
                        continue
                    }
                    // A recovery pass may hold it already: the verify is then shared (`verifyOnce`).
                    if inFlight.insert(record.transactionId).inserted { held = record.transactionId }
                    knownRecords[record.transactionId] = record
                    await saveRecord(record)
                    action = try flow.recordAttempted()
                case .verify(let record):
                    action = try flow.verifyAnswered(await verifyOnce(record))
                case .finish(let transactionId):
                    if case .finishing(_, let outcome) = flow.state {
                        await finishAndForget(transactionId, settledAs: outcome)
                    }
                    action = try flow.finished()
                case .refresh:
                    action = try flow.refreshed(balance: await refreshAfterChange())
                case .complete(let outcome):
                    announce(outcome)
                    return outcome
                }
            }
            preconditionFailure("the purchase flow ends within \(PurchaseFlowRunner.stepsMax) steps")
        } catch {
            // A runner bug: keep whatever was paid, unfinished.
            return flow.outcomeIfAbandoned(Self.stoppedError)
        }
    }

    /// `offer` as the gateway lists it now (nil: gone). The new user pack
    /// sells once per email identity and another device may have bought it
    /// since the list was shown: paying for it then means a refusal and a
    /// manual refund, so it is looked up again, and not bought when the list
    /// cannot be read. Another package is looked up again only when the list
    /// is stale; if that read fails it is bought from the list shown (it
    /// cannot become ineligible, and a re-keyed one is rebuilt on verify).
    private func offerListedNow(_ offer: PackageOffer) async throws(CreditsError) -> PackageOffer? {
        guard offer.isStarterPack || !cachedOffersAreFresh else { return offer }
        do {
            return try await packageOffers().offer(productCode: offer.productCode)
        } catch {
            if offer.isStarterPack { throw error }
            return offer
        }
    }

    private var cachedOffersAreFresh: Bool {
        guard let cachedOffersAt else { return false }
        let ageSeconds = configuration.now().timeIntervalSince(cachedOffersAt)
        return ageSeconds >= 0 && ageSeconds <= Double(ClientLimits.offersReuseSecondsMax)
    }

    /// Why a purchase the runner stopped driving did not complete.
    private static let stoppedError = CreditsError(.transport("client stopped"))

    private func announce(_ outcome: PurchaseOutcome) {
        switch outcome {
        case .credited(let grant, _): announceCredit(grant)
        case .revoked(let transactionId): announceRevocation(transactionId)
        case .unverifiedByStore(let transactionId):
            setSummary(
                PendingPurchaseSummary(
                    transactionId: transactionId, appStoreProductId: nil,
                    state: .unverifiedByStore(reason: "StoreKit could not verify the transaction")))
        default: break
        }
    }

    // MARK: Shared steps

    /// `verifyAndNote`, or the answer of the same transaction's verify
    /// already in flight on the other path (one call for both).
    func verifyOnce(_ record: PendingPurchaseRecord) async -> Result<VerifiedGrant, CreditsError> {
        if let running = verifying[record.transactionId] { return await running.value }
        let call = Task { await self.verifyAndNote(record) }
        verifying[record.transactionId] = call
        let answer = await call.value
        verifying[record.transactionId] = nil
        return answer
    }

    /// After PRODUCT_NOT_FOUND or PRODUCT_MISMATCH, once per transaction and
    /// session: the record rebuilt with the product code the refreshed
    /// packages give the transaction's App Store product, saved, to be
    /// resubmitted (docs/protocols/payments/apple-iap-protocol.md 4.2); nil
    /// when the packages name no other code.
    func rebuiltOnce(_ record: PendingPurchaseRecord, after error: CreditsError) async -> PendingPurchaseRecord? {
        guard error.problemCode == .paymentProductNotFound || error.problemCode == .paymentProductMismatch,
            let code = cachedOffers?.productCodesByAppStoreProductId[record.appStoreProductId],
            code != record.productCode,
            rebuiltThisSession.insert(record.transactionId).inserted
        else { return nil }
        let rebuilt = record.replacing(productCode: code)
        knownRecords[record.transactionId] = rebuilt
        await saveRecord(rebuilt)
        return rebuilt
    }

    /// Writes `record` to the store. A failed write stops nothing (StoreKit
    /// still holds the transaction unfinished, so a relaunch finds it, and
    /// this client keeps the record in `knownRecords`), but it is not
    /// forgotten either: the next pass writes it again.
    func saveRecord(_ record: PendingPurchaseRecord) async {
        do {
            try await records.save(record)
            unsavedRecords.remove(record.transactionId)
        } catch {
            unsavedRecords.insert(record.transactionId)
        }
    }

    /// Writes again the known records whose last write failed.
    func saveUnsavedRecords() async {
        for transactionId in unsavedRecords.sorted() {
            if let record = knownRecords[transactionId] {
                await saveRecord(record)
            } else {
                unsavedRecords.remove(transactionId)
            }
        }
    }

    /// Sends `credited` for a transaction once, whichever path saw it first.
    func announceCredit(_ grant: VerifiedGrant) {
        guard announcedCredits.insert(grant.transactionId).inserted else { return }
        emit(.credited(grant))
    }

    /// Sends `revoked` for a transaction once, whichever path saw it first
    /// (the purchase path and a recovery pass sharing one verify both learn it).
    func announceRevocation(_ transactionId: String) {
        guard announcedRevocations.insert(transactionId).inserted else { return }
        emit(.revoked(transactionId: transactionId))
    }

    /// POST verify, and on failure note it on the record and schedule a
    /// retry (retryable) or report it (refused; and refresh the packages
    /// when the refusal says they are stale). Never finishes.
    func verifyAndNote(_ record: PendingPurchaseRecord) async -> Result<VerifiedGrant, CreditsError> {
        let answer: Result<VerifiedGrant, CreditsError>
        do {
            answer = .success(try await api.verify(record.verifyRequest))
        } catch {
            answer = .failure(error)
        }
        guard case .failure(let error) = answer, error.disposition != .finish, !stopped else { return answer }
        var noted = record
        noted.submissionCount += 1
        noted.lastFailure = error.problemCode?.wireCode ?? Self.failureText(error)
        knownRecords[record.transactionId] = noted
        await saveRecord(noted)
        switch error.disposition {
        case .finish: assertionFailure("returned above")
        case .keepAndRetry: scheduleRetry(noted, after: error)
        case .keepAndReport:
            cancelRetry(record.transactionId)
            setSummary(
                PendingPurchaseSummary(
                    transactionId: record.transactionId, appStoreProductId: record.appStoreProductId,
                    state: .refused(error)))
            // The packages the app shows are stale: refresh them (offersChanged) before the user pays again.
            if error.problemCode?.meansOffersChanged == true {
                _ = try? await packageOffers()
                if let rebuilt = await rebuiltOnce(noted, after: error) { return await verifyAndNote(rebuilt) }
            }
        }
        return answer
    }

    static func failureText(_ error: CreditsError) -> String {
        switch error.kind {
        case .problem(let problem): problem.code.wireCode
        case .transport: "transport"
        case .unexpectedAnswer: "unexpected_answer"
        case .notSignedIn: "not_signed_in"
        case .invalidRequest: "invalid_request"
        }
    }

    /// Finishes the StoreKit transaction and forgets it, `outcome` (`.credited`
    /// or `.revoked`) being how it was settled. Asking StoreKit to finish a
    /// transaction it holds finished already does nothing, so a redelivered
    /// refund is finished too.
    func finishAndForget(_ transactionId: String, settledAs outcome: PurchaseOutcome) async {
        guard !stopped else { return }
        assert(outcome.settles(transactionId))
        // The purchase call and a recovery pass that shared one verify both
        // get here with its answer: StoreKit is asked once. A refund after a
        // credit is a new settlement, finished again.
        let earlier = settledThisSession.updateValue(outcome, forKey: transactionId)
        if let earlier, earlier.isRevoked == outcome.isRevoked { return }
        await storeFront.finish(transactionID: transactionId)
        // Removal failing leaves a record whose resubmission answers
        // already_granted; it is removed then.
        try? await records.remove(transactionId: transactionId)
        knownRecords[transactionId] = nil
        unsavedRecords.remove(transactionId)
        cancelRetry(transactionId)
        summaries[transactionId] = nil
    }

    /// After a credit or a revocation: the balance and the packages (the
    /// new user pack disappears once bought). Returns the balance, nil when
    /// it could not be fetched.
    func refreshAfterChange() async -> CreditBalance? {
        let balance = try? await balance()
        _ = try? await packageOffers()
        return balance
    }

    func setSummary(_ summary: PendingPurchaseSummary) {
        summaries[summary.transactionId] = summary
        emit(.pendingPurchaseChanged(summary))
    }

    func emit(_ event: CreditsEvent) {
        guard !stopped else { return }
        eventSink.yield(event)
    }
}

/// Bounds of the purchase runner.
enum PurchaseFlowRunner {
    /// start, store, record, verify, finish, refresh, complete: 7 steps.
    static let stepsMax = 8
}
