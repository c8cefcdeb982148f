import AppStoreVerification
import Foundation
import TestSupport
import XCTest

/// Bad input through the gateway is refused with the documented status and
/// problem code, and writes nothing in either database. Each request is
/// otherwise a valid, signed purchase that would be credited.
final class BadInputTests: XCTestCase {
    private let verifyPath = "/api/v1/payments/apple/transactions/verify"

    private func validBody(_ system: EndToEndSystem, transactionId: String = EndToEndSystem.randomTransactionId())
        throws -> [String: Any]
    {
        let productId = EndToEndSystem.productId("starter_pack")
        return [
            "productCode": "starter_pack", "appStoreProductId": productId, "transactionId": transactionId,
            "signedTransactionInfo": try system.signedTransaction(
                transactionId: transactionId, productId: productId, appAccountToken: nil),
        ]
    }

    private func json(_ object: [String: Any]) -> [UInt8] { TestTokens.json(object) }

    /// Sends, then checks status, problem code and that no row appeared.
    private func assertRefused(
        _ system: EndToEndSystem, _ user: TestUser, status: Int, code: String, file: StaticString = #filePath,
        line: UInt = #line,
        _ send: () async throws -> HTTPAnswer
    ) async throws {
        let paymentsBefore = try await system.paymentsRowCount()
        let answer = try await send()
        XCTAssertEqual(answer.status, status, answer.text, file: file, line: line)
        XCTAssertEqual(answer.problemCode, code, answer.text, file: file, line: line)
        let observed1 = try await system.paymentsRowCount()
        XCTAssertEqual(observed1, paymentsBefore, "payments rows written", file: file, line: line)
        let observed2 = try await system.pointsRowCount(user.id)
        XCTAssertEqual(observed2, 0, "points rows written", file: file, line: line)
    }

    func testBadBearerTokensAreUnauthenticatedAndWriteNothing() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let tokens = system.tokens
        let now = Int64(Date().timeIntervalSince1970)
        var expired = tokens.claims(userId: user.id, email: user.email, nowSeconds: now - 7_200)
        expired["exp"] = now - 3_600
        var wrongAudience = tokens.claims(userId: user.id, email: user.email)
        wrongAudience["aud"] = "someone-else"
        var wrongIssuer = tokens.claims(userId: user.id, email: user.email)
        wrongIssuer["iss"] = "https://evil.example"
        let valid = tokens.claims(userId: user.id, email: user.email)
        let bad: [(String, String?)] = [
            ("none", nil),
            ("expired", tokens.sign(claims: expired)),
            ("forged signature", tokens.sign(claims: valid, key: EndToEndSystem.randomHex(32))),
            ("alg none", tokens.unsigned(claims: valid)),
            ("alg none, signed", tokens.sign(claims: valid, header: ["alg": "none", "typ": "JWT"])),
            ("wrong audience", tokens.sign(claims: wrongAudience)),
            ("wrong issuer", tokens.sign(claims: wrongIssuer)),
            ("garbage", "not.a.token"),
        ]
        for (label, token) in bad {
            try await assertRefused(system, user, status: 401, code: "UNAUTHENTICATED") {
                let answer = try await system.send("POST", verifyPath, token: token, json: try validBody(system))
                XCTAssertNotNil(answer.header("WWW-Authenticate"), label)
                return answer
            }
            let balance = try await system.send("GET", "/api/v1/points/balance", token: token)
            XCTAssertEqual(balance.status, 401, label)
        }
    }

    func testMalformedBodiesAreRefusedAndWriteNothing() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let body = try validBody(system)
        let oversized =
            Array(#"{"productCode":"starter_pack","signedTransactionInfo":""#.utf8)
            + [UInt8](repeating: UInt8(ascii: "a"), count: 70_000) + Array(#""}"#.utf8)
        let deep = Array((String(repeating: "[", count: 64) + String(repeating: "]", count: 64)).utf8)
        let deepObject = Array(#"{"productCode":"#.utf8) + deep + Array("}".utf8)
        var duplicate = String(decoding: json(body), as: UTF8.self)
        duplicate.removeLast()
        duplicate += #","productCode":"popular_pack"}"#
        var unknownField = body
        unknownField["credits"] = 100_000
        var badTransactionId = body
        badTransactionId["transactionId"] = "12ab"

        try await assertRefused(system, user, status: 413, code: "PAYLOAD_TOO_LARGE") {
            try await system.send(
                "POST", verifyPath, token: user.token, body: oversized, contentType: "application/json")
        }
        try await assertRefused(system, user, status: 400, code: "VALIDATION_FAILED") {
            try await system.send(
                "POST", verifyPath, token: user.token, body: deepObject, contentType: "application/json")
        }
        try await assertRefused(system, user, status: 400, code: "VALIDATION_FAILED") {
            try await system.send(
                "POST", verifyPath, token: user.token, body: Array(#"{"productCode": "starter_pack","#.utf8),
                contentType: "application/json")
        }
        try await assertRefused(system, user, status: 400, code: "VALIDATION_FAILED") {
            try await system.send(
                "POST", verifyPath, token: user.token, body: Array(duplicate.utf8), contentType: "application/json")
        }
        try await assertRefused(system, user, status: 400, code: "VALIDATION_FAILED") {
            try await system.send(
                "POST", verifyPath, token: user.token, body: [0x7B, 0xFF, 0xFE, 0x7D], contentType: "application/json")
        }
        try await assertRefused(system, user, status: 415, code: "UNSUPPORTED_MEDIA_TYPE") {
            try await system.send("POST", verifyPath, token: user.token, body: json(body), contentType: "text/plain")
        }
        try await assertRefused(system, user, status: 415, code: "UNSUPPORTED_MEDIA_TYPE") {
            try await system.send("POST", verifyPath, token: user.token, body: json(body))
        }
        let unknown = try await system.send("POST", verifyPath, token: user.token, json: unknownField)
        XCTAssertTrue([400, 422].contains(unknown.status), unknown.text)
        XCTAssertEqual(unknown.problemCode, "VALIDATION_FAILED")
        let invalidId = try await system.send("POST", verifyPath, token: user.token, json: badTransactionId)
        XCTAssertEqual(invalidId.status, 422, invalidId.text)
        XCTAssertEqual(invalidId.problemCode, "VALIDATION_FAILED")
        let observed3 = try await system.pointsRowCount(user.id)
        XCTAssertEqual(observed3, 0)
    }

    func testUntrustedOrInconsistentSignedDataIsInvalidAndWritesNothing() async throws {
        let system = try await EndToEndSystem.get()
        let user = system.user()
        let productId = EndToEndSystem.productId("starter_pack")
        // Signed by a CA PaymentsService does not trust.
        let stranger = try LocalTestingCertificateAuthority()
        let untrustedId = EndToEndSystem.randomTransactionId()
        let untrusted = try system.signedTransaction(
            transactionId: untrustedId, productId: productId, appAccountToken: nil, authority: stranger)
        try await assertRefused(system, user, status: 422, code: "PAYMENT_TRANSACTION_INVALID") {
            try await system.verify(user, productCode: "starter_pack", transactionId: untrustedId, jws: untrusted)
        }
        // A valid JWS for another transaction id than the request's.
        let signedFor = try system.signedTransaction(
            transactionId: EndToEndSystem.randomTransactionId(), productId: productId, appAccountToken: nil)
        try await assertRefused(system, user, status: 422, code: "PAYMENT_TRANSACTION_INVALID") {
            try await system.verify(
                user, productCode: "starter_pack", transactionId: EndToEndSystem.randomTransactionId(), jws: signedFor)
        }
        // A tampered payload (signature no longer matches).
        let tamperedId = EndToEndSystem.randomTransactionId()
        var parts = try system.signedTransaction(transactionId: tamperedId, productId: productId, appAccountToken: nil)
            .split(separator: ".").map(String.init)
        parts[1] = TestTokens.base64URL(
            TestTokens.json(["transactionId": tamperedId, "productId": productId, "bundleId": EndToEndSystem.bundleId]))
        try await assertRefused(system, user, status: 422, code: "PAYMENT_TRANSACTION_INVALID") {
            try await system.verify(
                user, productCode: "starter_pack", transactionId: tamperedId, jws: parts.joined(separator: "."))
        }
        // The wrong environment (Production is allowed, but the transaction claims LocalTesting).
        let wrongEnvironmentId = EndToEndSystem.randomTransactionId()
        let wrongEnvironment = try system.signedTransaction(
            transactionId: wrongEnvironmentId, productId: productId, appAccountToken: nil, environment: "LocalTesting")
        try await assertRefused(system, user, status: 422, code: "PAYMENT_TRANSACTION_INVALID") {
            try await system.verify(
                user, productCode: "starter_pack", transactionId: wrongEnvironmentId, jws: wrongEnvironment)
        }
        // A notification signed by a stranger.
        let forged = try stranger.sign(
            payloadJSON: #"{"notificationType":"REFUND","notificationUUID":"\#(UUID().uuidString)","version":"2.0"}"#)
        system.neverLog(forged)
        let paymentsBefore = try await system.paymentsRowCount()
        let notification = try await system.send(
            "POST", "/api/v1/payments/apple/notifications", json: ["signedPayload": forged])
        XCTAssertEqual(notification.status, 422, notification.text)
        XCTAssertEqual(notification.problemCode, "PAYMENT_TRANSACTION_INVALID")
        let observed4 = try await system.paymentsRowCount()
        XCTAssertEqual(observed4, paymentsBefore)
    }
}
