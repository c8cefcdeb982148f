import HTTPServer
import XCTest
import StrictJSON
@testable import Gateway

final class VerifyTransactionRequestBodyTests: XCTestCase {
    private let jws = "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2ln"

    private func body(_ fields: [String: String], raw: String? = nil) -> [UInt8] {
        if let raw { return Array(raw.utf8) }
        var object = JSONObject()
        for key in fields.keys.sorted() { object.insert(key, .string(fields[key]!)) }
        return JSONWriter.bytes(of: .object(object))
    }

    private var valid: [String: String] {
        [
            "productCode": "starter_pack", "appStoreProductId": "com.meeyao.qianwen.starter_pack",
            "transactionId": "1000000123456789", "signedTransactionInfo": jws,
            "appAccountToken": "7C4C7A82-2F6F-4E70-B57A-8B0A7F2E9B72",
        ]
    }

    private func error(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> ValidationError? {
        do {
            _ = try VerifyTransactionRequestBody(jsonBody: bytes)
            XCTFail("expected a validation error", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testValidBodyDecodesAndNormalisesTheToken() throws {
        let decoded = try VerifyTransactionRequestBody(jsonBody: body(valid))
        XCTAssertEqual(decoded.productCode, "starter_pack")
        XCTAssertEqual(decoded.transactionId, "1000000123456789")
        XCTAssertEqual(decoded.appAccountToken, "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72")
    }

    func testAppAccountTokenIsOptional() throws {
        var fields = valid
        fields["appAccountToken"] = nil
        XCTAssertNil(try VerifyTransactionRequestBody(jsonBody: body(fields)).appAccountToken)
        let withNull =
            #"{"productCode":"a","appStoreProductId":"b","transactionId":"1","signedTransactionInfo":"a.b.c","appAccountToken":null}"#
        XCTAssertNil(try VerifyTransactionRequestBody(jsonBody: Array(withNull.utf8)).appAccountToken)
    }

    func testStructuralErrorsAre400AndNameTheField() {
        var fields = valid
        fields["userId"] = "someone-else"
        XCTAssertEqual(error(body(fields)), ValidationError(field: "userId", reason: .unknownField))
        fields = valid
        fields["transactionId"] = nil
        XCTAssertEqual(error(body(fields)), ValidationError(field: "transactionId", reason: .missingField))
        let wrongType =
            #"{"productCode":"a","appStoreProductId":"b","transactionId":1000,"signedTransactionInfo":"a.b.c"}"#
        let wrong = error(Array(wrongType.utf8))
        XCTAssertEqual(wrong, ValidationError(field: "transactionId", reason: .wrongType(expected: "string")))
        XCTAssertEqual(wrong?.problem.status, 400)
        XCTAssertEqual(error(Array("[]".utf8)), ValidationError(field: nil, reason: .notAnObject))
        XCTAssertEqual(
            error(Array(#"{"productCode":"a","productCode":"b"}"#.utf8)),
            ValidationError(field: nil, reason: .malformedJSON(.duplicateKey("productCode"))))
        XCTAssertEqual(error([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D])?.reason, .malformedJSON(.invalidUTF8))
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        XCTAssertEqual(error(Array(deep.utf8))?.reason, .malformedJSON(.depthLimitExceeded))
    }

    /// A problem names what was wrong without handing the client's own long
    /// text back: a duplicated key by its length, an unknown one cut short.
    func testProblemsDoNotEchoLongKeys() {
        let key = String(repeating: "k", count: 30_000)
        let duplicated = error(Array(#"{"\#(key)":1,"\#(key)":2}"#.utf8))
        XCTAssertEqual(duplicated?.problem.detail, "The body is not valid JSON (duplicate key (30000 bytes)).")
        var fields = valid
        fields[key] = "x"
        let unknown = error(body(fields))
        XCTAssertEqual(unknown?.reason, .unknownField)
        XCTAssertEqual(unknown?.field, String(repeating: "k", count: GatewayLimits.echoedFieldNameBytesMax))
        XCTAssertLessThan(unknown?.problem.response.body.count ?? .max, 1_024)
        // One character of a letter and 30 combining marks (as much as the
        // parser lets a string hold) per 62 bytes: a cap counted in characters
        // echoed it all; one counted in bytes cut it mid-character. Not ASCII: not echoed.
        var marked = valid
        marked[String(repeating: "a" + String(repeating: "\u{0301}", count: 30) + "b", count: 100)] = "x"
        let markedUnknown = error(body(marked))
        XCTAssertEqual(markedUnknown?.reason, .unknownField)
        XCTAssertNil(markedUnknown?.field)
        XCTAssertLessThan(markedUnknown?.problem.response.body.count ?? .max, 1_024)
    }

    /// A key of 16,000 marks of one class then 16,000 of a lower one cost a
    /// quadratic sort when the gateway looked it up among the allowed keys:
    /// the parser refuses it (more than 30 marks in a row) before any lookup.
    func testAKeyOfManyCombiningMarksIsMalformedJSON() {
        let key = "a" + String(repeating: "\u{0301}", count: 16_000) + String(repeating: "\u{0316}", count: 16_000)
        let failure = error(Array("{\"\(key)\":0}".utf8))
        XCTAssertEqual(failure?.reason, .malformedJSON(.tooManyCombiningMarks))
        XCTAssertEqual(failure?.problem.status, 400)
    }

    func testOversizedBodyIs413() {
        let big = Array(repeating: UInt8(ascii: " "), count: GatewayLimits.requestBodyBytesMax + 1)
        let failure = error(big)
        XCTAssertEqual(failure?.reason, .bodyTooLarge)
        XCTAssertEqual(failure?.problem.status, 413)
    }

    func testFieldRulesAre422() {
        let bad: [(String, String)] = [
            ("productCode", "Starter"), ("productCode", ""), ("productCode", String(repeating: "a", count: 65)),
            ("productCode", "starter-pack"), ("appStoreProductId", "com.x/y"), ("appStoreProductId", ""),
            ("transactionId", "12a"), ("transactionId", ""), ("transactionId", String(repeating: "1", count: 33)),
            ("transactionId", "-1"), ("signedTransactionInfo", "not-a-jws"), ("signedTransactionInfo", "a..c"),
            ("signedTransactionInfo", "a.b.c.d"), ("signedTransactionInfo", "a.b=.c"),
            ("appAccountToken", "not-a-uuid"),
            ("appAccountToken", "7c4c7a822f6f4e70b57a8b0a7f2e9b72"),
        ]
        for (field, value) in bad {
            var fields = valid
            fields[field] = value
            let failure = error(body(fields))
            XCTAssertEqual(failure?.field, field, "\(field)=\(value)")
            XCTAssertEqual(failure?.problem.status, 422, "\(field)=\(value)")
            XCTAssertEqual(failure?.problem.field, field)
        }
    }

    /// The shared rules (FieldRules) answer exactly as the gateway's own did.
    func testSharedRuleRefusalsKeepTheirProblems() {
        let expected: [(String, String, ValidationError.Reason)] = [
            ("productCode", "", .invalidFormat(rule: "[a-z0-9_]{1,64}")),
            ("productCode", String(repeating: "a", count: 65), .tooLong(maximumBytes: 64)),
            ("appStoreProductId", "com.x/y", .invalidFormat(rule: "[A-Za-z0-9._-]{1,255}")),
            ("appStoreProductId", String(repeating: "a", count: 256), .tooLong(maximumBytes: 255)),
            ("transactionId", "12a", .invalidFormat(rule: "[0-9]{1,32}")),
            ("transactionId", String(repeating: "1", count: 33), .tooLong(maximumBytes: 32)),
            ("appAccountToken", "", .invalidFormat(rule: "UUID (8-4-4-4-12 hex)")),
            (
                "appAccountToken", "{7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72}",
                .invalidFormat(rule: "UUID (8-4-4-4-12 hex)")
            ),
        ]
        for (field, value, reason) in expected {
            var fields = valid
            fields[field] = value
            XCTAssertEqual(error(body(fields)), ValidationError(field: field, reason: reason), "\(field)=\(value)")
        }
        XCTAssertEqual(
            ValidationError(field: "transactionId", reason: .tooLong(maximumBytes: 32)).problem.detail,
            "The field exceeds 32 bytes.")
    }

    func testProblemDetailNeverEchoesTheJWS() {
        var fields = valid
        fields["signedTransactionInfo"] = "secret.secret.sec!ret"
        let detail = error(body(fields))?.problem.detail ?? ""
        XCTAssertFalse(detail.contains("secret"))
    }

    func testNotificationBody() throws {
        XCTAssertEqual(
            try NotificationRequestBody(jsonBody: Array(#"{"signedPayload":"a.b.c"}"#.utf8)).signedPayload, "a.b.c")
        XCTAssertThrowsError(try NotificationRequestBody(jsonBody: Array(#"{"signedPayload":"a.b.c","x":1}"#.utf8)))
        XCTAssertThrowsError(try NotificationRequestBody(jsonBody: Array("{}".utf8)))
    }

    func testContentTypeRule() {
        XCTAssertNoThrow(try ContentTypeRule.requireJSON(HTTPHeaders(["Content-Type": "application/json"])))
        XCTAssertNoThrow(
            try ContentTypeRule.requireJSON(HTTPHeaders(["Content-Type": "Application/JSON; charset=UTF-8"])))
        for bad in ["text/plain", "application/json; charset=latin1", "application/jsonx", ""] {
            XCTAssertThrowsError(try ContentTypeRule.requireJSON(HTTPHeaders(["Content-Type": bad]))) {
                XCTAssertEqual(($0 as? Problem)?.status, 415, bad)
            }
        }
        XCTAssertThrowsError(try ContentTypeRule.requireJSON(HTTPHeaders()))
    }
}
