import Foundation

/// One purchase (docs/CLIENT.md, "The rules it keeps") as a pure state machine: each event returns the
/// one action to run next; `CreditsClient` runs the actions and feeds back
/// their results. No I/O here, so every path is tested alone.
///
///     idle ──start──▶ purchasing ──store: verified──▶ recording ──▶ verifying
///                        │ pending / cancelled / failed / unverified: completed (no gateway call)
///     recording ──settled elsewhere (a recovery pass credited it)──▶ refreshing
///     verifying ──granted, already_granted, REVOKED──▶ finishing ──▶ refreshing ──▶ completed
///     verifying ──retryable or refused──▶ completed (transaction kept unfinished)
///
/// The StoreKit transaction is finished only from `verifying` and only when
/// the answer's disposition is `.finish`.
public struct PurchaseFlow: Sendable {
    public enum State: Sendable, Hashable {
        case idle
        /// The purchase sheet is up for this offer.
        case purchasing(PackageOffer)
        /// Paid; the durable record is being written.
        case recording(PendingPurchaseRecord)
        /// The record is being submitted to the gateway.
        case verifying(PendingPurchaseRecord)
        /// Settled for good (credited or revoked); StoreKit is finishing it.
        case finishing(transactionId: String, outcome: PurchaseOutcome)
        /// Balance and packages are being refreshed.
        case refreshing(PurchaseOutcome)
        case completed(PurchaseOutcome)
    }

    public enum Action: Sendable, Hashable {
        /// Show StoreKit's sheet, tagged with the user's appAccountToken.
        case purchase(productID: String, appAccountToken: UUID)
        /// Write the paid purchase to the durable record store.
        case record(PendingPurchaseRecord)
        /// POST verify for it.
        case verify(PendingPurchaseRecord)
        /// Finish the StoreKit transaction and remove its record.
        case finish(transactionId: String)
        /// GET balance and packages.
        case refresh
        /// Done: return the outcome.
        case complete(PurchaseOutcome)
    }

    public private(set) var state: State = .idle
    /// App Store product id → package code, from the offers shown.
    private let productCodes: [String: String]

    public init(offers: PackageOffers) {
        productCodes = offers.productCodesByAppStoreProductId
    }

    /// The user tapped "buy" on `offer`.
    public mutating func start(_ offer: PackageOffer, appAccountToken: UUID) throws(PurchaseFlowViolation) -> Action {
        guard case .idle = state else { throw PurchaseFlowViolation(event: "start", state: state) }
        guard offer.isAvailable else { return complete(.productUnavailable) }
        state = .purchasing(offer)
        return .purchase(productID: offer.appStoreProductId, appAccountToken: appAccountToken)
    }

    /// StoreKit's sheet ended; `failure` when it threw before payment.
    public mutating func storeAnswered(_ answer: Result<StorePurchaseOutcome, StoreFailure>, now: Date)
        throws(PurchaseFlowViolation) -> Action
    {
        guard case .purchasing(let offer) = state else {
            throw PurchaseFlowViolation(event: "storeAnswered", state: state)
        }
        switch answer {
        case .failure(let failure): return complete(.storeFailed(reason: failure.reason))
        case .success(.pending): return complete(.pending)
        case .success(.userCancelled): return complete(.cancelled)
        case .success(.success(.unverified(let transaction, _))):
            return complete(.unverifiedByStore(transactionId: transaction.id))
        case .success(.success(.verified(let transaction))):
            // The package code comes from the product StoreKit sold, which is the offer's one.
            guard
                let productCode = productCodes[transaction.productID]
                    ?? (transaction.productID == offer.appStoreProductId ? offer.productCode : nil),
                PendingPurchaseRecord.isValidTransactionId(transaction.id)
            else {
                return complete(
                    .refused(
                        transactionId: transaction.id,
                        CreditsError(.invalidRequest("StoreKit sold a product no package names"))))
            }
            let record = PendingPurchaseRecord(transaction: transaction, productCode: productCode, now: now)
            state = .recording(record)
            return .record(record)
        }
    }

    /// The record write ended (a failed write does not stop the purchase:
    /// StoreKit still holds the transaction unfinished).
    public mutating func recordAttempted() throws(PurchaseFlowViolation) -> Action {
        guard case .recording(let record) = state else {
            throw PurchaseFlowViolation(event: "recordAttempted", state: state)
        }
        state = .verifying(record)
        return .verify(record)
    }

    /// Paid, but the transaction was settled already (`.credited` or
    /// `.revoked` by a recovery pass that found it unfinished as the sheet
    /// closed, and finished it): nothing to record, verify or finish; the
    /// balance and packages are refreshed and that settlement reported.
    public mutating func settledElsewhere(_ outcome: PurchaseOutcome) throws(PurchaseFlowViolation) -> Action {
        guard case .recording(let record) = state, outcome.settles(record.transactionId) else {
            throw PurchaseFlowViolation(event: "settledElsewhere", state: state)
        }
        state = .refreshing(outcome)
        return .refresh
    }

    /// The gateway answered the verify.
    public mutating func verifyAnswered(_ answer: Result<VerifiedGrant, CreditsError>) throws(PurchaseFlowViolation)
        -> Action
    {
        guard case .verifying(let record) = state else {
            throw PurchaseFlowViolation(event: "verifyAnswered", state: state)
        }
        let id = record.transactionId
        switch answer {
        case .success(let grant):
            state = .finishing(transactionId: id, outcome: .credited(grant, balance: nil))
            return .finish(transactionId: id)
        case .failure(let error):
            switch error.disposition {
            case .finish:
                state = .finishing(transactionId: id, outcome: .revoked(transactionId: id))
                return .finish(transactionId: id)
            case .keepAndRetry: return complete(.awaitingCredit(transactionId: id, error))
            case .keepAndReport: return complete(.refused(transactionId: id, error))
            }
        }
    }

    /// StoreKit finished the transaction.
    public mutating func finished() throws(PurchaseFlowViolation) -> Action {
        guard case .finishing(_, let outcome) = state else {
            throw PurchaseFlowViolation(event: "finished", state: state)
        }
        state = .refreshing(outcome)
        return .refresh
    }

    /// Balance and packages were refreshed (`balance` nil when that failed).
    public mutating func refreshed(balance: CreditBalance?) throws(PurchaseFlowViolation) -> Action {
        guard case .refreshing(let outcome) = state else {
            throw PurchaseFlowViolation(event: "refreshed", state: state)
        }
        if case .credited(let grant, _) = outcome { return complete(.credited(grant, balance: balance)) }
        return complete(outcome)
    }

    /// The outcome to report when the runner stops driving the flow (the
    /// client was stopped, or a runner bug): nothing was paid before the
    /// store answered; once paid, the transaction stays unfinished for the
    /// next launch, so it awaits credit until StoreKit has finished it;
    /// after that, its settlement stands.
    public func outcomeIfAbandoned(_ error: CreditsError) -> PurchaseOutcome {
        switch state {
        case .idle, .purchasing: .notStarted(error)
        case .recording(let record), .verifying(let record): .awaitingCredit(transactionId: record.transactionId, error)
        case .finishing(let transactionId, _): .awaitingCredit(transactionId: transactionId, error)
        case .refreshing(let outcome), .completed(let outcome): outcome
        }
    }

    private mutating func complete(_ outcome: PurchaseOutcome) -> Action {
        state = .completed(outcome)
        return .complete(outcome)
    }
}

/// StoreKit failed before taking payment.
public struct StoreFailure: Error, Sendable, Hashable {
    /// StoreKit's description; never signed data.
    public let reason: String

    public init(reason: String) { self.reason = reason }
}

/// An event arrived in a state that cannot take it: a bug in the runner.
/// The runner then leaves the transaction unfinished.
public struct PurchaseFlowViolation: Error, Sendable, Hashable, CustomStringConvertible {
    public let event: String
    public let state: PurchaseFlow.State

    public var description: String { "purchase flow: \(event) in state \(state)" }
}
