import HTTPServer
import XCTest
@testable import Gateway

/// The whole pure request path: route, token, media type, body, parameters.
final class RequestPreparerTests: XCTestCase {
    private let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    private let now: Int64 = 1_780_000_000
    private let userId = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"

    private func preparer() throws -> RequestPreparer {
        let keys = try JWTKeySet(hs256Secret: secret, es256PublicKeyPEM: nil)
        return RequestPreparer(
            verifier: JWTVerifier(configuration: JWTVerifierConfiguration(keys: keys, issuer: "iss", audience: "aud")))
    }

    private func token() throws -> String {
        try DevTokenMinter(secret: secret, issuer: "iss", audience: "aud").mint(
            userId: userId, email: "a@b.c", issuedAtSeconds: now)
    }

    private func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: String = "",
        authenticated: Bool = true
    ) throws -> HTTPRequest {
        var fields = HTTPHeaders()
        fields.add(name: "Host", value: "gateway")
        if authenticated { fields.add(name: "Authorization", value: "Bearer " + (try token())) }
        for (name, value) in headers { fields.add(name: name, value: value) }
        return HTTPRequest(
            method: method, target: target, version: .http1_1, headers: fields, body: Array(body.utf8), keepAlive: true)
    }

    private func problem(_ result: Result<GatewayCommand, Problem>) -> Problem? {
        if case .failure(let problem) = result { return problem }
        return nil
    }

    func testAuthenticatedRoutesYieldCommandsWithTheTokensUser() throws {
        let preparer = try preparer()
        let user = AuthenticatedUser(userId: userId, email: "a@b.c")
        XCTAssertEqual(
            try preparer.prepare(request("GET", "/api/v1/points/balance"), nowSeconds: now).get(), .getBalance(user))
        XCTAssertEqual(
            try preparer.prepare(request("GET", "/api/v1/points/packages"), nowSeconds: now).get(), .listPackages(user))
        XCTAssertEqual(
            try preparer.prepare(request("GET", "/api/v1/payments/apple/transactions/42"), nowSeconds: now).get(),
            .getTransaction(user, transactionId: "42"))
        let body =
            #"{"productCode":"starter_pack","appStoreProductId":"com.meeyao.qianwen.starter_pack","transactionId":"1","signedTransactionInfo":"a.b.c"}"#
        let verify = try preparer.prepare(
            request(
                "POST", "/api/v1/payments/apple/transactions/verify", headers: [("Content-Type", "application/json")],
                body: body),
            nowSeconds: now)
        guard case .verifyTransaction(let verifiedUser, let decoded) = try verify.get() else { return XCTFail() }
        XCTAssertEqual(verifiedUser, user)
        XCTAssertEqual(decoded.transactionId, "1")
    }

    func testPublicRoutesNeedNoToken() throws {
        let preparer = try preparer()
        XCTAssertEqual(
            try preparer.prepare(request("GET", "/healthz", authenticated: false), nowSeconds: now).get(), .health)
        let notification = try preparer.prepare(
            request(
                "POST", "/api/v1/payments/apple/notifications", headers: [("Content-Type", "application/json")],
                body: #"{"signedPayload":"a.b.c"}"#, authenticated: false),
            nowSeconds: now)
        XCTAssertEqual(
            try notification.get(),
            .handleNotification(try NotificationRequestBody(jsonBody: Array(#"{"signedPayload":"a.b.c"}"#.utf8))))
    }

    func testProblemsInOrder() throws {
        let preparer = try preparer()
        XCTAssertEqual(
            problem(preparer.prepare(try request("GET", "/nope", authenticated: false), nowSeconds: now))?.status, 404)
        XCTAssertEqual(
            problem(
                preparer.prepare(try request("DELETE", "/api/v1/points/balance", authenticated: false), nowSeconds: now)
            )?.status, 405)
        let unauthenticated = problem(
            preparer.prepare(try request("GET", "/api/v1/points/balance", authenticated: false), nowSeconds: now))
        XCTAssertEqual(unauthenticated?.status, 401)
        XCTAssertEqual(unauthenticated?.instance, "/api/v1/points/balance")
        XCTAssertEqual(
            problem(preparer.prepare(try request("GET", "/api/v1/points/balance"), nowSeconds: now + 7200))?.code,
            .unauthenticated)
        // The token is checked before the body: no body details for strangers.
        let strangerPost = try request(
            "POST", "/api/v1/payments/apple/transactions/verify", body: "{", authenticated: false)
        XCTAssertEqual(problem(preparer.prepare(strangerPost, nowSeconds: now))?.status, 401)
        let noMediaType = try request("POST", "/api/v1/payments/apple/transactions/verify", body: "{}")
        XCTAssertEqual(problem(preparer.prepare(noMediaType, nowSeconds: now))?.status, 415)
        let badJSON = try request(
            "POST", "/api/v1/payments/apple/transactions/verify", headers: [("Content-Type", "application/json")],
            body: "{")
        XCTAssertEqual(problem(preparer.prepare(badJSON, nowSeconds: now))?.status, 400)
        let badId = try request("GET", "/api/v1/payments/apple/transactions/12ab")
        let badIdProblem = problem(preparer.prepare(badId, nowSeconds: now))
        XCTAssertEqual(badIdProblem?.status, 422)
        XCTAssertEqual(badIdProblem?.field, "transactionId")
        let getWithBody = try request("GET", "/api/v1/points/balance", body: "x")
        XCTAssertEqual(problem(preparer.prepare(getWithBody, nowSeconds: now))?.status, 400)
    }
}
