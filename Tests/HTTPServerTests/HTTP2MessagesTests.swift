import XCTest
@testable import HTTPServer

final class HTTP2MessagesTests: XCTestCase {
    func testRequestFromPseudoHeaders() throws {
        let request = try HTTP2Messages.request(
            fields: [
                (":method", "POST"), (":scheme", "http"), (":path", "/a?b=c"), (":authority", "gw"),
                ("content-type", "application/json"),
            ],
            body: Array("{}".utf8)
        ).get()
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.target, "/a?b=c")
        XCTAssertEqual(request.headers.first("host"), "gw")
        XCTAssertEqual(request.headers.first("Content-Type"), "application/json")
        XCTAssertEqual(request.body, Array("{}".utf8))
    }

    func testMalformedPseudoHeadersAreRefused() {
        for fields: [(name: String, value: String)] in [
            [(":path", "/")], [(":method", "GET")], [(":method", "GET"), (":path", "")],
            [(":method", ""), (":path", "/")],
            [(":method", "GET"), (":path", "*")], [(":method", "GET"), (":path", "/"), (":protocol", "x")],
        ] {
            guard case .failure(let error) = HTTP2Messages.request(fields: fields, body: []) else {
                return XCTFail("\(fields)")
            }
            XCTAssertEqual(error.status, 400)
        }
    }

    func testBodyOverThePathLimitIs413() {
        let fields: [(name: String, value: String)] = [(":method", "POST"), (":path", "/big?x=1")]
        let limits = HTTPBodyLimits(defaultBytesMax: 4, bytesMaxByPath: ["/big": 8])
        XCTAssertNoThrow(
            try HTTP2Messages.request(fields: fields, body: Array(repeating: 0, count: 8), bodyLimits: limits).get())
        guard
            case .failure(let error) = HTTP2Messages.request(
                fields: fields, body: Array(repeating: 0, count: 9), bodyLimits: limits)
        else { return XCTFail("a 9-byte body passed an 8-byte limit") }
        XCTAssertEqual(error, HTTPRequestError(.bodyTooLarge))
        XCTAssertEqual(error.status, 413)
    }

    /// The same method and target get the same answer over both protocols:
    /// what the HTTP/1.1 parser makes of the request line is what the
    /// HTTP/2 pseudo-headers give.
    func testMethodAndTargetAreJudgedAsTheHTTP1RequestLineIs() {
        let longTarget = "/" + String(repeating: "a", count: HTTPServerLimits.requestLineBytesMax)
        let cases: [(method: String, target: String, reason: HTTPRequestError.Reason?)] = [
            ("GET", "/api/v1/points/balance?pageSize=5&x=%41", nil),
            ("PATCH", "/a/b;c=d:e@f", nil),
            ("get", "/api/v1/points/balance", .methodNotImplemented),
            ("TRACE", "/api/v1/points/balance", nil),
            ("CONNECT", "/api/v1/points/balance", .methodNotImplemented),
            ("BREW", "/api/v1/points/balance", .methodNotImplemented),
            ("G\"T", "/", .invalidMethod),
            ("GET", #"/api/v1/points/balance?x={"a"}"#, .invalidTarget),
            ("GET", "/api/v1/points/balance#frag", .invalidTarget),
            ("GET", "/api/v1/payments/apple/transactions/\u{E9}", .invalidTarget),
            ("GET", "/a%4", .invalidTarget),
            ("GET", "*", .invalidTarget),
            ("GET", longTarget, .requestLineTooLong),
        ]
        // The one difference: HTTP/1.1 must accept an absolute-form target
        // (RFC 9112 3.2.2), while HTTP/2's :path holds only path and query
        // (RFC 9113 8.3.1).
        if case .success = HTTP2Messages.request(
            fields: [(":method", "GET"), (":scheme", "http"), (":path", "http://gw/a"), (":authority", "gw")], body: [])
        {
            XCTFail("HTTP/2: an absolute-form :path is refused")
        }
        for (method, target, reason) in cases {
            var parser = HTTPRequestParser()
            let events = parser.feed(Array("\(method) \(target) HTTP/1.1\r\nHost: gw\r\n\r\n".utf8))
            let http1: HTTPRequestError.Reason? = events.compactMap { event -> HTTPRequestError.Reason? in
                if case .failure(let error) = event { return error.reason } else { return nil }
            }.first
            XCTAssertEqual(http1, reason, "HTTP/1.1: \(method) \(target.prefix(60))")
            let http2 = HTTP2Messages.request(
                fields: [(":method", method), (":scheme", "http"), (":path", target), (":authority", "gw")], body: [])
            switch http2 {
            case .success: XCTAssertNil(reason, "HTTP/2: \(method) \(target.prefix(60))")
            case .failure(let error): XCTAssertEqual(error.reason, reason, "HTTP/2: \(method) \(target.prefix(60))")
            }
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
