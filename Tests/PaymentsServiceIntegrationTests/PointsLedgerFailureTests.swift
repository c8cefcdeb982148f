import Contracts
@testable import PaymentsService
import RPCCore
import RPCRuntime
import XCTest

/// How `PointsLedger` classes a failed call, against a stand-in
/// PointsService answering GetBalance's method with a scripted error: a code
/// no retry fixes needs an operator even without an `error-reason` trailer.
final class PointsLedgerFailureTests: XCTestCase {
    func testCodesNoRetryFixesNeedAnOperatorWithoutAReason() async throws {
        for code in [RPCError.Code.permissionDenied, .unauthenticated, .unimplemented] {
            let failure = try await failure(answering: RPCError(code: code, message: "refused by the stand-in"))
            guard case .needsOperator(let reason, _) = failure else {
                return XCTFail("\(code): expected needsOperator, got \(String(describing: failure))")
            }
            XCTAssertEqual(reason.rawValue, code.description)
        }
    }

    func testUnavailableWithoutAReasonStaysTransient() async throws {
        let failure = try await failure(answering: RPCError(code: .unavailable, message: "draining"))
        guard case .transient = failure else {
            return XCTFail("expected transient, got \(String(describing: failure))")
        }
    }

    /// What `PointsLedger.purchaseConsumption` returns when the stand-in answers `error`.
    private func failure(answering error: RPCError) async throws -> StepFailure? {
        var router = Router()
        router.register(PointsMethods.getPurchaseConsumption) { _, _ -> GetPurchaseConsumptionResponse in throw error }
        let server = RPCServer(configuration: .init(listen: .init(host: "127.0.0.1", port: 0)), router: router)
        let port = try server.start()
        let client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: port)])
        let ledger = PointsLedger(client: client, backoff: RetryBackoff(leaseMilliseconds: 10_000))
        let result = await ledger.purchaseConsumption(userId: UUID(), transactionId: "2000000000000001", requestId: nil)
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
        if case .failed(let failure) = result { return failure }
        return nil
    }
}
