import XCTest
@testable import HTTPServer

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
            guard case .failure(let error) = HTTP2Messages.request(fields: fields, body: []) else { return XCTFail("\(fields)") }
            XCTAssertEqual(error.status, 400)
        }
    }

    func testBodyOverThePathLimitIs413() {
        let fields: [(name: String, value: String)] = [(":method", "POST"), (":path", "/big?x=1")]
        let limits = HTTPBodyLimits(defaultBytesMax: 4, bytesMaxByPath: ["/big": 8])
        XCTAssertNoThrow(try HTTP2Messages.request(fields: fields, body: Array(repeating: 0, count: 8), bodyLimits: limits).get())
        guard case .failure(let error) = HTTP2Messages.request(fields: fields, body: Array(repeating: 0, count: 9), bodyLimits: limits)
        else { return XCTFail("a 9-byte body passed an 8-byte limit") }
        XCTAssertEqual(error, HTTPRequestError(.bodyTooLarge))
        XCTAssertEqual(error.status, 413)
    }

    func testEarlyResponseFieldsCarryStatusAndHeadersOnly() {
        var response = HTTPResponse(status: 408, body: Array("{}".utf8))
        response.headers.add(name: "Content-Type", value: "application/problem+json")
        response.headers.add(name: "X-Request-Id", value: "abc")
        let fields = HTTP2Messages.earlyResponseFields(response)
        XCTAssertEqual(fields.map(\.name), [":status", "x-request-id", "content-length"])
        XCTAssertEqual(fields.map(\.value), ["408", "abc", "0"])
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
