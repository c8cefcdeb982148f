import Foundation
@testable import IAPCreditsClient
import XCTest

/// Every shape of answer the gateway (or something in front of it) can give.
final class GatewayAnswerTests: XCTestCase {
    private func verifyAnswer(_ status: Int, _ body: String, for transactionId: String = "2000000000000001") -> Result<
        VerifiedGrant, CreditsError
    > {
        let route = try! GatewayRoutes.verify(
            VerifyTransactionRequest(
                productCode: "starter_pack", appStoreProductId: "com.x",
                transactionId: transactionId, signedTransactionInfo: "j", appAccountToken: nil))
        return GatewayAnswer.interpret(status: status, requestID: "r", body: Data(body.utf8), decode: route.decode)
    }

    private func grant(_ status: String, credits: Int, id: String = "2000000000000001", balance: Int = 100) -> String {
        #"{"status":"\#(status)","productCode":"starter_pack","transactionId":"\#(id)","creditsAdded":\#(credits),"newBalance":\#(balance),"ledgerEventId":"payment.apple_iap:\#(id)"}"#
    }

    /// Retry-After's delta-seconds travel with the error (bounded); a date
    /// or anything but digits is not read.
    func testRetryAfterIsReadAsSecondsAndBounded() {
        let cases: [(String?, Int?)] = [
            ("5", 5), ("0", 0), ("120", 120), ("86400", ClientLimits.retryAfterSecondsMax), (nil, nil), ("", nil),
            ("-1", nil),
            ("1.5", nil), (" 5", nil), ("Wed, 21 Oct 2015 07:28:00 GMT", nil), ("99999999999999999999", nil),
        ]
        for (header, seconds) in cases {
            XCTAssertEqual(GatewayAnswer.retryAfterSeconds(header), seconds, header ?? "nil")
        }
        let route = GatewayRoutes.balance
        let unavailable = GatewayAnswer.interpret(
            status: 503, requestID: "r", retryAfter: "5",
            body: Data(#"{"code":"SERVICE_UNAVAILABLE","retryable":true}"#.utf8), decode: route.decode)
        guard case .failure(let problem) = unavailable else { return XCTFail("\(unavailable)") }
        XCTAssertEqual(problem.retryAfterSeconds, 5)
        let proxyPage = GatewayAnswer.interpret(
            status: 503, requestID: nil, retryAfter: "30", body: Data("<html>".utf8), decode: route.decode)
        guard case .failure(let page) = proxyPage else { return XCTFail("\(proxyPage)") }
        XCTAssertEqual(page.retryAfterSeconds, 30)
    }

    func testGrantedAndAlreadyGrantedAreCredits() throws {
        XCTAssertEqual(try verifyAnswer(200, grant("granted", credits: 100)).get().status, .granted)
        let again = try verifyAnswer(200, grant("already_granted", credits: 0)).get()
        XCTAssertEqual(again.status, .alreadyGranted)
        XCTAssertEqual(again.creditsAdded, 0)
    }

    /// An answer that breaks the grant's invariants is not trusted: the
    /// transaction is not finished on it.
    func testAnInconsistentGrantIsAnUnexpectedAnswer() {
        for body in [
            grant("granted", credits: 100, id: "2000000000000002"),
            grant("already_granted", credits: 100),
            grant("granted", credits: -1),
            grant("granted", credits: 1, balance: -5),
            grant("credited", credits: 100),
            #"{"status":"granted"}"#,
            "",
            "<html>OK</html>",
        ] {
            guard case .failure(let error) = verifyAnswer(200, body) else { return XCTFail(body) }
            XCTAssertEqual(error.kind, .unexpectedAnswer(status: 200), body)
            XCTAssertEqual(error.disposition, .keepAndRetry, body)
        }
    }

    func testAProblemKeepsItsMembers() {
        let body =
            #"{"type":"urn:iap-credits:problem:validation-failed-fields","title":"Request failed validation","status":422,"detail":"x","code":"VALIDATION_FAILED","retryable":false,"field":"transactionId"}"#
        guard case .failure(let error) = verifyAnswer(422, body) else { return XCTFail() }
        XCTAssertEqual(
            error.kind,
            .problem(
                GatewayProblem(
                    code: .validationFailed, status: 422, title: "Request failed validation",
                    detail: "x", retryable: false, field: "transactionId")))
        XCTAssertEqual(error.requestID, "r")
    }

    func testTheEnvironmentRefusalOfAnotherBranchDecodes() {
        let body =
            #"{"type":"urn:iap-credits:problem:payment-environment-not-allowed","title":"t","status":403,"code":"PAYMENT_ENVIRONMENT_NOT_ALLOWED","retryable":false}"#
        guard case .failure(let error) = verifyAnswer(403, body) else { return XCTFail() }
        XCTAssertEqual(error.problemCode, .paymentEnvironmentNotAllowed)
        XCTAssertEqual(error.disposition, .keepAndReport)
    }

    func testAnUnknownCodeIsKeptAndRetried() {
        guard
            case .failure(let error) = verifyAnswer(
                409, #"{"code":"PAYMENT_FUTURE_REFUSAL","status":409,"retryable":false}"#)
        else { return XCTFail() }
        XCTAssertEqual(error.problemCode, .unrecognized("PAYMENT_FUTURE_REFUSAL"))
        XCTAssertEqual(error.disposition, .keepAndRetry)
    }

    func testAnErrorPageThatIsNotAProblemIsAnUnexpectedAnswer() {
        for (status, body) in [
            (502, "<html>Bad Gateway</html>"), (503, ""), (404, #"{"error":"no"}"#), (500, #"{"code":""}"#),
            (400, #"{"code":7}"#),
        ] {
            guard case .failure(let error) = verifyAnswer(status, body) else { return XCTFail(body) }
            XCTAssertEqual(error.kind, .unexpectedAnswer(status: status), body)
            XCTAssertEqual(error.disposition, .keepAndRetry)
        }
    }

    func testAnOversizedAnswerIsNotRead() {
        let huge = String(repeating: " ", count: ClientLimits.responseBytesMax + 1) + grant("granted", credits: 100)
        guard case .failure(let error) = verifyAnswer(200, huge) else { return XCTFail() }
        XCTAssertEqual(error.kind, .unexpectedAnswer(status: 200))
    }
}
