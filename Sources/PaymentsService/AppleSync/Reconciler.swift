import AppStoreServerAPI
import AppStoreVerification
import Foundation
import Logging
import ServiceKit
import UUIDText

/// Brings the ledger to Apple's view of a transaction: fetches it (Get
/// Transaction Info, or a page of Get Transaction History), verifies the
/// JWS with the same `SignedDataVerifier` as every other Apple word, and
/// records it through `PaymentsStore.record` (via `recordAppleWord`), so
/// the model owes the grant or the clawback and runs it. Apple signs these
/// answers when it sends them: their `signedDate` is the newest word about
/// the transaction, and it orders against the others like any word.
/// Used by `PaymentsService reconcile`, the stuck-row sweep and the revoked
/// sweep; idempotent (a second path to the same transaction changes nothing).
struct Reconciler: Sendable {
    let client: AppStoreServerAPIClient
    let processor: PaymentProcessor
    let logger: Logger

    /// Why a reconciliation could not finish.
    enum Failure: Error, CustomStringConvertible {
        /// Apple's API failed (rate limited, unavailable, refused the key...).
        case apple(AppStoreServerAPIError)
        /// Our side failed (database, a JWS the verifier refused).
        case payments(PaymentsError)

        var description: String {
            switch self {
            case .apple(let error): "App Store Server API: \(error)"
            case .payments(let error): "\(error)"
            }
        }

        /// A 429: the caller should wait (at least `retryAfter`) before asking again.
        var isRateLimited: Bool {
            if case .apple(let error) = self { return error.kind == .rateLimited }
            return false
        }

        var retryAfter: Duration? {
            if case .apple(let error) = self { return error.retryAfter }
            return nil
        }

        /// Whether the failure concerns only what was being read (one
        /// customer's history, one transaction) and would fail the same way
        /// on every run: a sweep logs it and moves on, so one bad item never
        /// holds up the others. Anything else (Apple or our database
        /// unavailable, Apple refusing the key, TLS, a cancelled run, an
        /// answer not as Apple documents it) stops the run, to be retried
        /// from the same place: skipping every customer for a reason that
        /// is not theirs would mark the pass complete with none swept.
        var concernsOnlyThisItem: Bool {
            switch self {
            case .apple(let error):
                !error.isRetryable
                    && (error.isNotFound || [.badRequest, .invalidArgument, .responseTooLarge].contains(error.kind))
            case .payments(let error): !error.isRetryable
            }
        }
    }

    /// What reconciling one transaction did.
    struct Outcome: Sendable {
        enum Result: String, Sendable {
            /// Apple's view was recorded (the model did what it owed).
            case recorded
            /// Neither environment this deployment accepts knows the transaction.
            case notFoundAtApple = "not_found_at_apple"
            /// An Xcode/LocalTesting row: not on the App Store Server API.
            case notOnTheAPI = "not_on_the_api"
        }

        var transactionId: String
        var result: Result
        /// Where Apple answered.
        var environment: AppStoreServerEnvironment?
        var before: PaymentRecord?
        var after: PaymentRecord?
        /// Whether Apple's word claimed the row for a user (and why not).
        var decision: AppleClaimRule.Decision?

        /// True when nothing is owed any more (or there is nothing to owe).
        var isSettled: Bool { after?.pendingStep == nil }
    }

    /// The environments this deployment asks Apple about, production first
    /// (Apple's recommended order for an id whose environment is unknown).
    var environments: [AppStoreServerEnvironment] {
        let accepted = processor.verifier.configuration.allowedEnvironments
        return AppStoreServerEnvironment.allCases.filter {
            accepted.contains(AppStoreEnvironment(rawValue: $0.rawValue))
        }
    }

    // MARK: One transaction

    /// Fetches Apple's view of `transactionId` and records it. A known row
    /// is asked in its own environment; an unknown id in production, then
    /// sandbox after a 404 (of the environments this deployment accepts).
    func reconcile(transactionId: String, requestId: String) async throws(Failure) -> Outcome {
        let known: PaymentRecord?
        do { known = try await processor.store.find(transactionId: transactionId) } catch { throw .payments(error) }
        var candidates = environments
        if let known {
            guard let environment = AppStoreServerEnvironment(rawValue: known.environment) else {
                return Outcome(transactionId: transactionId, result: .notOnTheAPI, before: known, after: known)
            }
            candidates = [environment]
        }
        let answer: (environment: AppStoreServerEnvironment, value: TransactionInfoResponse)
        do {
            if candidates == [.production, .sandbox] {
                answer = try await client.transactionInfoProductionThenSandbox(transactionId: transactionId)
            } else if let only = candidates.first {
                answer = (only, try await client.transactionInfo(transactionId: transactionId, environment: only))
            } else {
                return Outcome(transactionId: transactionId, result: .notOnTheAPI, before: known, after: known)
            }
        } catch  where error.isNotFound {
            logger.notice(
                "Apple does not know the transaction",
                [
                    "transaction_id": transactionId, "request_id": requestId,
                    "environments": candidates.map(\.rawValue).joined(separator: ","),
                ])
            return Outcome(transactionId: transactionId, result: .notFoundAtApple, before: known, after: known)
        } catch {
            throw .apple(error)
        }
        return try await record(
            signed: answer.value.signedTransactionInfo, from: answer.environment, requestId: requestId)
    }

    /// Verifies one signed transaction Apple returned and records it as
    /// Apple's word, then runs what the row owes.
    func record(signed: String, from environment: AppStoreServerEnvironment, requestId: String) async throws(Failure)
        -> Outcome
    {
        let transaction: JWSTransaction
        do { transaction = try await processor.verifiedTransaction(signed) } catch { throw .payments(error) }
        return try await record(transaction, signed: signed, from: environment, requestId: requestId)
    }

    /// Records a transaction `SignedDataVerifier` verified (from `signed`).
    func record(
        _ transaction: JWSTransaction, signed: String, from environment: AppStoreServerEnvironment,
        requestId: String
    ) async throws(Failure) -> Outcome {
        guard let transactionId = transaction.transactionId, transaction.productId != nil,
            transaction.purchaseDate != nil,
            transaction.environment != nil, transaction.bundleId != nil
        else {
            throw .payments(
                .transactionInvalid(
                    jwsFailure: "claims",
                    problem: "transactionId, productId, purchaseDate, environment and bundleId are required"))
        }
        let product = await processor.productLookup(for: transaction, requestId: requestId)
        let word: PaymentProcessor.AppleWord
        do {
            word = try await processor.store.mappingErrors {
                try await processor.store.pool.withTransaction { connection in
                    try await processor.recordAppleWord(
                        PaymentProcessor.verdict(of: transaction),
                        signedAtUnixMilliseconds: transaction.signedDate?.millisecondsSince1970,
                        transaction: transaction, signed: signed, product: product, in: connection)
                }
            }
        } catch {
            throw .payments(error)
        }
        let after = await processor.runOwedSteps(after: word, requestId: requestId)
        let before = word.word.before
        if before?.status != after.status || before == nil {
            logger.notice(
                "reconciled with Apple's view",
                [
                    "transaction_id": transactionId, "environment": environment.rawValue, "request_id": requestId,
                    "status_before": before?.status.rawValue ?? "", "status": after.status.rawValue,
                    "claim": Self.claimLabel(word.decision),
                ])
        }
        return Outcome(
            transactionId: transactionId, result: .recorded, environment: environment, before: before, after: after,
            decision: word.decision)
    }

    static func claimLabel(_ decision: AppleClaimRule.Decision) -> String {
        switch decision {
        case .claim: "claimed_through_app_account_token"
        case .unclaimed(let reason): reason.rawValue
        }
    }

    // MARK: One user

    /// Reconciles each of the user's transactions (at most
    /// `AppleSyncLimits.userTransactionsMax`), then reads the customer's
    /// consumable history (in each environment the user bought in, newest
    /// first, at most `AppleSyncLimits.historyPagesMax` pages) for
    /// purchases this service never saw: an unfinished purchase the app
    /// never submitted is there, and is credited when its appAccountToken
    /// is this user's (or another user's of this service: the token decides).
    func reconcile(userId: UUID, requestId: String) async throws(Failure) -> [Outcome] {
        let rows: [PaymentRecord]
        do {
            rows = try await processor.store.transactions(ofUser: userId, limit: AppleSyncLimits.userTransactionsMax)
        } catch { throw .payments(error) }
        var outcomes: [Outcome] = []
        var seen: Set<String> = []
        for row in rows {
            outcomes.append(try await reconcile(transactionId: row.transactionId, requestId: requestId))
            seen.insert(row.transactionId)
        }
        for environment in environments {
            guard let anchor = rows.first(where: { $0.environment == environment.rawValue }) else { continue }
            let history: PagedResult<String>
            do {
                // Newest first: a history past the page bound loses its oldest part.
                history = try await client.allTransactionHistory(
                    transactionId: anchor.transactionId,
                    query: TransactionHistoryQuery(productTypes: [.consumable], sort: .descending),
                    environment: environment, pagesMax: AppleSyncLimits.historyPagesMax)
            } catch  where error.isNotFound {
                continue
            } catch {
                throw .apple(error)
            }
            if !history.isComplete {
                logger.warning(
                    "reconcile read only the newest part of the user's history",
                    [
                        "user_id": UUIDText.lowercased(userId), "environment": environment.rawValue,
                        "pages": "\(history.pageCount)",
                        "request_id": requestId,
                    ])
            }
            for signed in history.items {
                let transaction: JWSTransaction
                do { transaction = try await processor.verifiedTransaction(signed) } catch { throw .payments(error) }
                guard let transactionId = transaction.transactionId, !seen.contains(transactionId) else { continue }
                seen.insert(transactionId)
                outcomes.append(try await record(transaction, signed: signed, from: environment, requestId: requestId))
            }
        }
        return outcomes
    }
}
