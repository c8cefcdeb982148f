import Contracts
import FieldRules
import Foundation
import RPCRuntime

/// PaymentsService's calls into PointsService, each classified into the
/// saga's outcomes: a refusal a retry cannot change, or a transient failure
/// (unavailable, deadline, anything unexpected) that the worker retries. When
/// in doubt a failure is transient: retrying an idempotent call is safe,
/// dropping a paid purchase is not.
struct PointsLedger: Sendable {
    let client: RPCClient
    var timeout: Duration = .seconds(5)

    /// Reasons after which the same grant can never succeed.
    static let permanentGrantReasons: Set<String> = ["STARTER_PACK_INELIGIBLE", "PRODUCT_NOT_FOUND", "VALIDATION_FAILED", "EVENT_CONFLICT"]

    enum Result<Success: Sendable>: Sendable {
        case success(Success)
        case refused(reason: String)
        case transient(String)
    }

    func grant(_ record: PaymentRecord, requestId: String?) async -> Result<GrantResponse> {
        await call(PointsMethods.grant, Self.grantRequest(record), requestId: requestId, permanent: Self.permanentGrantReasons)
    }

    /// The Grant for `record`'s purchase; the same for every retry.
    static func grantRequest(_ record: PaymentRecord) -> GrantRequest {
        var request = GrantRequest()
        request.eventId = LedgerEventId.purchase(transactionId: record.transactionId)
        request.userId = record.userId?.uuidString.lowercased() ?? ""
        request.emailHash = record.emailHash ?? ""
        request.productCode = record.productCode ?? ""
        request.bizId = record.id.uuidString.lowercased()
        // A mask stored before FieldRules may fail PointsService's check, a
        // refusal the saga cannot retry: send it repaired (valid ones unchanged).
        request.emailMasked = EmailMask.repaired(record.emailMasked ?? "")
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

    func clawback(_ record: PaymentRecord, requestId: String?) async -> Result<ClawbackResponse> {
        var request = ClawbackRequest()
        request.eventId = LedgerEventId.refund(transactionId: record.transactionId)
        request.userId = record.userId?.uuidString.lowercased() ?? ""
        request.originalEventId = LedgerEventId.purchase(transactionId: record.transactionId)
        request.bizId = record.id.uuidString.lowercased()
        request.reason = record.revocationReason ?? ""
        return await call(PointsMethods.clawback, request, requestId: requestId, permanent: ["EVENT_NOT_FOUND", "VALIDATION_FAILED", "EVENT_CONFLICT"])
    }

    func reverseClawback(_ record: PaymentRecord, requestId: String?) async -> Result<ReverseClawbackResponse> {
        var request = ReverseClawbackRequest()
        request.eventId = LedgerEventId.refundReversal(transactionId: record.transactionId)
        request.userId = record.userId?.uuidString.lowercased() ?? ""
        request.clawbackEventId = LedgerEventId.refund(transactionId: record.transactionId)
        request.bizId = record.id.uuidString.lowercased()
        return await call(PointsMethods.reverseClawback, request, requestId: requestId, permanent: ["VALIDATION_FAILED", "EVENT_CONFLICT"])
    }

    func balance(userId: UUID, requestId: String?) async throws(PaymentsError) -> Int64 {
        var request = GetBalanceRequest()
        request.userId = userId.uuidString.lowercased()
        switch await call(PointsMethods.getBalance, request, requestId: requestId, permanent: []) {
        case .success(let response): return response.balance
        case .refused(let reason), .transient(let reason): throw .pointsUnavailable(detail: reason)
        }
    }

    func catalog(requestId: String?) async -> Result<[Contracts.Package]> {
        switch await call(PointsMethods.getCatalog, GetCatalogRequest(), requestId: requestId, permanent: []) {
        case .success(let response): return .success(response.packages)
        case .refused(let reason): return .refused(reason: reason)
        case .transient(let detail): return .transient(detail)
        }
    }

    private func call<Request, Response>(
        _ method: UnaryMethod<Request, Response>, _ request: Request, requestId: String?, permanent: Set<String>
    ) async -> Result<Response> {
        var metadata = Metadata()
        if let requestId { metadata.addString(requestId, forKey: "x-request-id") }
        do {
            return .success(try await client.call(method, request, metadata: metadata, timeout: timeout))
        } catch let error as RPCError {
            if let reason = ErrorReason.reason(of: error), permanent.contains(reason) {
                return .refused(reason: reason)
            }
            return .transient("\(method.descriptor.method): \(error.code): \(error.message)")
        } catch {
            return .transient("\(method.descriptor.method): \(error)")
        }
    }
}
