import XCTest
@testable import HTTPServer

final class HTTPResponseSerializerTests: XCTestCase {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    func testKeepAliveResponseHasContentLengthAndNoConnectionHeader() {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: "999")
        let bytes = HTTPResponseSerializer.serialize(
            HTTPResponse(status: 200, headers: headers, body: Array("{}".utf8)), requestVersion: .http1_1,
            keepAlive: true)
        XCTAssertEqual(text(bytes), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
    }

    func testCallersFramingHeadersAreDroppedInAnyCase() {
        var headers = HTTPHeaders()
        for name in ["CONNECTION", "Transfer-Encoding", "date", "content-LENGTH", "Dates", "Connections", "Dat"] {
            headers.add(name: name, value: "v")
        }
        let bytes = HTTPResponseSerializer.serialize(
            HTTPResponse(status: 200, headers: headers, body: []), requestVersion: .http1_1,
            keepAlive: true, date: "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(
            text(bytes),
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nDates: v\r\nConnections: v\r\nDat: v\r\n"
                + "Content-Length: 0\r\n\r\n")
    }

    func testCloseAndHTTP10KeepAlive() {
        let response = HTTPResponse(status: 404)
        XCTAssertEqual(
            text(
                HTTPResponseSerializer.serialize(
                    response, requestVersion: .http1_1, keepAlive: false, date: "Sun, 06 Nov 1994 08:49:37 GMT")),
            "HTTP/1.1 404 Not Found\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        XCTAssertEqual(
            text(HTTPResponseSerializer.serialize(response, requestVersion: .http1_0, keepAlive: true)),
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n")
    }

    func testHeadOmitsBodyButKeepsLengthAnd204HasNoLength() {
        let response = HTTPResponse(status: 200, body: Array("abc".utf8))
        XCTAssertEqual(
            text(HTTPResponseSerializer.serialize(response, requestVersion: .http1_1, keepAlive: true, omitBody: true)),
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n")
        XCTAssertEqual(
            text(
                HTTPResponseSerializer.serialize(HTTPResponse(status: 204), requestVersion: .http1_1, keepAlive: true)),
            "HTTP/1.1 204 No Content\r\n\r\n")
    }

    func testSerializedResponseParsesBackWithOurOwnFieldRules() {
        var headers = HTTPHeaders()
        headers.add(name: "Allow", value: "GET, POST")
        let bytes = HTTPResponseSerializer.serialize(
            HTTPResponse(status: 405, headers: headers), requestVersion: .http1_1, keepAlive: true)
        let lines = text(bytes).components(separatedBy: "\r\n")
        XCTAssertEqual(lines[0], "HTTP/1.1 405 Method Not Allowed")
        XCTAssertEqual(try HTTPFieldLine.parse(Array(lines[1].utf8)[...]).value, "GET, POST")
    }

    func testContinueBytes() {
        XCTAssertEqual(text(HTTPResponseSerializer.continueResponseBytes), "HTTP/1.1 100 Continue\r\n\r\n")
    }
}
