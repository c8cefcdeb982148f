import XCTest
@testable import Gateway

final class ProblemTests: XCTestCase {
    func testEveryPRDCodeHasItsStatus() {
        let expected: [String: Int] = [
            "PAYMENT_PRODUCT_NOT_FOUND": 404, "PAYMENT_PRODUCT_MISMATCH": 422, "PAYMENT_TRANSACTION_INVALID": 422,
            "PAYMENT_TRANSACTION_REVOKED": 409, "PAYMENT_TRANSACTION_CONFLICT": 409, "PAYMENT_STARTER_PACK_INELIGIBLE": 409,
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
        XCTAssertFalse(ProblemCode.paymentTransactionConflict.retryable)
        XCTAssertFalse(ProblemCode.validationFailedMalformed.retryable)
    }

    func testProblemJSONShapeAndHeaders() throws {
        var extra = HTTPHeaders()
        extra.add(name: "Allow", value: "GET")
        let problem = Problem(.paymentStarterPackIneligible, detail: "d", instance: "/api/v1/x", headers: extra)
        XCTAssertEqual(
            JSONWriter.string(of: problem.json),
            #"{"type":"urn:iap-credits:problem:payment-starter-pack-ineligible","title":"Starter pack already purchased","#
                + #""status":409,"detail":"d","instance":"/api/v1/x","code":"PAYMENT_STARTER_PACK_INELIGIBLE","retryable":false}"#)
        let response = problem.response
        XCTAssertEqual(response.status, 409)
        XCTAssertEqual(response.headers.first("content-type"), "application/problem+json")
        XCTAssertEqual(response.headers.first("allow"), "GET")
        XCTAssertEqual(try StrictJSONParser().parse(response.body), problem.json)
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

final class RPCFailureMappingTests: XCTestCase {
    private typealias Code = RPCFailureMapping.GRPCCode

    func testDocumentedReasons() {
        let cases: [(Int, String, ProblemCode)] = [
            (Code.notFound, "PRODUCT_NOT_FOUND", .paymentProductNotFound),
            (Code.notFound, "TRANSACTION_NOT_FOUND", .notFound),
            (Code.invalidArgument, "VALIDATION_FAILED", .validationFailedUnprocessable),
            (Code.invalidArgument, "PRODUCT_MISMATCH", .paymentProductMismatch),
            (Code.invalidArgument, "TRANSACTION_INVALID", .paymentTransactionInvalid),
            (Code.failedPrecondition, "TRANSACTION_REVOKED", .paymentTransactionRevoked),
            (Code.failedPrecondition, "STARTER_PACK_INELIGIBLE", .paymentStarterPackIneligible),
            (Code.alreadyExists, "TRANSACTION_CONFLICT", .paymentTransactionConflict),
            (Code.unavailable, "APPLE_UNAVAILABLE", .paymentAppleUnavailable),
            (Code.unavailable, "POINTS_UNAVAILABLE", .serviceUnavailable),
            (Code.unavailable, "DATABASE_UNAVAILABLE", .serviceUnavailable),
            (Code.internalError, "GRANT_FAILED", .paymentGrantFailed),
        ]
        for (code, reason, problem) in cases {
            XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: code, reason: reason), problem, reason)
        }
    }

    func testFallbacksByCode() {
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.unavailable, reason: nil), .serviceUnavailable)
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.unavailable, reason: "SOMETHING_NEW"), .serviceUnavailable)
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.deadlineExceeded, reason: nil), .serviceUnavailable)
        XCTAssertTrue(RPCFailureMapping.problemCode(grpcCode: Code.deadlineExceeded, reason: "X").retryable)
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.unknown, reason: nil), .internalError)
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.unauthenticated, reason: nil), .internalError)
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: 99, reason: nil), .internalError)
    }

    func testReasonUnderTheWrongCodeIsNotTrusted() {
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.invalidArgument, reason: "STARTER_PACK_INELIGIBLE"), .internalError)
        XCTAssertEqual(RPCFailureMapping.problemCode(grpcCode: Code.unavailable, reason: "GRANT_FAILED"), .serviceUnavailable)
    }

    func testEveryReasonInTheProtoHeadersIsMapped() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        var documented: Set<String> = []
        for proto in ["Protos/points/v1/points.proto", "Protos/payments/v1/payments.proto"] {
            let text = try String(contentsOf: root.appendingPathComponent(proto), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("//   ") || line.hasPrefix("//                       ") {
                let words = line.dropFirst(2).split(whereSeparator: { $0 == " " || $0 == "," })
                for word in words where word.allSatisfy({ $0.isUppercase || $0 == "_" }) && word.count > 2 {
                    documented.insert(String(word))
                }
            }
        }
        let grpcNames: Set<String> = ["INVALID_ARGUMENT", "NOT_FOUND", "FAILED_PRECONDITION", "ALREADY_EXISTS", "UNAVAILABLE", "INTERNAL"]
        let reasons = documented.subtracting(grpcNames)
        XCTAssertGreaterThanOrEqual(reasons.count, 12)
        let mapped = Set(RPCFailureMapping.documentedPairs.map(\.reason))
        XCTAssertEqual(reasons.subtracting(mapped), [], "every documented reason has a row")
    }
}
