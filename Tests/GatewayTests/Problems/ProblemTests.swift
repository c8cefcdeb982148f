import HTTPServer
import XCTest
import StrictJSON
@testable import Gateway

final class ProblemTests: XCTestCase {
    func testEveryPRDCodeHasItsStatus() {
        let expected: [String: Int] = [
            "PAYMENT_PRODUCT_NOT_FOUND": 404, "PAYMENT_PRODUCT_MISMATCH": 422, "PAYMENT_TRANSACTION_INVALID": 422,
            "PAYMENT_TRANSACTION_REVOKED": 409, "PAYMENT_TRANSACTION_CONFLICT": 409,
            "PAYMENT_STARTER_PACK_INELIGIBLE": 409,
            "PAYMENT_ENVIRONMENT_NOT_ALLOWED": 403,
            "PAYMENT_APPLE_UNAVAILABLE": 503, "PAYMENT_GRANT_FAILED": 500, "UNAUTHENTICATED": 401, "NOT_FOUND": 404,
            "METHOD_NOT_ALLOWED": 405, "UNSUPPORTED_MEDIA_TYPE": 415, "PAYLOAD_TOO_LARGE": 413, "RATE_LIMITED": 429,
            "SERVICE_UNAVAILABLE": 503, "INTERNAL": 500,
        ]
        for (wire, status) in expected {
            let codes = ProblemCode.allCases.filter { $0.wireCode == wire }
            XCTAssertEqual(codes.count, 1, wire)
            XCTAssertEqual(codes.first?.httpStatus, status, wire)
        }
        XCTAssertEqual(
            Set(ProblemCode.allCases.filter { $0.wireCode == "VALIDATION_FAILED" }.map(\.httpStatus)), [400, 422])
        XCTAssertEqual(Set(ProblemCode.allCases.map(\.typeURI)).count, ProblemCode.allCases.count, "types are distinct")
    }

    func testRetryableSemantics() {
        XCTAssertTrue(ProblemCode.paymentAppleUnavailable.retryable)
        XCTAssertTrue(ProblemCode.paymentGrantFailed.retryable)
        XCTAssertTrue(ProblemCode.serviceUnavailable.retryable)
        XCTAssertTrue(ProblemCode.internalError.retryable)
        XCTAssertFalse(ProblemCode.paymentTransactionInvalid.retryable)
        XCTAssertFalse(ProblemCode.paymentTransactionRevoked.retryable)
        XCTAssertFalse(ProblemCode.paymentStarterPackIneligible.retryable)
        XCTAssertFalse(ProblemCode.paymentEnvironmentNotAllowed.retryable)
        XCTAssertFalse(ProblemCode.paymentTransactionConflict.retryable)
        XCTAssertFalse(ProblemCode.validationFailedMalformed.retryable)
    }

    func testEveryRetryable429And503CarriesRetryAfterAndNothingElseDoes() {
        for code in ProblemCode.allCases {
            let header = Problem(code).response.headers.first("retry-after")
            if code.retryable && (code.httpStatus == 429 || code.httpStatus == 503) {
                XCTAssertEqual(header, code.httpStatus == 429 ? "1" : "5", code.rawValue)
            } else {
                XCTAssertNil(header, code.rawValue)
            }
        }
        var own = HTTPHeaders()
        own.add(name: "Retry-After", value: "7")
        XCTAssertEqual(
            Problem(.rateLimited, headers: own).response.headers.values("retry-after"), ["7"],
            "a problem's own wait wins")
    }

    func testProblemJSONShapeAndHeaders() throws {
        var extra = HTTPHeaders()
        extra.add(name: "Allow", value: "GET")
        let problem = Problem(.paymentStarterPackIneligible, detail: "d", instance: "/api/v1/x", headers: extra)
        XCTAssertEqual(
            JSONWriter.string(of: problem.json),
            #"{"type":"urn:iap-credits:problem:payment-starter-pack-ineligible","title":"Starter pack already purchased","#
                + #""status":409,"detail":"d","instance":"/api/v1/x","code":"PAYMENT_STARTER_PACK_INELIGIBLE","retryable":false}"#
        )
        let response = problem.response
        XCTAssertEqual(response.status, 409)
        XCTAssertEqual(response.headers.first("content-type"), "application/problem+json")
        XCTAssertEqual(response.headers.first("allow"), "GET")
        XCTAssertEqual(try StrictJSONParser().parse(response.body), problem.json)
    }

    func testEnvironmentNotAllowedSaysSandboxPurchasesAreNotCredited() {
        let problem = Problem(.paymentEnvironmentNotAllowed, instance: "/api/v1/payments/apple/transactions/verify")
        XCTAssertEqual(
            JSONWriter.string(of: problem.json),
            #"{"type":"urn:iap-credits:problem:payment-environment-not-allowed","#
                + #""title":"Sandbox/TestFlight purchases are not credited by this deployment","status":403,"#
                + #""instance":"/api/v1/payments/apple/transactions/verify","code":"PAYMENT_ENVIRONMENT_NOT_ALLOWED","retryable":false}"#
        )
    }

    func testValidationProblemNamesTheField() {
        let problem = Problem(.validationFailedUnprocessable, field: "productCode")
        XCTAssertEqual(problem.status, 422)
        guard case .object(let object) = problem.json else { return XCTFail() }
        XCTAssertEqual(object["code"], .string("VALIDATION_FAILED"))
        XCTAssertEqual(object["field"], .string("productCode"))
        XCTAssertNil(object["detail"])
    }
}

final class ProblemConvertibleTests: XCTestCase {
    func testEveryErrorKindRendersThroughOneInitializer() {
        struct Surprise: Error {}
        XCTAssertEqual(Problem(rendering: Surprise()).code, .internalError)
        XCTAssertNil(Problem(rendering: Surprise()).detail, "nothing about unknown errors leaks")
        XCTAssertEqual(Problem(rendering: AuthFailure.expired).status, 401)
        XCTAssertEqual(
            Problem(rendering: ValidationError(field: "x", reason: .missingField), instance: "/p").instance, "/p")
        XCTAssertEqual(Problem(rendering: Problem(.rateLimited)).status, 429)
    }

    func testEveryFramingErrorKeepsItsStatus() {
        for reason in HTTPRequestError.Reason.allCases {
            let error = HTTPRequestError(reason)
            XCTAssertEqual(Problem(rendering: error).status, error.status, reason.rawValue)
        }
    }
}
