import Contracts
import Foundation
import Logging
@testable import PaymentsService
import PostgresClient
import RPCCore
import RPCRuntime
import XCTest

/// The saga worker against a stand-in PointsService whose grants take a
/// second: it claims only rows it starts at once, so no claimed row waits
/// for a slot while its lease runs out.
final class SagaWorkerTests: XCTestCase {
    func testTheWorkerClaimsNoMoreRowsThanItRunsAtOnce() async throws {
        let store = try await PaymentsTestDatabase.store()
        var transactionIds: [String] = []
        for _ in 0..<(PaymentsLimits.workerConcurrencyMax * 2) {
            let payment = PaymentsTestDatabase.newPayment()
            try await PaymentsTestDatabase.record(store, payment)
            transactionIds.append(payment.transactionId)
        }
        // Due long ago: the first rows any worker claims.
        try await store.pool.withConnection {
            _ = try await $0.query(
                "update apple_iap_transactions set next_attempt_at = now() - interval '1 day' where transaction_id = any($1::text[])",
                [.text("{" + transactionIds.joined(separator: ",") + "}")])
        }
        var router = Router()
        router.register(PointsMethods.grant) { _, _ -> GrantResponse in
            try await Task.sleep(for: .seconds(1))
            throw RPCError(code: .unavailable, message: "slow stand-in")
        }
        let server = RPCServer(configuration: .init(listen: .init(host: "127.0.0.1", port: 0)), router: router)
        let port = try server.start()
        let client = try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: port)])
        let runner = LedgerStepRunner(
            store: store, points: PointsLedger(client: client, backoff: store.backoff), logger: Logger(service: "test"))
        let worker = Task { await SagaWorker(runner: runner, pollInterval: .milliseconds(100)).run() }
        try await Task.sleep(for: .milliseconds(500))
        let claimed = try await store.pool.withConnection {
            try await $0.query(
                "select count(*) as n from apple_iap_transactions where transaction_id = any($1::text[]) and attempt_count > 0",
                [.text("{" + transactionIds.joined(separator: ",") + "}")]
            ).first!.int64("n")
        }
        worker.cancel()
        await worker.value
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
        try await store.pool.withConnection {
            _ = try await $0.query(
                "delete from apple_iap_transactions where transaction_id = any($1::text[])",
                [.text("{" + transactionIds.joined(separator: ",") + "}")])
        }
        XCTAssertGreaterThan(claimed, 0, "the worker ran")
        XCTAssertLessThanOrEqual(
            claimed, Int64(PaymentsLimits.workerConcurrencyMax), "claimed only what it runs at once")
    }
}
