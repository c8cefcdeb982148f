import Contracts
import RPCCore
import RPCRuntime
import Synchronization

/// In-process PointsService and PaymentsService doubles: real RPCServers
/// on 127.0.0.1:0 registered with the Contracts methods, recording what the
/// gateway sent and answering canned responses (or a configured failure).
final class BackendDoubles: Sendable {
    static let ownerUserId = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
    static let otherUserId = "9b2c6f4e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"

    /// One call as the double received it.
    struct Call: Sendable {
        let method: String
        let requestId: String?
        let message: any Sendable
    }

    private let calls = Mutex<[Call]>([])
    private let failures = Mutex<[String: RPCError]>([:])
    private let serving = Mutex<(points: Bool, payments: Bool)>((true, true))
    private let delayMilliseconds = Mutex<Int>(0)
    private let cancelled = Mutex<Int>(0)
    let points: RPCServer
    let payments: RPCServer

    private init(points: RPCServer, payments: RPCServer) {
        self.points = points
        self.payments = payments
    }

    /// Builds both servers (not started).
    static func make() -> BackendDoubles {
        let holder = Holder()
        var pointsRouter = Router()
        var paymentsRouter = Router()
        registerPoints(on: &pointsRouter, holder: holder)
        registerPayments(on: &paymentsRouter, holder: holder)
        let doubles = BackendDoubles(
            points: RPCServer(configuration: .init(listen: .init(host: "127.0.0.1", port: 0)), router: pointsRouter),
            payments: RPCServer(configuration: .init(listen: .init(host: "127.0.0.1", port: 0)), router: paymentsRouter)
        )
        holder.doubles.withLock { $0 = doubles }
        return doubles
    }

    /// Lets handlers registered before the doubles exist reach them.
    final class Holder: Sendable {
        let doubles = Mutex<BackendDoubles?>(nil)
        var value: BackendDoubles { doubles.withLock { $0! } }
    }

    func start() throws -> (points: Int, payments: Int) {
        (try points.start(), try payments.start())
    }

    func stop() async {
        await points.shutdown(gracePeriod: .seconds(1))
        await payments.shutdown(gracePeriod: .seconds(1))
    }

    // MARK: Test controls and observations

    var recorded: [Call] { calls.withLock { $0 } }
    /// Calls whose handler saw cancellation while it waited (the gateway's
    /// call was reset).
    var cancelledCalls: Int { cancelled.withLock { $0 } }
    var recordedMethods: [String] { recorded.map(\.method).filter { $0 != "Check" } }

    func fail(_ method: String, with error: RPCError) { failures.withLock { $0[method] = error } }

    func setServing(points: Bool, payments: Bool) { serving.withLock { $0 = (points, payments) } }

    /// Every recorded call waits this long before answering.
    func setDelay(milliseconds: Int) { delayMilliseconds.withLock { $0 = milliseconds } }

    func last<Message>(_ type: Message.Type) -> Message? {
        recorded.reversed().lazy.compactMap { $0.message as? Message }.first
    }

    private func record<Message: Sendable>(_ method: String, _ request: ServerRequest<Message>) async throws {
        calls.withLock {
            $0.append(
                Call(
                    method: method, requestId: request.metadata[stringValues: "x-request-id"].first,
                    message: request.message))
        }
        let delay = delayMilliseconds.withLock { $0 }
        if delay > 0 {
            do {
                try await Task.sleep(for: .milliseconds(delay))
            } catch {
                cancelled.withLock { $0 += 1 }
                throw error
            }
        }
        if let failure = failures.withLock({ $0[method] }) { throw failure }
    }

    // MARK: Handlers

    private static func registerHealth(on router: inout Router, holder: Holder, isPoints: Bool) {
        router.register(HealthMethods.check) { _, _ in
            let state = holder.value.serving.withLock { $0 }
            return HealthCheckResponse(status: (isPoints ? state.points : state.payments) ? .serving : .notServing)
        }
    }

    private static func registerPoints(on router: inout Router, holder: Holder) {
        registerHealth(on: &router, holder: holder, isPoints: true)
        router.register(PointsMethods.getBalance) { message, request in
            try await holder.value.record("GetBalance", request)
            var response = GetBalanceResponse()
            response.userId = message.userId
            response.balance = 180
            response.lifetimeEarned = 200
            response.lifetimeSpent = 20
            return response
        }
        router.register(PointsMethods.listPackages) { _, request in
            try await holder.value.record("ListPackages", request)
            var regular = Package()
            regular.productCode = "credits_500"
            regular.appStoreProductId = "com.meeyao.qianwen.credits_500"
            regular.kind = .regular
            regular.credits = 500
            regular.displayName = "500 credits"
            regular.referencePrice = "4.99"
            regular.referenceCurrency = "USD"
            regular.sortOrder = 2
            var starter = Package()
            starter.productCode = "starter_pack"
            starter.appStoreProductId = "com.meeyao.qianwen.starter_pack"
            starter.kind = .starter
            starter.credits = 100
            starter.displayName = "Starter pack"
            starter.referencePrice = "0.99"
            starter.referenceCurrency = "USD"
            starter.sortOrder = 1
            var response = ListPackagesResponse()
            response.packages = [regular, starter]
            return response
        }
    }

    private static func registerPayments(on router: inout Router, holder: Holder) {
        registerHealth(on: &router, holder: holder, isPoints: false)
        router.register(PaymentsMethods.verifyTransaction) { message, request in
            try await holder.value.record("VerifyTransaction", request)
            var response = VerifyTransactionResponse()
            response.outcome = message.transactionId == "2000000000000002" ? .alreadyGranted : .granted
            response.productCode = message.productCode
            response.transactionId = message.transactionId
            response.creditsAdded = response.outcome == .granted ? 100 : 0
            response.newBalance = 180
            response.ledgerEventId = "payment.apple_iap:\(message.transactionId)"
            return response
        }
        router.register(PaymentsMethods.getTransaction) { message, request in
            try await holder.value.record("GetTransaction", request)
            var transaction = Transaction()
            transaction.transactionId = message.transactionId
            transaction.originalTransactionId = message.transactionId
            // Transaction 7 belongs to someone else (the double does not
            // filter, so the gateway's own check is what is tested).
            transaction.userId = message.transactionId == "7" ? otherUserId : ownerUserId
            transaction.productCode = "starter_pack"
            transaction.appStoreProductId = "com.meeyao.qianwen.starter_pack"
            transaction.environment = "Sandbox"
            transaction.status = .granted
            transaction.credits = 100
            transaction.purchaseDateUnixMs = 1_780_000_000_000
            transaction.ledgerEventId = "payment.apple_iap:\(message.transactionId)"
            var response = GetTransactionResponse()
            response.transaction = transaction
            return response
        }
        router.register(PaymentsMethods.getAccountToken) { _, request in
            try await holder.value.record("GetAccountToken", request)
            var response = GetAccountTokenResponse()
            response.appAccountToken = "7C4C7A82-2F6F-4E70-B57A-8B0A7F2E9B72"
            return response
        }
        router.register(PaymentsMethods.setConsumptionConsent) { message, request in
            try await holder.value.record("SetConsumptionConsent", request)
            var response = ConsumptionConsentResponse()
            response.consented = message.consented
            response.recorded = true
            return response
        }
        router.register(PaymentsMethods.getConsumptionConsent) { _, request in
            try await holder.value.record("GetConsumptionConsent", request)
            return ConsumptionConsentResponse()
        }
        // Four items, one of each kind the gateway renders: credited now,
        // credited before, another user's (permanent), Apple down (retryable).
        router.register(PaymentsMethods.verifyReceipt) { _, request in
            try await holder.value.record("VerifyReceipt", request)
            var response = VerifyReceiptResponse()
            func item(
                _ status: ReceiptItemStatus, _ id: String, _ code: String, _ credits: Int64, _ grpc: Int32 = 0,
                _ reason: String = "",
                _ detail: String = ""
            ) -> ReceiptItemResult {
                var result = ReceiptItemResult()
                result.status = status
                result.transactionId = id
                result.productCode = code
                result.creditsAdded = credits
                result.errorGrpcCode = grpc
                result.errorReason = reason
                result.errorDetail = detail
                return result
            }
            response.results = [
                item(.success, "2000000000000011", "popular_pack", 210),
                item(.duplicate, "2000000000000012", "premium_pack", 0),
                item(.failed, "2000000000000013", "popular_pack", 0, 6, "TRANSACTION_CONFLICT"),
                item(.failed, "2000000000000014", "", 0, 14, "APPLE_UNAVAILABLE", "not a code: free text"),
            ]
            return response
        }
        router.register(PaymentsMethods.handleNotification) { _, request in
            try await holder.value.record("HandleNotification", request)
            var response = HandleNotificationResponse()
            response.outcome = "recorded"
            return response
        }
    }
}
