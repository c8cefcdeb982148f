import Contracts
import Foundation
import RPCCore
import TestSupport
import XCTest

/// PaymentsService and PointsService as processes on mutual TLS (the
/// production shape): the gateway's certificate verifies a purchase and
/// PaymentsService grants it over mutual TLS with its own; a caller without
/// a certificate is UNAUTHENTICATED, one with another identity
/// PERMISSION_DENIED, and neither writes anything.
final class PaymentsAuthorizationTests: XCTestCase {
    static let shared = SharedCluster {
        try await PaymentsCluster.start(
            internalPKI: try await InternalTestPKI.makeOffPool(["points", "payments", "gateway"]))
    }

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    func testTheGatewayVerifiesAndPaymentsServiceGrantsOverMutualTLS() async throws {
        let cluster = try await Self.shared.cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        let granted = try await cluster.verify(
            try cluster.verifyRequest(user: user, productCode: "popular_pack", transactionId: transactionId))
        XCTAssertEqual(granted.outcome, .granted)
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack")
        let redriven = try await cluster.redrive(transactionId)
        XCTAssertEqual(redriven.status, 0, redriven.output)
        XCTAssertFalse(cluster.paymentsLogs.contains("PRIVATE KEY"))
    }

    func testOtherCallersAreRefusedBeforeAnythingIsWritten() async throws {
        let cluster = try await Self.shared.cluster()
        for (identity, expected) in [
            (nil, RPCError.Code.unauthenticated), ("payments", .permissionDenied), ("points", .permissionDenied),
        ] {
            let user = UUID()
            let transactionId = PaymentsCluster.randomTransactionId()
            let client = try cluster.makeClient(identity: identity)
            do {
                _ = try await client.call(
                    PaymentsMethods.verifyTransaction,
                    try cluster.verifyRequest(user: user, productCode: "popular_pack", transactionId: transactionId),
                    timeout: .seconds(30))
                XCTFail("\(identity ?? "no certificate") was let through")
            } catch let error as RPCError {
                XCTAssertEqual(error.code, expected, identity ?? "no certificate")
            }
            try await cluster.assertNothingWritten(transactionId, user: user)
            let health = try await client.call(HealthMethods.check, HealthCheckRequest(), timeout: .seconds(10))
            XCTAssertEqual(health.status, .serving, "health checks are open to \(identity ?? "no certificate")")
            await client.close()
        }
    }
}
