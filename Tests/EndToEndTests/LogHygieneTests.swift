import Foundation
import XCTest

/// What the three services logged: never a JWS, a bearer token or an email
/// the tests sent; every gateway request line carries a request id, and the
/// id of a verify request reaches PaymentsService's log.
final class LogHygieneTests: XCTestCase {
    func testLogsHoldNoSecretsAndCarryRequestIds() async throws {
        let system = try await EndToEndSystem.get()
        // Traffic of our own, in case this test runs alone.
        let user = system.user(email: "Log.Hygiene.\(UUID().uuidString.prefix(6))@Example.com")
        let transactionId = EndToEndSystem.randomTransactionId()
        let requestId = "e2e-log-\(UUID().uuidString.prefix(8))"
        let granted = try await system.send(
            "POST", "/api/v1/payments/apple/transactions/verify", token: user.token,
            json: [
                "productCode": "starter_pack", "appStoreProductId": EndToEndSystem.productId("starter_pack"),
                "transactionId": transactionId,
                "signedTransactionInfo": try system.signedTransaction(
                    transactionId: transactionId, productId: EndToEndSystem.productId("starter_pack"),
                    appAccountToken: nil),
            ],
            headers: [("X-Request-Id", requestId)])
        XCTAssertEqual(granted.status, 200, granted.text)
        XCTAssertEqual(granted.header("X-Request-Id"), requestId)
        _ = try await system.send(
            "GET", "/api/v1/points/balance",
            token: system.tokens.sign(claims: ["sub": "x"], key: "forged-forged-forged-forged-forged"))
        _ = try await system.notify(
            type: "REFUND", transactionId: transactionId, productId: EndToEndSystem.productId("starter_pack"),
            appAccountToken: nil)

        let logs = [
            ("gateway", system.gateway.logs), ("payments", system.payments.logs), ("points", system.points.logs),
        ]
        for (name, text) in logs {
            XCTAssertFalse(text.isEmpty, "\(name) logged nothing")
            let lowered = text.lowercased()
            for secret in system.secrets {
                if secret.contains("@") {
                    XCTAssertFalse(
                        lowered.contains(secret.lowercased()), "\(name) log contains an email address the tests used")
                } else {
                    // Any long piece of a token or JWS is as bad as the whole.
                    XCTAssertFalse(
                        text.contains(String(secret.prefix(40))),
                        "\(name) log contains a secret starting \(secret.prefix(8))…")
                }
            }
            // Signed data starts with a base64url JSON header: `eyJ` then 20+ more base64url characters.
            XCTAssertNil(
                text.range(of: "eyJ[A-Za-z0-9_-]{20,}", options: .regularExpression),
                "\(name) log contains a JWS or JWT")
            XCTAssertFalse(text.contains("Bearer "), "\(name) log contains a bearer credential")
            // The services' internal TLS keys are files they read; not a line of one is ever logged.
            XCTAssertFalse(text.contains("PRIVATE KEY"), "\(name) log contains a private key")
        }

        // The system runs the production shape: the services authenticate each other by mutual TLS.
        for (name, text) in logs {
            XCTAssertTrue(text.contains("\"internal_auth\":\"mtls\""), "\(name) did not run mutual TLS")
        }

        let requestLines = system.gateway.logs.split(separator: "\n").filter {
            $0.contains("\"service\":\"gateway\"") && $0.contains("\"path\":")
        }
        XCTAssertFalse(requestLines.isEmpty)
        for line in requestLines {
            XCTAssertNotNil(
                line.range(of: "\"request_id\":\"[A-Za-z0-9._:-]+\"", options: .regularExpression),
                "no request_id: \(line)")
        }
        XCTAssertTrue(system.gateway.logs.contains("\"request_id\":\"\(requestId)\""))
        XCTAssertTrue(
            system.payments.logs.contains("\"request_id\":\"\(requestId)\""),
            "the verify request id never reached PaymentsService")
        // Every verify any test made (ids the gateway generated) reached PaymentsService too.
        let paymentsLog = system.payments.logs
        for seen in system.requestIdsSeen where seen.path.hasSuffix("/transactions/verify") {
            let gatewayLine = system.gateway.logs.split(separator: "\n").first {
                $0.contains("\"request_id\":\"\(seen.id)\"")
            }
            guard let gatewayLine, gatewayLine.contains("\"status\":\"200\"") else { continue }
            XCTAssertTrue(
                paymentsLog.contains(seen.id), "verify \(seen.id) answered 200 but is not in the payments log")
        }
    }
}
