import XCTest
@testable import Gateway

final class ConnectionPrefaceTests: XCTestCase {
    func testFullPrefaceIsHTTP2EvenWithFramesAfterIt() {
        XCTAssertEqual(ConnectionPreface.classify(ConnectionPreface.http2ClientPreface), .http2)
        XCTAssertEqual(ConnectionPreface.classify(ConnectionPreface.http2ClientPreface + [0, 0, 0, 4]), .http2)
    }

    func testEveryProperPrefixIsUndecided() {
        for length in 0..<ConnectionPreface.http2ClientPreface.count {
            XCTAssertEqual(ConnectionPreface.classify(ConnectionPreface.http2ClientPreface.prefix(length)), .undecided, "\(length)")
        }
    }

    func testHTTP1RequestsDivergeAtOnce() {
        XCTAssertEqual(ConnectionPreface.classify(Array("G".utf8)), .http1)
        XCTAssertEqual(ConnectionPreface.classify(Array("POST / HTTP/1.1\r\n".utf8)), .http1)
        // Diverging after a matching prefix ("PRI * HTTP/1.1") is HTTP/1 too.
        XCTAssertEqual(ConnectionPreface.classify(Array("PRI * HTTP/1.1\r\n".utf8)), .http1)
    }
}

final class RequestIDTests: XCTestCase {
    private func headers(_ values: [String]) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for value in values { headers.add(name: "x-request-id", value: value) }
        return headers
    }

    func testSaneClientIdsAreKept() {
        XCTAssertEqual(RequestID.accepted(from: headers(["abc-123_x.y:z"])), "abc-123_x.y:z")
        XCTAssertEqual(RequestID.accepted(from: headers([String(repeating: "a", count: 128)])), String(repeating: "a", count: 128))
    }

    func testUnsafeOrAmbiguousIdsAreReplaced() {
        XCTAssertNil(RequestID.accepted(from: headers([])))
        XCTAssertNil(RequestID.accepted(from: headers([""])))
        XCTAssertNil(RequestID.accepted(from: headers(["a b"])))
        XCTAssertNil(RequestID.accepted(from: headers(["a\"b"])))
        XCTAssertNil(RequestID.accepted(from: headers(["é"])))
        XCTAssertNil(RequestID.accepted(from: headers([String(repeating: "a", count: 129)])))
        XCTAssertNil(RequestID.accepted(from: headers(["one", "two"])))
        let generated = RequestID.resolve(headers(["a b"]))
        XCTAssertEqual(generated.count, 32)
        XCTAssertTrue(generated.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        XCTAssertNotEqual(RequestID.generate(), RequestID.generate())
    }
}

final class HTTP2MessagesTests: XCTestCase {
    func testRequestFromPseudoHeaders() throws {
        let request = try HTTP2Messages.request(
            fields: [(":method", "POST"), (":scheme", "http"), (":path", "/a?b=c"), (":authority", "gw"), ("content-type", "application/json")],
            body: Array("{}".utf8)).get()
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.target, "/a?b=c")
        XCTAssertEqual(request.headers.first("host"), "gw")
        XCTAssertEqual(request.headers.first("Content-Type"), "application/json")
        XCTAssertEqual(request.body, Array("{}".utf8))
    }

    func testMalformedPseudoHeadersAreRefused() {
        for fields: [(name: String, value: String)] in [
            [(":path", "/")], [(":method", "GET")], [(":method", "GET"), (":path", "*")],
            [(":method", "GET"), (":path", "/"), (":protocol", "x")],
        ] {
            guard case .failure(let problem) = HTTP2Messages.request(fields: fields, body: []) else { return XCTFail("\(fields)") }
            XCTAssertEqual(problem.status, 400)
        }
    }

    func testResponseFieldsDropConnectionSpecificHeaders() {
        var response = HTTPResponse(status: 201, body: [1, 2, 3])
        response.headers.add(name: "Content-Type", value: "application/json")
        response.headers.add(name: "Connection", value: "close")
        response.headers.add(name: "Transfer-Encoding", value: "chunked")
        response.headers.add(name: "Content-Length", value: "99")
        let fields = HTTP2Messages.responseFields(response, date: "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(fields.map(\.name), [":status", "content-type", "content-length", "date"])
        XCTAssertEqual(fields.map(\.value), ["201", "application/json", "3", "Sun, 06 Nov 1994 08:49:37 GMT"])
    }
}
