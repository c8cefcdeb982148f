import Contracts
import Foundation
import RPCCore
import XCTest
@testable import Gateway

/// Route -> RPC mapping through the real server and in-process backend
/// doubles: what each route sends (identity from the token only, deadlines,
/// request id) and how answers and failures come back.
final class GatewayRoutesTests: XCTestCase {
    private var harness: GatewayHarness!

    override func setUp() async throws {
        harness = try await GatewayHarness.start()
    }

    override func tearDown() async throws {
        await harness.stop()
        harness = nil
    }

    private let expectedEmailHash: String = {
        try! EmailIdentity(hashKey: GatewayHarness.emailHashKey).hash("alice.secret@example.com")
    }()

    func testBalance() async throws {
        let response = try await harness.request("GET", "/api/v1/points/balance", headers: [GatewayHarness.bearer])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.bodyText, #"{"balance":180,"lifetimeEarned":200,"lifetimeSpent":20}"#)
        XCTAssertEqual(harness.doubles.last(GetBalanceRequest.self)?.userId, BackendDoubles.ownerUserId)
    }

    func testPackagesSendUserAndEmailHashAndComeBackInDisplayOrder() async throws {
        let response = try await harness.request("GET", "/api/v1/points/packages", headers: [GatewayHarness.bearer])
        XCTAssertEqual(response.status, 200)
        let packages = response.json["packages"] as? [[String: Any]] ?? []
        XCTAssertEqual(packages.map { $0["productCode"] as? String }, ["starter_pack", "credits_500"])
        XCTAssertEqual(packages.first?["kind"] as? String, "starter")
        let sent = harness.doubles.last(ListPackagesRequest.self)
        XCTAssertEqual(sent?.userId, BackendDoubles.ownerUserId)
        XCTAssertEqual(sent?.emailHash, expectedEmailHash)
    }

    func testVerifyTakesIdentityFromTheTokenAndAnswersBothPRDShapes() async throws {
        let headers = [GatewayHarness.bearer, ("Content-Type", "application/json; charset=utf-8")]
        let granted = try await harness.request(
            "POST", "/api/v1/payments/apple/transactions/verify", headers: headers, body: GatewayHarness.verifyBody())
        XCTAssertEqual(granted.status, 200)
        XCTAssertEqual(
            granted.bodyText,
            #"{"status":"granted","productCode":"starter_pack","transactionId":"1000000123456789","creditsAdded":100,"newBalance":180,"ledgerEventId":"payment.apple_iap:1000000123456789"}"#
        )
        let sent = try XCTUnwrap(harness.doubles.last(VerifyTransactionRequest.self))
        XCTAssertEqual(sent.userId, BackendDoubles.ownerUserId)
        XCTAssertEqual(sent.emailHash, expectedEmailHash)
        XCTAssertEqual(sent.emailMasked, "a***@example.com")
        XCTAssertEqual(sent.productCode, "starter_pack")
        XCTAssertEqual(sent.appStoreProductId, "com.meeyao.qianwen.starter_pack")
        XCTAssertEqual(sent.transactionId, "1000000123456789")
        XCTAssertEqual(sent.appAccountToken, "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72")

        let again = try await harness.request(
            "POST", "/api/v1/payments/apple/transactions/verify", headers: headers,
            body: GatewayHarness.verifyBody(transactionId: "2000000000000002"))
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.json["status"] as? String, "already_granted")
        XCTAssertEqual(again.json["creditsAdded"] as? Int, 0)
    }

    func testBackendFailuresBecomeProblemsThroughTheTable() async throws {
        let headers = [GatewayHarness.bearer, ("Content-Type", "application/json")]
        let cases: [(RPCError, Int, String)] = [
            (
                ErrorReason.error(code: .failedPrecondition, reason: "STARTER_PACK_INELIGIBLE", message: "x"), 409,
                "PAYMENT_STARTER_PACK_INELIGIBLE"
            ),
            (
                ErrorReason.error(code: .failedPrecondition, reason: "ENVIRONMENT_NOT_ALLOWED", message: "x"), 403,
                "PAYMENT_ENVIRONMENT_NOT_ALLOWED"
            ),
            (
                ErrorReason.error(code: .alreadyExists, reason: "TRANSACTION_CONFLICT", message: "x"), 409,
                "PAYMENT_TRANSACTION_CONFLICT"
            ),
            (
                ErrorReason.error(
                    code: .invalidArgument, reason: "TRANSACTION_INVALID", message: "x",
                    extra: [("jws-failure", "BAD_SIGNATURE")]),
                422, "PAYMENT_TRANSACTION_INVALID"
            ),
            (
                ErrorReason.error(code: .unavailable, reason: "APPLE_UNAVAILABLE", message: "x"), 503,
                "PAYMENT_APPLE_UNAVAILABLE"
            ),
            (ErrorReason.error(code: .internal, reason: "GRANT_FAILED", message: "x"), 500, "PAYMENT_GRANT_FAILED"),
            (RPCError(code: .unknown, message: "secret internals"), 500, "INTERNAL"),
        ]
        for (error, status, code) in cases {
            harness.doubles.fail("VerifyTransaction", with: error)
            let response = try await harness.request(
                "POST", "/api/v1/payments/apple/transactions/verify", headers: headers,
                body: GatewayHarness.verifyBody())
            XCTAssertEqual(response.status, status, code)
            XCTAssertEqual(response.json["code"] as? String, code)
            XCTAssertFalse(response.bodyText.contains("secret internals"))
        }
    }

    func testTransactionStatusOnlyForItsOwner() async throws {
        let own = try await harness.request(
            "GET", "/api/v1/payments/apple/transactions/42", headers: [GatewayHarness.bearer])
        XCTAssertEqual(own.status, 200)
        XCTAssertEqual(own.json["status"] as? String, "granted")
        XCTAssertEqual(own.json["purchaseDate"] as? String, "2026-05-28T20:26:40.000Z")
        XCTAssertEqual(harness.doubles.last(GetTransactionRequest.self)?.userId, BackendDoubles.ownerUserId)
        let others = try await harness.request(
            "GET", "/api/v1/payments/apple/transactions/7", headers: [GatewayHarness.bearer])
        XCTAssertEqual(others.status, 404)
        harness.doubles.fail(
            "GetTransaction", with: ErrorReason.error(code: .notFound, reason: "TRANSACTION_NOT_FOUND", message: "x"))
        let missing = try await harness.request(
            "GET", "/api/v1/payments/apple/transactions/8", headers: [GatewayHarness.bearer])
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.json["code"] as? String, "NOT_FOUND")
    }

    func testAccountToken() async throws {
        let response = try await harness.request(
            "GET", "/api/v1/payments/apple/account-token", headers: [GatewayHarness.bearer])
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.bodyText, #"{"appAccountToken":"7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"}"#)
        XCTAssertEqual(harness.doubles.last(GetAccountTokenRequest.self)?.userId, BackendDoubles.ownerUserId)
    }

    func testConsumptionConsentIsStoredForTheTokensUserOnly() async throws {
        let json = [GatewayHarness.bearer, ("Content-Type", "application/json")]
        let never = try await harness.request(
            "GET", "/api/v1/payments/apple/consumption-consent", headers: [GatewayHarness.bearer])
        XCTAssertEqual(never.status, 200)
        XCTAssertEqual(never.bodyText, #"{"consented":false,"recorded":false}"#)
        XCTAssertEqual(harness.doubles.last(GetConsumptionConsentRequest.self)?.userId, BackendDoubles.ownerUserId)
        let stored = try await harness.request(
            "PUT", "/api/v1/payments/apple/consumption-consent", headers: json, body: #"{"consented":true}"#)
        XCTAssertEqual(stored.status, 200)
        XCTAssertEqual(stored.bodyText, #"{"consented":true,"recorded":true}"#)
        let sent = harness.doubles.last(SetConsumptionConsentRequest.self)
        XCTAssertEqual(sent?.userId, BackendDoubles.ownerUserId)
        XCTAssertEqual(sent?.consented, true)
        // Strict JSON: the one boolean member, nothing else.
        for body in [
            #"{"consented":"true"}"#, #"{"consented":1}"#, #"{}"#, #"{"consented":true,"userId":"x"}"#,
            #"{"consented":true"#,
        ] {
            let refused = try await harness.request(
                "PUT", "/api/v1/payments/apple/consumption-consent", headers: json, body: body)
            XCTAssertTrue([400, 422].contains(refused.status), "\(body): \(refused.status)")
        }
        let noToken = try await harness.request(
            "PUT", "/api/v1/payments/apple/consumption-consent",
            headers: [("Content-Type", "application/json")], body: #"{"consented":true}"#)
        XCTAssertEqual(noToken.status, 401)
        let notJSON = try await harness.request(
            "PUT", "/api/v1/payments/apple/consumption-consent",
            headers: [GatewayHarness.bearer, ("Content-Type", "text/plain")], body: #"{"consented":true}"#)
        XCTAssertEqual(notJSON.status, 415)
    }

    func testNotificationsAre200OnlyWhenRecorded() async throws {
        let body = #"{"signedPayload":"\#(GatewayHarness.signedTransactionInfo)"}"#
        let ok = try await harness.request(
            "POST", "/api/v1/payments/apple/notifications", headers: [("Content-Type", "application/json")], body: body)
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.body, [])
        XCTAssertEqual(
            harness.doubles.last(HandleNotificationRequest.self)?.signedPayload, GatewayHarness.signedTransactionInfo)
        harness.doubles.fail(
            "HandleNotification",
            with: ErrorReason.error(code: .unavailable, reason: "DATABASE_UNAVAILABLE", message: "x"))
        let failed = try await harness.request(
            "POST", "/api/v1/payments/apple/notifications", headers: [("Content-Type", "application/json")], body: body)
        XCTAssertEqual(failed.status, 503)
        XCTAssertEqual(failed.json["retryable"] as? Bool, true)
    }

    func testRequestIdRoundTripsToTheBackendAndBack() async throws {
        let response = try await harness.request(
            "GET", "/api/v1/points/balance", headers: [GatewayHarness.bearer, ("X-Request-Id", "req-123.abc")])
        XCTAssertEqual(response.header("X-Request-Id"), "req-123.abc")
        XCTAssertEqual(harness.doubles.recorded.last?.requestId, "req-123.abc")
        let replaced = try await harness.request(
            "GET", "/api/v1/points/balance", headers: [GatewayHarness.bearer, ("X-Request-Id", "bad id")])
        let generated = try XCTUnwrap(replaced.header("X-Request-Id"))
        XCTAssertEqual(generated.count, 32)
        XCTAssertEqual(harness.doubles.recorded.last?.requestId, generated)
        XCTAssertTrue(harness.logs.allLines.contains { $0.contains(#""request_id":"req-123.abc""#) })
    }

    func testReadinessFollowsBackendHealth() async throws {
        let live = try await harness.request("GET", "/healthz")
        XCTAssertEqual(live.status, 200)
        let ready = await harness.awaitReadiness(true)
        XCTAssertTrue(ready)
        let readyResponse = try await harness.request("GET", "/readyz")
        XCTAssertEqual(readyResponse.status, 200)
        harness.doubles.setServing(points: true, payments: false)
        let notReady = await harness.awaitReadiness(false)
        XCTAssertTrue(notReady)
        let unready = try await harness.request("GET", "/readyz")
        XCTAssertEqual(unready.status, 503)
        XCTAssertEqual(unready.json["code"] as? String, "SERVICE_UNAVAILABLE")
        XCTAssertEqual(harness.doubles.recordedMethods, [], "readiness reads the cached probe, calling nothing else")
    }

    /// Once the gateway begins to shut down, /readyz (public and admin,
    /// which read the same probe) says not ready though both backends
    /// still serve, and a later probe does not turn it back.
    func testReadinessEndsWhenTheShutdownBegins() async throws {
        let ready = await harness.awaitReadiness(true)
        XCTAssertTrue(ready)
        harness.readiness.beginShutdown()
        XCTAssertFalse(harness.readiness.isReady)
        let probed = await harness.readiness.probeOnce()
        XCTAssertFalse(probed)
        XCTAssertFalse(harness.readiness.isReady)
        XCTAssertTrue(harness.readiness.detail.hasPrefix("shutting_down "), harness.readiness.detail)
        let unready = try await harness.request("GET", "/readyz")
        XCTAssertEqual(unready.status, 503)
    }

    func testLogsCarryNoTokenEmailOrJWS() async throws {
        let token = GatewayHarness.token()
        _ = try await harness.request(
            "POST", "/api/v1/payments/apple/transactions/verify",
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
            body: GatewayHarness.verifyBody())
        _ = try await harness.request(
            "GET", "/api/v1/points/packages?access_token=\(token)", headers: [("Authorization", "Bearer \(token)")])
        _ = try await harness.request("GET", "/api/v1/points/balance", headers: [("Authorization", "Bearer \(token)x")])
        _ = try await harness.request(
            "POST", "/api/v1/payments/apple/notifications", headers: [("Content-Type", "application/json")],
            body: #"{"signedPayload":"\#(GatewayHarness.signedTransactionInfo)"}"#)
        let lines = harness.logs.allLines
        XCTAssertGreaterThanOrEqual(lines.count, 4)
        let signature = String(token.split(separator: ".")[2])
        for line in lines {
            XCTAssertFalse(line.contains(signature), line)
            XCTAssertFalse(line.lowercased().contains("alice"), line)
            XCTAssertFalse(line.contains("c2lnbmF0dXJlLWJ5dGVzLXNlY3JldA"), line)
            XCTAssertFalse(line.contains("access_token"), line)
        }
        XCTAssertTrue(
            lines.contains {
                $0.contains(#""status":"200""#) && $0.contains(#""path":"/api/v1/payments/apple/transactions/verify""#)
            })
    }
}
