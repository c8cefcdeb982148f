import Foundation

extension CreditsClient {
    /// Resubmits every paid purchase not yet credited: StoreKit's unfinished
    /// transactions and the library's records (docs/protocols/payments/apple-iap-protocol.md 4.4). Runs
    /// at `start()`; call it again when the app comes to the foreground or
    /// after the user signs in again. Resets this launch's retry budget.
    @discardableResult
    public func resumePendingPurchases() async -> RecoveryReport {
        guard !stopped else { return RecoveryReport() }
        for transactionId in Array(retryTasks.keys) { cancelRetry(transactionId) }
        retryAttempts.removeAll()
        passRetryTask?.cancel()
        passRetryTask = nil
        passRetryAttempt = 0
        return await runPass(unfinished: nil)
    }

    /// One pass over `unfinished` (nil: all StoreKit holds, plus every record).
    func runPass(unfinished given: [StoreTransactionResult]?) async -> RecoveryReport {
        var report = RecoveryReport()
        guard !stopped else { return report }
        let token: UUID
        do {
            token = try await accountToken()
        } catch {
            report.failure = error
            if error.disposition == .keepAndRetry { schedulePassRetry() }
            return report
        }
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
            unfinished: unfinished, accountToken: token, productCodes: await productCodes(for: unfinished, records: records),
            now: configuration.now())
        for item in plan.items.prefix(ClientLimits.submissionsPerPassMax) {
            guard !stopped else { break }
            await carryOut(item, into: &report)
        }
        if !report.credited.isEmpty || !report.revoked.isEmpty { _ = await refreshAfterChange() }
        report.pending = pendingPurchases()
        return report
    }

    private func carryOut(_ item: RecoveryPlan.Item, into report: inout RecoveryReport) async {
        switch item {
        case .submit(let record, let isNew):
            if isNew { try? await records.save(record) }
            await submit(record, into: &report)
        case .otherAccount(let transactionId):
            setSummary(PendingPurchaseSummary(transactionId: transactionId, appStoreProductId: knownRecords[transactionId]?.appStoreProductId,
                                              state: .otherAccount))
        case .unverified(let transactionId, let reason):
            setSummary(PendingPurchaseSummary(transactionId: transactionId, appStoreProductId: nil, state: .unverifiedByStore(reason: reason)))
        case .unknownProduct(let transaction):
            guard let record = await resolveUnknownProduct(transaction) else { return }
            try? await records.save(record)
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
            emit(.revoked(transactionId: transactionId))
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
            guard status.appStoreProductId == transaction.productID, !status.productCode.isEmpty else { throw CreditsError(.unexpectedAnswer(status: 200)) }
            return PendingPurchaseRecord(transaction: transaction, productCode: status.productCode, now: configuration.now())
        } catch {
            setSummary(PendingPurchaseSummary(transactionId: transaction.id, appStoreProductId: transaction.productID, state: .unknownProduct))
            if error.disposition == .keepAndRetry { schedulePassRetry() }
            return nil
        }
    }

    /// Package codes by App Store product: the offers shown, refreshed from
    /// the gateway when a transaction without a record names another product.
    private func productCodes(for unfinished: [StoreTransactionResult], records: [String: PendingPurchaseRecord]) async -> [String: String] {
        var codes = cachedOffers?.productCodesByAppStoreProductId ?? [:]
        let missing = unfinished.contains { records[$0.transaction.id] == nil && codes[$0.transaction.productID] == nil }
        if missing, let packages = try? await api.packages() {
            for package in packages where codes[package.appStoreProductId] == nil { codes[package.appStoreProductId] = package.productCode }
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
        if let settled = settledThisSession[transaction.id], transaction.revocationDate == nil || settled.isRevoked { return }
        _ = await runPass(unfinished: [update])
    }

    // MARK: Retries

    func scheduleRetry(_ record: PendingPurchaseRecord, after error: CreditsError) {
        let transactionId = record.transactionId
        let attempt = (retryAttempts[transactionId] ?? 0) + 1
        retryTasks[transactionId]?.cancel()
        retryTasks[transactionId] = nil
        guard let scheduled = configuration.retrySchedule.delayMilliseconds(beforeRetry: attempt, unitRandom: configuration.unitRandom()) else {
            retryAttempts[transactionId] = nil
            setSummary(PendingPurchaseSummary(transactionId: transactionId, appStoreProductId: record.appStoreProductId,
                                              state: .waitingForNextLaunch(error)))
            return
        }
        // Never sooner than the answer's Retry-After.
        let delay = max(scheduled, Int64(error.retryAfterSeconds ?? 0) * 1000)
        retryAttempts[transactionId] = attempt
        setSummary(PendingPurchaseSummary(transactionId: transactionId, appStoreProductId: record.appStoreProductId,
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
    }

    /// A scheduled resubmission. While StoreKit holds the transaction
    /// unfinished it goes through the plan with StoreKit's current copy (a
    /// refund may have come since the retry was scheduled); otherwise the
    /// record is resubmitted as it is.
    private func retry(_ transactionId: String) async {
        retryTasks[transactionId] = nil
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

    /// A whole pass failed (no account token): try it again with backoff.
    private func schedulePassRetry() {
        guard passRetryTask == nil, !stopped else { return }
        passRetryAttempt += 1
        guard let delay = configuration.retrySchedule.delayMilliseconds(beforeRetry: passRetryAttempt, unitRandom: configuration.unitRandom()) else { return }
        passRetryTask = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(delay) * 1_000_000)
            guard !Task.isCancelled else { return }
            await self?.retryPass()
        }
    }

    private func retryPass() async {
        passRetryTask = nil
        _ = await runPass(unfinished: nil)
    }
}
