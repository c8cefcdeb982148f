import Foundation

extension CreditsClient {
    /// Resubmits every paid purchase not yet credited: StoreKit's unfinished
    /// transactions and the library's records (docs/protocols/payments/apple-iap-protocol.md 4.4). Runs
    /// at `start()`; call it again when the app comes to the foreground or
    /// after the user signs in again. A purchase waiting out its backoff or
    /// an answer's Retry-After is left to its timer; one whose retries this
    /// launch are used up is resubmitted with a fresh budget.
    @discardableResult
    public func resumePendingPurchases() async -> RecoveryReport {
        guard !stopped else { return RecoveryReport() }
        if !passIsWaiting {
            cancelPassRetry()
            passRetryAttempt = 0
        }
        return await runPass(unfinished: nil)
    }

    /// One pass over `unfinished` (nil: all StoreKit holds, plus every record).
    func runPass(unfinished given: [StoreTransactionResult]?) async -> RecoveryReport {
        var report = RecoveryReport()
        guard !stopped else { return report }
        if passIsWaiting, let passRetry {
            report.failure = passRetry.failure
            report.pending = pendingPurchases()
            return report
        }
        let token: UUID
        do {
            token = try await accountToken()
        } catch {
            report.failure = error
            if error.disposition == .keepAndRetry { schedulePassRetry(after: error) }
            return report
        }
        await saveUnsavedRecords()
        let unfinished: [StoreTransactionResult]
        if let given { unfinished = given } else { unfinished = await storeFront.unfinishedTransactions() }
        var records = knownRecords
        for record in (try? await self.records.allRecords()) ?? [] where records[record.transactionId] == nil {
            records[record.transactionId] = record
        }
        if let given {
            let ids = Set(given.map(\.transaction.id))
            records = records.filter { ids.contains($0.key) }
        }
        let plan = RecoveryPlan.make(
            records: records.values.sorted { $0.recordedAtUnixMilliseconds < $1.recordedAtUnixMilliseconds },
            unfinished: unfinished, accountToken: token,
            productCodes: await productCodes(for: unfinished, records: records),
            now: configuration.now())
        let now = ContinuousClock.now
        for item in plan.items.filter({ !isWaitingForRetry($0, now: now) }).prefix(ClientLimits.submissionsPerPassMax) {
            guard !stopped else { break }
            await carryOut(item, into: &report)
        }
        if !report.credited.isEmpty || !report.revoked.isEmpty { _ = await refreshAfterChange() }
        // The pass ran: a later pass failure starts a fresh budget.
        if passRetry == nil { passRetryAttempt = 0 }
        report.pending = pendingPurchases()
        return report
    }

    /// A submission whose backoff or Retry-After has not passed: its timer
    /// submits it, not this pass.
    private func isWaitingForRetry(_ item: RecoveryPlan.Item, now: ContinuousClock.Instant) -> Bool {
        guard case .submit(let record, _) = item, let notBefore = retryNotBefore[record.transactionId] else {
            return false
        }
        return notBefore > now
    }

    private func carryOut(_ item: RecoveryPlan.Item, into report: inout RecoveryReport) async {
        switch item {
        case .submit(let record, let isNew):
            if isNew { await saveRecord(record) }
            await submit(record, into: &report)
        case .otherAccount(let transactionId):
            setSummary(
                PendingPurchaseSummary(
                    transactionId: transactionId, appStoreProductId: knownRecords[transactionId]?.appStoreProductId,
                    state: .otherAccount))
        case .unverified(let transactionId, let reason):
            setSummary(
                PendingPurchaseSummary(
                    transactionId: transactionId, appStoreProductId: nil, state: .unverifiedByStore(reason: reason)))
        case .unknownProduct(let transaction):
            guard let record = await resolveUnknownProduct(transaction) else { return }
            await saveRecord(record)
            await submit(record, into: &report)
        }
    }

    /// Submits one record and settles the StoreKit transaction by the answer.
    func submit(_ record: PendingPurchaseRecord, into report: inout RecoveryReport) async {
        let transactionId = record.transactionId
        guard !stopped, inFlight.insert(transactionId).inserted else { return }
        defer { inFlight.remove(transactionId) }
        knownRecords[transactionId] = record
        switch await verifyOnce(record) {
        case .success(let grant):
            await finishAndForget(transactionId, settledAs: .credited(grant, balance: nil))
            report.credited.append(grant)
            announceCredit(grant)
        case .failure(let error) where error.disposition == .finish:
            await finishAndForget(transactionId, settledAs: .revoked(transactionId: transactionId))
            report.revoked.append(transactionId)
            announceRevocation(transactionId)
        case .failure:
            break
        }
    }

    /// A transaction no shown package names (e.g. the new user pack, no
    /// longer listed once credited): the gateway says which package it was
    /// if it recorded it for this user.
    private func resolveUnknownProduct(_ transaction: StoreTransaction) async -> PendingPurchaseRecord? {
        do throws(CreditsError) {
            let status = try await api.transactionStatus(transactionId: transaction.id)
            guard status.appStoreProductId == transaction.productID, !status.productCode.isEmpty else {
                throw CreditsError(.unexpectedAnswer(status: 200))
            }
            return PendingPurchaseRecord(
                transaction: transaction, productCode: status.productCode, now: configuration.now())
        } catch {
            setSummary(
                PendingPurchaseSummary(
                    transactionId: transaction.id, appStoreProductId: transaction.productID, state: .unknownProduct))
            if error.disposition == .keepAndRetry { schedulePassRetry(after: error) }
            return nil
        }
    }

    /// Package codes by App Store product: the offers shown, refreshed from
    /// the gateway when a transaction without a record names another product.
    private func productCodes(for unfinished: [StoreTransactionResult], records: [String: PendingPurchaseRecord]) async
        -> [String: String]
    {
        var codes = cachedOffers?.productCodesByAppStoreProductId ?? [:]
        let missing = unfinished.contains {
            records[$0.transaction.id] == nil && codes[$0.transaction.productID] == nil
        }
        if missing, let packages = try? await api.packages() {
            for package in packages where codes[package.appStoreProductId] == nil {
                codes[package.appStoreProductId] = package.productCode
            }
        }
        return codes
    }

    // MARK: Transaction updates

    /// A transaction StoreKit delivered outside a purchase call.
    func handleUpdate(_ update: StoreTransactionResult) async {
        let transaction = update.transaction
        guard !stopped, !inFlight.contains(transaction.id) else { return }
        // StoreKit delivers unfinished transactions again at launch; one
        // settled here already is done, unless it now carries a refund of a
        // credit (submitted so the backend hears of it from the app too).
        if let settled = settledThisSession[transaction.id], transaction.revocationDate == nil || settled.isRevoked {
            return
        }
        _ = await runPass(unfinished: [update])
    }

    // MARK: Retries

    func scheduleRetry(_ record: PendingPurchaseRecord, after error: CreditsError) {
        let transactionId = record.transactionId
        let attempt = (retryAttempts[transactionId] ?? 0) + 1
        cancelRetry(transactionId)
        guard let delay = retryDelayMilliseconds(beforeRetry: attempt, after: error) else {
            // Used up: the next launch or a foreground resubmits it, never before the Retry-After.
            if let seconds = error.retryAfterSeconds { retryNotBefore[transactionId] = .now + .seconds(seconds) }
            setSummary(
                PendingPurchaseSummary(
                    transactionId: transactionId, appStoreProductId: record.appStoreProductId,
                    state: .waitingForNextLaunch(error)))
            return
        }
        retryAttempts[transactionId] = attempt
        retryNotBefore[transactionId] = .now + .milliseconds(delay)
        setSummary(
            PendingPurchaseSummary(
                transactionId: transactionId, appStoreProductId: record.appStoreProductId,
                state: .awaitingCredit(error, nextAttemptInMilliseconds: delay)))
        retryTasks[transactionId] = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(delay) * 1_000_000)
            guard !Task.isCancelled else { return }
            await self?.retry(transactionId)
        }
    }

    func cancelRetry(_ transactionId: String) {
        retryTasks.removeValue(forKey: transactionId)?.cancel()
        retryAttempts[transactionId] = nil
        retryNotBefore[transactionId] = nil
    }

    /// The wait before retry `attempt` after `error`: the backoff, never
    /// shorter than the answer's Retry-After; nil once this launch's retries
    /// are used up.
    private func retryDelayMilliseconds(beforeRetry attempt: Int, after error: CreditsError) -> Int64? {
        guard
            let backoff = configuration.retrySchedule.delayMilliseconds(
                beforeRetry: attempt, unitRandom: configuration.unitRandom())
        else {
            return nil
        }
        return max(backoff, Int64(error.retryAfterSeconds ?? 0) * 1000)
    }

    /// A scheduled resubmission. While StoreKit holds the transaction
    /// unfinished it goes through the plan with StoreKit's current copy (a
    /// refund may have come since the retry was scheduled); otherwise the
    /// record is resubmitted as it is.
    private func retry(_ transactionId: String) async {
        retryTasks[transactionId] = nil
        retryNotBefore[transactionId] = nil
        guard !stopped, knownRecords[transactionId] != nil else { return }
        let current = await storeFront.unfinishedTransactions().filter { $0.transaction.id == transactionId }
        guard current.isEmpty else {
            _ = await runPass(unfinished: current)
            return
        }
        guard !stopped, let record = knownRecords[transactionId] else { return }
        var report = RecoveryReport()
        await submit(record, into: &report)
        if !report.credited.isEmpty || !report.revoked.isEmpty { _ = await refreshAfterChange() }
    }

    /// A whole pass failed (no account token), or the gateway could not say
    /// which package a transaction is: the pass again, with backoff and
    /// never before the answer's Retry-After.
    private func schedulePassRetry(after error: CreditsError) {
        guard passRetry == nil, !stopped else { return }
        passRetryAttempt += 1
        guard let delay = retryDelayMilliseconds(beforeRetry: passRetryAttempt, after: error) else { return }
        let task = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(delay) * 1_000_000)
            guard !Task.isCancelled else { return }
            await self?.retryPass()
        }
        passRetry = PassRetry(task: task, notBefore: .now + .milliseconds(delay), failure: error)
    }

    private func retryPass() async {
        passRetry = nil
        _ = await runPass(unfinished: nil)
    }

    func cancelPassRetry() {
        passRetry?.task.cancel()
        passRetry = nil
    }

    /// No pass can run before the account token's backoff or Retry-After
    /// has passed (its timer runs the pass then).
    private var passIsWaiting: Bool {
        guard cachedAccountToken == nil, let passRetry else { return false }
        return passRetry.notBefore > .now
    }

    /// The pass waiting to run again: its timer, when it may run, and the
    /// failure it waits out.
    struct PassRetry {
        let task: Task<Void, Never>
        let notBefore: ContinuousClock.Instant
        let failure: CreditsError
    }
}
