import Contracts
import HTTPServer
import Metrics
import RPCCore
import RPCRuntime
import ServiceKit

/// Runs a prepared `GatewayCommand` against the services and renders the
/// answer. The user id, email hash and masked email always come from the
/// verified token; every call carries a deadline and the request id.
/// Throws `RPCError` (mapped by `RPCFailureMapping`), `Problem` or
/// `ResponseInvariantViolation`.
public struct CommandExecutor: Sendable {
    public let backends: GatewayBackends
    public let emailIdentity: EmailIdentity
    public let readiness: ReadinessProbe
    /// Each backend call counted by method and status (nil: not counted).
    public let rpcMetrics: RPCClientMetrics?
    /// GET balance's reads, coalesced under load.
    let balanceReads: BalanceReadBatcher

    /// `balanceReadsPerCall` observes the users of each GetBalances call;
    /// `callLoop` (the loop serving the requests) runs the balance calls and
    /// holds each call's slot until it has caught up.
    public init(
        backends: GatewayBackends, emailIdentity: EmailIdentity, readiness: ReadinessProbe,
        rpcMetrics: RPCClientMetrics? = nil,
        balanceReadsPerCall: Histogram? = nil, callLoop: EventLoop? = nil
    ) {
        self.backends = backends
        self.emailIdentity = emailIdentity
        self.readiness = readiness
        self.rpcMetrics = rpcMetrics
        var catchUp: BalanceReadBatcher.CatchUp?
        if let callLoop {
            catchUp = { await callLoop.caughtUp(within: GatewayLimits.balanceReadCatchUpMax) }
        }
        balanceReads = BalanceReadBatcher(
            caller: CountedCaller(backends.points, metrics: rpcMetrics), callExecutor: callLoop,
            catchUp: catchUp
        ) { reads in
            balanceReadsPerCall?.observe(Double(reads))
        }
    }

    private static let readTimeout = GatewayLimits.readTimeout
    private static let verifyTimeout = GatewayLimits.verifyTransactionTimeout
    private static let receiptTimeout = GatewayLimits.verifyReceiptTimeout
    private static let notificationTimeout = GatewayLimits.notificationTimeout

    public func execute(_ command: GatewayCommand, requestId: String, instance: String) async throws -> HTTPResponse {
        var metadata = Metadata()
        metadata.addString(requestId, forKey: RequestID.metadataKey)
        switch command {
        case .health:
            return HealthResponseBody(status: "ok").response()
        case .readiness:
            guard readiness.isReady else {
                throw Problem(.serviceUnavailable, detail: "A backend service is not serving.", instance: instance)
            }
            return HealthResponseBody(status: "ok").response()
        case .getBalance(let user):
            let response = try await balanceReads.balance(userId: user.userId, metadata: metadata)
            return try BackendResponseMapping.balance(response).response()
        case .listPackages(let user):
            var request = ListPackagesRequest()
            request.userId = user.userId
            request.emailHash = emailIdentity.hash(user.email)
            let response = try await CountedCaller(backends.points, metrics: rpcMetrics).call(
                PointsMethods.listPackages, request, metadata: metadata, timeout: Self.readTimeout)
            return try BackendResponseMapping.packages(response).response()
        case .listLedger(let user, let page):
            var request = ListLedgerRequest()
            request.userId = user.userId
            request.pageSize = page.pageSize
            request.pageToken = page.pageToken
            let response = try await CountedCaller(backends.points, metrics: rpcMetrics).call(
                PointsMethods.listLedger, request, metadata: metadata, timeout: Self.readTimeout)
            return try BackendResponseMapping.ledger(response).response()
        case .listTransactions(let user, let page):
            var request = ListTransactionsRequest()
            request.userId = user.userId
            request.pageSize = page.pageSize
            request.pageToken = page.pageToken
            let response = try await CountedCaller(backends.payments, metrics: rpcMetrics).call(
                PaymentsMethods.listTransactions, request, metadata: metadata, timeout: Self.readTimeout)
            return try BackendResponseMapping.transactions(response, user: user).response()
        case .verifyTransaction(let user, let body):
            let response = try await CountedCaller(backends.payments, metrics: rpcMetrics).call(
                PaymentsMethods.verifyTransaction, verifyRequest(user: user, body: body), metadata: metadata,
                timeout: Self.verifyTimeout)
            return try BackendResponseMapping.verification(response, submitted: body).response()
        case .verifyReceipt(let user, let body):
            var request = VerifyReceiptRequest()
            request.userId = user.userId
            request.emailHash = emailIdentity.hash(user.email)
            request.emailMasked = EmailIdentity.masked(user.email)
            request.receiptData = body.receiptData
            let response = try await CountedCaller(backends.payments, metrics: rpcMetrics).call(
                PaymentsMethods.verifyReceipt, request, metadata: metadata, timeout: Self.receiptTimeout)
            return try BackendResponseMapping.receipt(response).response()
        case .getTransaction(let user, let transactionId):
            var request = GetTransactionRequest()
            request.userId = user.userId
            request.transactionId = transactionId
            let response = try await CountedCaller(backends.payments, metrics: rpcMetrics).call(
                PaymentsMethods.getTransaction, request, metadata: metadata, timeout: Self.readTimeout)
            return try BackendResponseMapping.transaction(response, user: user, instance: instance).response()
        case .getAccountToken(let user):
            var request = GetAccountTokenRequest()
            request.userId = user.userId
            let response = try await CountedCaller(backends.payments, metrics: rpcMetrics).call(
                PaymentsMethods.getAccountToken, request, metadata: metadata, timeout: Self.readTimeout)
            return try BackendResponseMapping.accountToken(response).response()
        case .getConsumptionConsent(let user):
            var request = GetConsumptionConsentRequest()
            request.userId = user.userId
            let response = try await CountedCaller(backends.payments, metrics: rpcMetrics).call(
                PaymentsMethods.getConsumptionConsent, request, metadata: metadata, timeout: Self.readTimeout)
            return ConsumptionConsentResponseBody(response).response()
        case .setConsumptionConsent(let user, let body):
            var request = SetConsumptionConsentRequest()
            request.userId = user.userId
            request.consented = body.consented
            let response = try await CountedCaller(backends.payments, metrics: rpcMetrics).call(
                PaymentsMethods.setConsumptionConsent, request, metadata: metadata, timeout: Self.readTimeout)
            return ConsumptionConsentResponseBody(response).response()
        case .handleNotification(let body):
            var request = HandleNotificationRequest()
            request.signedPayload = body.signedPayload
            _ = try await CountedCaller(backends.payments, metrics: rpcMetrics).call(
                PaymentsMethods.handleNotification, request, metadata: metadata, timeout: Self.notificationTimeout)
            // 200 only once PaymentsService recorded it; any failure above
            // answers a problem so Apple retries.
            var headers = HTTPHeaders()
            headers.add(name: "Cache-Control", value: "no-store")
            return HTTPResponse(status: 200, headers: headers)
        }
    }

    /// The VerifyTransaction request: identity from the token, purchase
    /// fields from the validated body.
    func verifyRequest(user: AuthenticatedUser, body: VerifyTransactionRequestBody) -> VerifyTransactionRequest {
        var request = VerifyTransactionRequest()
        request.userId = user.userId
        request.emailHash = emailIdentity.hash(user.email)
        request.emailMasked = EmailIdentity.masked(user.email)
        request.productCode = body.productCode
        request.appStoreProductId = body.appStoreProductId
        request.transactionId = body.transactionId
        request.signedTransactionInfo = body.signedTransactionInfo
        request.appAccountToken = body.appAccountToken ?? ""
        return request
    }
}
