import Contracts
import FieldRules
import Foundation
import Metrics
import RPCCore
import RPCRuntime
import ServiceKit
import UUIDText

/// PaymentsService's calls into PointsService, each classified into what the
/// saga does next (`StepFailure`). When in doubt a failure is transient:
/// retrying an idempotent call is safe, dropping a paid purchase is not.
struct PointsLedger: Sendable {
    let client: RPCClient
    /// Each call's deadline: `RetryBackoff.ledgerCallTimeout`, inside the
    /// lease of the step that makes it.
    let timeout: Duration
    /// Each call counted by method and status (nil: not counted).
    var metrics: RPCClientMetrics? = nil

    init(client: RPCClient, backoff: RetryBackoff, metrics: RPCClientMetrics? = nil) {
        self.client = client
        self.timeout = backoff.ledgerCallTimeout
        self.metrics = metrics
    }

    enum Result<Success: Sendable>: Sendable {
        case success(Success)
        case failed(StepFailure)
    }

    func grant(_ record: PaymentRecord, requestId: String?) async -> Result<GrantResponse> {
        await call(
            PointsMethods.grant, Self.grantRequest(record), requestId: requestId, refusals: [.starterPackIneligible])
    }

    /// The Grant for `record`'s purchase; the same for every retry.
    static func grantRequest(_ record: PaymentRecord) -> GrantRequest {
        var request = GrantRequest()
        request.eventId = LedgerEventId.purchase(transactionId: record.transactionId)
        request.userId = record.userId.map(UUIDText.lowercased) ?? ""
        request.emailHash = record.emailHash ?? ""
        request.productCode = record.productCode ?? ""
        request.bizId = UUIDText.lowercased(record.id)
        // A mask stored before FieldRules may fail PointsService's check:
        // send it repaired (valid ones unchanged).
        request.emailMasked = EmailMask.repaired(record.emailMasked ?? "")
        // Quantity 1 is sent as 0 (the default), so a grant is the same
        // request it was before quantities existed.
        request.quantity = record.quantity == 1 ? 0 : record.quantity
        var source = Contracts.PurchaseSource()
        source.source = "apple_iap"
        source.platform = "ios"
        source.transactionId = record.transactionId
        source.originalTransactionId = record.originalTransactionId ?? ""
        source.environment = record.environment
        source.appStoreProductId = record.appStoreProductId
        source.paymentRecordId = request.bizId
        request.source = source
        return request
    }

    /// Refund cycle `cycle`'s clawback of `amount` credits.
    func clawback(_ record: PaymentRecord, cycle: Int, amount: Int64, reason: String, requestId: String?) async
        -> Result<ClawbackResponse>
    {
        var request = ClawbackRequest()
        request.eventId = LedgerEventId.refund(transactionId: record.transactionId, cycle: cycle)
        request.userId = record.userId.map(UUIDText.lowercased) ?? ""
        request.originalEventId = LedgerEventId.purchase(transactionId: record.transactionId)
        request.bizId = UUIDText.lowercased(record.id)
        request.reason = reason
        // The whole purchase is sent as 0 (the default): the same request as
        // before prorated refunds existed.
        request.amount = amount == record.state.credits ? 0 : amount
        return await call(PointsMethods.clawback, request, requestId: requestId, refusals: [])
    }

    /// Gives back what refund cycle `cycle`'s clawback took.
    func reverseClawback(_ record: PaymentRecord, cycle: Int, requestId: String?) async -> Result<
        ReverseClawbackResponse
    > {
        var request = ReverseClawbackRequest()
        request.eventId = LedgerEventId.refundReversal(transactionId: record.transactionId, cycle: cycle)
        request.userId = record.userId.map(UUIDText.lowercased) ?? ""
        request.clawbackEventId = LedgerEventId.refund(transactionId: record.transactionId, cycle: cycle)
        request.bizId = UUIDText.lowercased(record.id)
        return await call(PointsMethods.reverseClawback, request, requestId: requestId, refusals: [])
    }

    func balance(userId: UUID, requestId: String?) async throws(PaymentsError) -> Int64 {
        var request = GetBalanceRequest()
        request.userId = UUIDText.lowercased(userId)
        switch await call(PointsMethods.getBalance, request, requestId: requestId, refusals: []) {
        case .success(let response): return response.balance
        case .failed(let failure): throw .pointsUnavailable(detail: failure.detail)
        }
    }

    /// One purchase's credit lot at PointsService (what was credited and spent).
    func purchaseConsumption(userId: UUID, transactionId: String, requestId: String?) async -> Result<
        GetPurchaseConsumptionResponse
    > {
        var request = GetPurchaseConsumptionRequest()
        request.userId = UUIDText.lowercased(userId)
        request.purchaseEventId = LedgerEventId.purchase(transactionId: transactionId)
        return await call(PointsMethods.getPurchaseConsumption, request, requestId: requestId, refusals: [])
    }

    func catalog(requestId: String?) async -> Result<[Contracts.Package]> {
        switch await call(PointsMethods.getCatalog, GetCatalogRequest(), requestId: requestId, refusals: []) {
        case .success(let response): return .success(response.packages)
        case .failed(let failure): return .failed(failure)
        }
    }

    /// `refusals`: the permanent reasons that are a business answer for this
    /// call (the saga records them). Any other permanent reason is a fault an
    /// operator must fix (alert, retried with backoff); the rest is transient.
    /// A failure without a reason is judged by its code (`codesNeedingOperator`).
    private func call<Request, Response>(
        _ method: UnaryMethod<Request, Response>, _ request: Request, requestId: String?, refusals: Set<ErrorReason>
    ) async -> Result<Response> {
        var metadata = Metadata()
        if let requestId { metadata.addString(requestId, forKey: "x-request-id") }
        do {
            return .success(
                try await CountedCaller(client, metrics: metrics).call(
                    method, request, metadata: metadata, timeout: timeout))
        } catch let error as RPCError {
            let detail = "\(method.descriptor.method): \(error.code): \(error.message)"
            guard let reason = ErrorReason.reason(of: error).map(ErrorReason.init(rawValue:)) else {
                guard Self.codesNeedingOperator.contains(error.code) else { return .failed(.transient(detail: detail)) }
                return .failed(.needsOperator(reason: ErrorReason(rawValue: error.code.description), detail: detail))
            }
            if refusals.contains(reason) { return .failed(.refused(reason: reason)) }
            if reason.isPermanent || reason == .productNotFound {
                return .failed(.needsOperator(reason: reason, detail: detail))
            }
            return .failed(.transient(detail: detail))
        } catch {
            return .failed(.transient(detail: "\(method.descriptor.method): \(error)"))
        }
    }

    /// Codes that no retry fixes whoever answers them, PointsService or a
    /// proxy in front of it, with or without an `error-reason`: our identity
    /// refused (a certificate or INTERNAL_ALLOWED_CALLERS) or a method the
    /// peer does not serve (a rollout out of order). They need an operator
    /// (alerted, retried with backoff, as a permanent reason is), where a
    /// failure without a reason is otherwise retried silently.
    static let codesNeedingOperator: [RPCError.Code] = [.permissionDenied, .unauthenticated, .unimplemented]
}

/// Why a call into PointsService did not succeed, as the saga treats it.
enum StepFailure: Sendable, Equatable {
    /// A business answer that ends the step (e.g. STARTER_PACK_INELIGIBLE).
    case refused(reason: ErrorReason)
    /// Cannot succeed until an operator fixes data or configuration (e.g. a
    /// product missing from PointsService's catalog during a rolling
    /// deploy): alerted, still owed, retried with backoff.
    case needsOperator(reason: ErrorReason, detail: String)
    /// Unavailable, deadline, or anything a retry may fix.
    case transient(detail: String)

    var detail: String {
        switch self {
        case .refused(let reason): reason.rawValue
        case .needsOperator(_, let detail), .transient(let detail): detail
        }
    }
}
