import AppStoreVerification
import Contracts
import Foundation
import PostgresClient

/// Apple's word about a transaction reaching the ledger without the app:
/// a notification (ONE_TIME_CHARGE, REFUND, REVOKE, REFUND_REVERSED) or a
/// transaction fetched from the App Store Server API by reconciliation.
/// Every path records through `PaymentsStore.record`, with the claim
/// `AppleClaimRule` allows when the transaction's appAccountToken names a
/// user of this service, so the same transaction reached by two paths
/// changes the ledger once.
extension PaymentProcessor {
    /// What recording one of Apple's words did, and whether it claimed the row.
    struct AppleWord: Sendable {
        var word: PaymentsStore.WordResult
        var decision: AppleClaimRule.Decision
        /// True when this word created the row: a step it owes is leased to
        /// the caller, who runs it (`runOwedSteps(after:)`).
        var inserted: Bool { word.before == nil }
    }

    /// The catalog entry of the transaction's product, for `AppleClaimRule`.
    /// Looked up before the database transaction opens (it may call
    /// PointsService), and only when the transaction names an
    /// appAccountToken (without one nothing can be claimed). A product the
    /// cached catalog lacks is looked up again in a fresh copy, as the
    /// app's verify does.
    func productLookup(for transaction: JWSTransaction, requestId: String?) async -> AppleClaimRule.ProductLookup {
        guard transaction.appAccountToken != nil, let productId = transaction.productId else { return .notInCatalog }
        do {
            var packages = try await catalog.packages(requestId: requestId)
            if !packages.contains(where: { $0.appStoreProductId == productId }) {
                packages = try await catalog.packages(fresh: true, requestId: requestId)
            }
            guard let package = packages.first(where: { $0.appStoreProductId == productId }) else {
                return .notInCatalog
            }
            return .found(
                AppleClaimRule.Product(
                    productCode: package.productCode, credits: package.credits,
                    needsEmailIdentity: package.kind != .regular))
        } catch {
            return .catalogUnavailable
        }
    }

    /// Records `verdict` (Apple's word signed at `signedAt`) about the
    /// verified `transaction` inside `connection`, claiming the row for the
    /// owner of its appAccountToken when `AppleClaimRule` allows.
    func recordAppleWord(
        _ verdict: AppleVerdict, signedAtUnixMilliseconds signedAt: Int64?, transaction: JWSTransaction, signed: String,
        product: AppleClaimRule.ProductLookup, in connection: PostgresConnection
    ) async throws -> AppleWord {
        var owner = AppleClaimRule.TokenOwner.none
        if let token = transaction.appAccountToken {
            owner =
                try await store.userId(forAccountToken: token, in: connection).map(AppleClaimRule.TokenOwner.user)
                ?? .unknown
        }
        let decision = AppleClaimRule.decide(
            owner: owner, environment: transaction.environment ?? AppStoreEnvironment(rawValue: ""),
            type: transaction.type?.rawValue,
            quantity: transaction.quantity, product: product, policy: creditPolicy)
        var claim: PaymentClaim?
        switch decision {
        case .claim(let granted):
            claim = granted
        case .unclaimed(.productNotInCatalog):
            // A paid consumable of a user of ours that the catalog lacks: as
            // for the app's verify, an operator must add the product.
            logger.critical(
                "ALERT Apple reported a purchase of a product missing from the catalog",
                [
                    "alert": "catalog_missing_product", "app_store_product_id": transaction.productId ?? "",
                    "transaction_id": transaction.transactionId ?? "",
                ])
        case .unclaimed:
            break
        }
        var tokenOwner: UUID?
        if case .user(let user) = owner { tokenOwner = user }
        let word = try await store.record(
            verdict, signedAtUnixMilliseconds: signedAt,
            for: Self.newPayment(transaction, signed: signed, tokenOwner: tokenOwner, claim: claim), in: connection)
        return AppleWord(word: word, decision: decision)
    }

    /// Runs what the row owes after `word` committed: at once when the word
    /// created the row (the insert leased it to us), otherwise when its
    /// lease can be taken; for a row leased elsewhere it waits, bounded
    /// (`awaitLeaseHolder`), for that runner's result, so reports and answers
    /// say where the row ended (the saga worker retries anything not finished).
    func runOwedSteps(after word: AppleWord, requestId: String?) async -> PaymentRecord {
        let record = word.word.after
        guard record.pendingStep != nil else { return record }
        if word.inserted { return await runner.runOwedSteps(record, requestId: requestId).record }
        if let claimed = try? await store.claim(transactionId: record.transactionId) {
            return await runner.runOwedSteps(claimed, requestId: requestId).record
        }
        // Another runner (the worker) holds the lease: report where it leaves the row.
        let owed = record.pendingStep
        return await awaitLeaseHolder(record, until: { $0.pendingStep != owed }) ?? record
    }
}
