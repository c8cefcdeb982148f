import Contracts
import Foundation
import RPCCore
import XCTest
@testable import Gateway

/// POST /api/v1/payments/apple/receipts through the real server and the
/// backend doubles: identity from the token, the receipt passed whole (the
/// one route whose body may exceed 64 KiB), per-item results rendered with
/// the problem codes of the one table, and whole-receipt failures.
final class GatewayReceiptRouteTests: XCTestCase {
    private var harness: GatewayHarness!
    private let path = "/api/v1/payments/apple/receipts"
    private let headers = [GatewayHarness.bearer, ("Content-Type", "application/json")]

    override func setUp() async throws {
        harness = try await GatewayHarness.start()
    }

    override func tearDown() async throws {
        await harness.stop()
        harness = nil
    }

    /// A receipt-like base64 text of `bytes` decoded bytes.
    private func receipt(bytes: Int) -> String {
        Data((0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31) }).base64EncodedString()
    }

    func testALargeReceiptIsPassedWholeWithTheTokensIdentityAndEachItemAnswersOnItsOwn() async throws {
        let receiptData = receipt(bytes: 300 * 1024)
        XCTAssertGreaterThan(
            receiptData.utf8.count, GatewayLimits.requestBodyBytesMax, "larger than any other route accepts")
        let response = try await harness.request(
            "POST", path, headers: headers, body: #"{"receiptData":"\#(receiptData)"}"#)
        XCTAssertEqual(response.status, 200, response.bodyText)
        let sent = try XCTUnwrap(harness.doubles.last(VerifyReceiptRequest.self))
        XCTAssertEqual(sent.receiptData, receiptData)
        XCTAssertEqual(sent.userId, BackendDoubles.ownerUserId)
        XCTAssertEqual(
            sent.emailHash, try EmailIdentity(hashKey: GatewayHarness.emailHashKey).hash("alice.secret@example.com"))
        XCTAssertEqual(sent.emailMasked, "a***@example.com")

        XCTAssertEqual(response.json["ack"] as? Bool, true)
        XCTAssertEqual(response.json["deferredCount"] as? Int, 0)
        XCTAssertEqual(response.json["matchedCount"] as? Int, 4)
        XCTAssertEqual(response.json["successCount"] as? Int, 2, "success and duplicate both count as credited")
        XCTAssertEqual(response.json["failedCount"] as? Int, 2)
        let results = try XCTUnwrap(response.json["results"] as? [[String: Any]])
        XCTAssertEqual(results.map { $0["status"] as? String }, ["success", "duplicate", "failed", "failed"])
        XCTAssertEqual(results.map { $0["creditsAdded"] as? Int }, [210, 0, 0, 0])
        XCTAssertEqual(results[0]["productCode"] as? String, "popular_pack")
        XCTAssertNil(results[0]["errorCode"])
        XCTAssertNil(results[0]["retryable"])
        XCTAssertEqual(results[2]["errorCode"] as? String, "PAYMENT_TRANSACTION_CONFLICT")
        XCTAssertEqual(results[2]["retryable"] as? Bool, false)
        XCTAssertEqual(results[3]["errorCode"] as? String, "PAYMENT_APPLE_UNAVAILABLE")
        XCTAssertEqual(results[3]["retryable"] as? Bool, true)
        XCTAssertTrue(results[3]["productCode"] is NSNull)
        XCTAssertNil(results[3]["detail"], "free text from the backend never reaches the app")
        XCTAssertFalse(response.bodyText.contains(receiptData.prefix(64)))
    }

    func testBodyLimitsAreTheRoutesOwn() async throws {
        // Past the receipt route's own limit: 413 before any backend call.
        let huge = receipt(bytes: 600 * 1024)
        let tooLarge = try await harness.request("POST", path, headers: headers, body: #"{"receiptData":"\#(huge)"}"#)
        XCTAssertEqual(tooLarge.status, 413)
        // Other routes keep 64 KiB.
        let verify = try await harness.request(
            "POST", "/api/v1/payments/apple/transactions/verify", headers: headers,
            body: #"{"receiptData":"\#(receipt(bytes: 60 * 1024))"}"#)
        XCTAssertEqual(verify.status, 413)
        XCTAssertEqual(harness.doubles.recordedMethods, [])
        XCTAssertEqual(
            GatewayLimits.requestBodyBytesMax(target: path + "?x=1"), GatewayLimits.receiptRequestBodyBytesMax)
        XCTAssertEqual(GatewayLimits.requestBodyBytesMax(target: path + "/x"), GatewayLimits.requestBodyBytesMax)
        XCTAssertGreaterThan(
            GatewayLimits.receiptRequestBodyBytesMax,
            GatewayLimits.receiptDataBytesMax + GatewayLimits.receiptDataBytesMax / 64)
    }

    func testTheBodyIsStrict() async throws {
        let unknown = try await harness.request(
            "POST", path, headers: headers, body: #"{"receiptData":"AAAA","transactionId":"1"}"#)
        XCTAssertEqual(unknown.status, 400)
        XCTAssertEqual(unknown.json["field"] as? String, "transactionId")
        let empty = try await harness.request("POST", path, headers: headers, body: #"{"receiptData":""}"#)
        XCTAssertEqual(empty.status, 422)
        XCTAssertEqual(empty.json["code"] as? String, "VALIDATION_FAILED")
        let wrongType = try await harness.request("POST", path, headers: headers, body: #"{"receiptData":1}"#)
        XCTAssertEqual(wrongType.status, 400)
        let noToken = try await harness.request(
            "POST", path, headers: [("Content-Type", "application/json")], body: #"{"receiptData":"AAAA"}"#)
        XCTAssertEqual(noToken.status, 401)
        let text = try await harness.request(
            "POST", path, headers: [GatewayHarness.bearer, ("Content-Type", "text/plain")], body: "AAAA")
        XCTAssertEqual(text.status, 415)
        XCTAssertEqual(harness.doubles.recordedMethods, [])
    }

    func testWholeReceiptFailuresAreProblems() async throws {
        let cases: [(RPCError, Int, String, Bool, String?)] = [
            (
                ErrorReason.error(
                    code: .invalidArgument, reason: "RECEIPT_INVALID", message: "x",
                    extra: [("receipt-failure", "truncated")]),
                422, "PAYMENT_RECEIPT_INVALID", false, "receipt-failure: truncated"
            ),
            (
                ErrorReason.error(
                    code: .invalidArgument, reason: "TRANSACTION_INVALID", message: "x",
                    extra: [("jws-failure", "wrong_bundle")]),
                422, "PAYMENT_TRANSACTION_INVALID", false, "jws-failure: wrong_bundle"
            ),
            (
                ErrorReason.error(code: .failedPrecondition, reason: "APPLE_API_NOT_CONFIGURED", message: "x"),
                503, "PAYMENT_RECEIPTS_UNAVAILABLE", false, nil
            ),
        ]
        for (error, status, code, retryable, detail) in cases {
            harness.doubles.fail("VerifyReceipt", with: error)
            let response = try await harness.request("POST", path, headers: headers, body: #"{"receiptData":"AAAA"}"#)
            XCTAssertEqual(response.status, status, code)
            XCTAssertEqual(response.json["code"] as? String, code)
            XCTAssertEqual(response.json["retryable"] as? Bool, retryable, code)
            XCTAssertEqual(response.json["detail"] as? String, detail, code)
        }
    }
}
