import Contracts
import RPCCore

/// `payments.v1.Payments` on the RPC runtime: a thin adapter over
/// `PaymentProcessor`, carrying the caller's request id into the logs.
struct PaymentsRPCService: Sendable {
    let processor: PaymentProcessor
    /// StoreKit 1 receipts (off without the App Store Server API key).
    let receipts: ReceiptCrediting

    func register(on router: inout Router) {
        router.register(PaymentsMethods.verifyTransaction) { request, call in
            try await processor.verify(request, requestId: Self.requestId(call))
        }
        router.register(PaymentsMethods.getTransaction) { request, _ in
            var response = GetTransactionResponse()
            response.transaction = try await processor.transaction(
                userId: request.userId, transactionId: request.transactionId)
            return response
        }
        router.register(PaymentsMethods.handleNotification) { request, call in
            try await processor.handleNotification(request.signedPayload, requestId: Self.requestId(call))
        }
        router.register(PaymentsMethods.setConsumptionConsent) { request, _ in
            try await processor.setConsumptionConsent(userId: request.userId, consented: request.consented)
        }
        router.register(PaymentsMethods.getConsumptionConsent) { request, _ in
            try await processor.consumptionConsent(userId: request.userId)
        }
        router.register(PaymentsMethods.listTransactions) { request, _ in
            try await processor.listTransactions(
                userId: request.userId, pageSize: request.pageSize, pageToken: request.pageToken)
        }
        router.register(PaymentsMethods.verifyReceipt) { request, call in
            try await receipts.verify(request, requestId: Self.requestId(call))
        }
        router.register(PaymentsMethods.getAccountToken) { request, _ in
            var response = GetAccountTokenResponse()
            response.appAccountToken = try await processor.accountToken(userId: request.userId)
            return response
        }
    }

    static func requestId(_ call: ServerRequest<some Sendable>) -> String? {
        call.metadata[stringValues: "x-request-id"].first.map { String($0.prefix(128)) }
    }
}
