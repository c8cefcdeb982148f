import Contracts
import StrictJSON
import FieldRules

/// Backend answers turned into public response bodies. Pure; every answer
/// that breaks a rule of the public API throws `ResponseInvariantViolation`
/// (answered as INTERNAL) instead of passing nonsense to the app.
public enum BackendResponseMapping {
    public static func balance(_ response: GetBalanceResponse) throws(ResponseInvariantViolation) -> BalanceResponseBody
    {
        guard response.balance >= 0, response.lifetimeEarned >= 0, response.lifetimeSpent >= 0 else {
            throw ResponseInvariantViolation("negative amount in GetBalance")
        }
        return BalanceResponseBody(
            balance: response.balance, lifetimeEarned: response.lifetimeEarned, lifetimeSpent: response.lifetimeSpent)
    }

    /// Packages in the catalog's display order (`sort_order`, then as sent).
    public static func packages(_ response: ListPackagesResponse) throws(ResponseInvariantViolation)
        -> PackagesResponseBody
    {
        let ordered = response.packages.enumerated().sorted {
            ($0.element.sortOrder, $0.offset) < ($1.element.sortOrder, $1.offset)
        }.map(\.element)
        var packages: [PackagesResponseBody.Package] = []
        for package in ordered {
            let kind: PackagesResponseBody.Package.Kind
            switch package.kind {
            case .starter: kind = .starter
            case .regular: kind = .regular
            default: throw ResponseInvariantViolation("package \(package.productCode) has no kind")
            }
            guard package.credits > 0, !package.productCode.isEmpty, !package.appStoreProductId.isEmpty else {
                throw ResponseInvariantViolation("package \(package.productCode) is incomplete")
            }
            packages.append(
                PackagesResponseBody.Package(
                    productCode: package.productCode, appStoreProductId: package.appStoreProductId, kind: kind,
                    credits: package.credits, displayName: package.displayName, price: package.referencePrice,
                    currency: package.referenceCurrency))
        }
        return PackagesResponseBody(packages: packages)
    }

    /// The verify body (docs/protocols/payments/apple-iap-protocol.md, 3.2);
    /// the transaction must be the one the app submitted.
    public static func verification(
        _ response: VerifyTransactionResponse, submitted: VerifyTransactionRequestBody
    ) throws(ResponseInvariantViolation) -> VerifyTransactionResponseBody {
        let status: VerifyTransactionResponseBody.Status
        switch response.outcome {
        case .granted: status = .granted
        case .alreadyGranted: status = .alreadyGranted
        default: throw ResponseInvariantViolation("VerifyTransaction without an outcome")
        }
        guard response.transactionId == submitted.transactionId else {
            throw ResponseInvariantViolation("VerifyTransaction answered for another transaction")
        }
        guard !response.ledgerEventId.isEmpty else {
            throw ResponseInvariantViolation("grant without a ledger event id")
        }
        return try VerifyTransactionResponseBody(
            status: status, productCode: response.productCode, transactionId: response.transactionId,
            creditsAdded: response.creditsAdded, newBalance: response.newBalance, ledgerEventId: response.ledgerEventId)
    }

    /// The receipt body (apple-iap-protocol.md, 3.7): each failed item's
    /// (code, reason) becomes the problem code a verify would have answered,
    /// through the one table (`RPCFailureMapping`).
    public static func receipt(_ response: VerifyReceiptResponse) throws(ResponseInvariantViolation)
        -> VerifyReceiptResponseBody
    {
        var items: [VerifyReceiptResponseBody.Item] = []
        for result in response.results {
            let status: VerifyReceiptResponseBody.Item.Status
            switch result.status {
            case .success: status = .success
            case .duplicate: status = .duplicate
            case .failed: status = .failed
            default: throw ResponseInvariantViolation("receipt item without a status")
            }
            let code =
                status == .failed
                ? RPCFailureMapping.problemCode(grpcCode: Int(result.errorGrpcCode), reason: result.errorReason) : nil
            items.append(
                try VerifyReceiptResponseBody.Item(
                    status: status, transactionId: result.transactionId,
                    productCode: result.productCode.isEmpty ? nil : result.productCode,
                    creditsAdded: result.creditsAdded, errorCode: code,
                    errorDetail: RPCFailureMapping.isStableCode(result.errorDetail) ? result.errorDetail : nil))
        }
        return VerifyReceiptResponseBody(results: items, deferredCount: Int(response.deferredCount))
    }

    /// One of `user`'s transactions; anyone else's (or none) is NOT_FOUND,
    /// indistinguishable from a transaction that does not exist.
    public static func transaction(_ response: GetTransactionResponse, user: AuthenticatedUser, instance: String) throws
        -> TransactionStatusResponseBody
    {
        guard let transaction = response.transaction,
            (try? UUIDRule.canonical(transaction.userId)) == user.userId
        else { throw Problem(.notFound, detail: "No such transaction for this user.", instance: instance) }
        guard let status = transactionStatus(transaction.status) else {
            throw ResponseInvariantViolation("transaction without a status")
        }
        return TransactionStatusResponseBody(
            transactionId: transaction.transactionId, originalTransactionId: transaction.originalTransactionId,
            productCode: transaction.productCode, appStoreProductId: transaction.appStoreProductId,
            environment: transaction.environment, status: status, credits: transaction.credits,
            purchaseDateUnixMilliseconds: transaction.purchaseDateUnixMs,
            revocationDateUnixMilliseconds: transaction.revocationDateUnixMs > 0
                ? transaction.revocationDateUnixMs : nil,
            ledgerEventId: transaction.ledgerEventId.isEmpty ? nil : transaction.ledgerEventId)
    }

    /// A page of the user's ledger. Purchase and refund entries name their
    /// Apple transaction and product when their metadata does.
    public static func ledger(_ response: ListLedgerResponse) throws(ResponseInvariantViolation) -> LedgerResponseBody {
        var entries: [LedgerResponseBody.Entry] = []
        for entry in response.entries {
            guard entry.direction == 1 || entry.direction == -1, entry.amount >= 0, entry.balanceAfter >= 0 else {
                throw ResponseInvariantViolation("ledger entry with an impossible direction or amount")
            }
            let ext = (try? StrictJSONParser().parse(entry.metadataJson))?["ext"]
            var transactionId: String?, productCode: String?
            if case .string(let text)? = ext?["transaction_id"] { transactionId = text }
            if case .string(let text)? = ext?["product_code"] { productCode = text }
            entries.append(
                LedgerResponseBody.Entry(
                    id: entry.id, eventId: entry.eventId, changeType: entry.changeType, direction: entry.direction,
                    amount: entry.amount,
                    balanceAfter: entry.balanceAfter, bizType: entry.bizType,
                    bizId: entry.bizId.isEmpty ? nil : entry.bizId,
                    createdAtUnixMilliseconds: entry.createdAtUnixMs, transactionId: transactionId,
                    productCode: productCode))
        }
        return LedgerResponseBody(entries: entries, nextPageToken: response.nextPageToken)
    }

    /// A page of `user`'s purchases; a row of anyone else is a backend bug.
    public static func transactions(_ response: ListTransactionsResponse, user: AuthenticatedUser) throws
        -> TransactionListResponseBody
    {
        var transactions: [TransactionStatusResponseBody] = []
        for transaction in response.transactions {
            guard (try? UUIDRule.canonical(transaction.userId)) == user.userId else {
                throw ResponseInvariantViolation("ListTransactions answered another user's purchase")
            }
            var single = GetTransactionResponse()
            single.transaction = transaction
            transactions.append(try Self.transaction(single, user: user, instance: ""))
        }
        return TransactionListResponseBody(transactions: transactions, nextPageToken: response.nextPageToken)
    }

    public static func accountToken(_ response: GetAccountTokenResponse) throws(ResponseInvariantViolation)
        -> AccountTokenResponseBody
    {
        guard let token = try? UUIDRule.canonical(response.appAccountToken) else {
            throw ResponseInvariantViolation("appAccountToken is not a UUID")
        }
        return AccountTokenResponseBody(appAccountToken: token)
    }

    static func transactionStatus(_ status: TransactionStatus) -> TransactionStatusResponseBody.Status? {
        switch status {
        case .received: return .received
        case .verified: return .verified
        case .granted: return .granted
        case .failed: return .failed
        case .refunded: return .refunded
        case .refundedInsufficient: return .refundedInsufficient
        case .revoked: return .revoked
        default: return nil
        }
    }
}
