import TestSupport
import XCTest
@testable import HTTPServer

/// Parser tests: every split of a byte stream, pipelining, chunked edge
/// cases, smuggling attempts and limits.
final class HTTPRequestParserTests: XCTestCase {
    // MARK: Helpers.

    private func feedAll(_ text: String) -> [HTTPParserEvent] {
        var parser = HTTPRequestParser()
        return parser.feed(Array(text.utf8))
    }

    private func requests(_ events: [HTTPParserEvent]) -> [HTTPRequest] {
        events.compactMap { if case .request(let request) = $0 { return request } else { return nil } }
    }

    private func failure(_ events: [HTTPParserEvent]) -> HTTPRequestError? {
        for event in events { if case .failure(let error) = event { return error } }
        return nil
    }

    /// A server must accept the absolute form (RFC 9112 3.2.2): the target
    /// is kept as its path and query, which routing and body limits read.
    func testAbsoluteFormTargetsAreReadAsTheirPathAndQuery() {
        let cases = [
            ("http://gw/healthz", "/healthz"), ("HTTPS://gw.example:8443/a/b?x=1", "/a/b?x=1"),
            ("http://gw", "/"), ("http://gw?x=1", "/?x=1"), ("http://[::1]:80/a", "/a"), ("/plain", "/plain"),
        ]
        for (target, expected) in cases {
            let parsed = requests(feedAll("GET \(target) HTTP/1.1\r\nHost: gw\r\n\r\n"))
            XCTAssertEqual(parsed.first?.target, expected, target)
        }
    }

    /// Every character RFC 3986 allows in a path and query (pchar, "/" and
    /// "?") and in an authority is accepted, and each one it does not is
    /// refused: the character classes are written out byte by byte.
    func testTargetAndAuthorityCharacterClassesAreExactlyRFC3986s() {
        let targetSpecials = Array("-._~!$&'()*+,;=:@/?".utf8)
        let authoritySpecials = Array("-._~!$&'()*+,;=:[]%".utf8)
        for byte in UInt8(0x21)...UInt8(0x7E)
        where !(byte >= 0x30 && byte <= 0x39) && !((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) {
            let character = String(UnicodeScalar(byte))
            let path = requests(feedAll("GET /a\(character)b HTTP/1.1\r\nHost: gw\r\n\r\n"))
            XCTAssertEqual(
                path.first?.target, targetSpecials.contains(byte) ? "/a\(character)b" : nil, "path byte \(byte)")
            // In an authority "/" and "?" end it, and "%" is allowed as is.
            guard byte != UInt8(ascii: "/") && byte != UInt8(ascii: "?") else { continue }
            let absolute = requests(feedAll("GET http://g\(character)w/x HTTP/1.1\r\nHost: gw\r\n\r\n"))
            XCTAssertEqual(
                absolute.first?.target, authoritySpecials.contains(byte) ? "/x" : nil, "authority byte \(byte)")
        }
    }

    private func assertFailure(
        _ text: String, _ reason: HTTPRequestError.Reason, status: Int, file: StaticString = #filePath,
        line: UInt = #line
    ) {
        let error = failure(feedAll(text))
        XCTAssertEqual(error?.reason, reason, file: file, line: line)
        XCTAssertEqual(error?.status, status, file: file, line: line)
    }

    // MARK: Request line.

    func testSimpleGetRequest() throws {
        let events = feedAll("GET /api/v1/points/balance?x=1 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer t\r\n\r\n")
        XCTAssertEqual(events.count, 1)
        let request = try XCTUnwrap(requests(events).first)
        XCTAssertEqual(request.method, "GET")
        XCTAssertEqual(request.target, "/api/v1/points/balance?x=1")
        XCTAssertEqual(request.path, "/api/v1/points/balance")
        XCTAssertEqual(request.query, "x=1")
        XCTAssertEqual(request.version, .http1_1)
        XCTAssertEqual(request.headers.first("authorization"), "Bearer t")
        XCTAssertTrue(request.keepAlive)
        XCTAssertEqual(request.body, [])
    }

    func testEveryByteBoundarySplitYieldsTheSameRequests() {
        let stream =
            "POST /v HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
            + "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n"
            + "GET /g HTTP/1.0\r\n\r\n"
        let bytes = Array(stream.utf8)
        let expected = requests(feedAll(stream))
        XCTAssertEqual(expected.count, 3)
        XCTAssertEqual(expected.map { $0.body }, [Array("hello".utf8), Array("abcde".utf8), []])
        for first in 0...bytes.count {
            for second in stride(from: first, through: bytes.count, by: 7) {
                var parser = HTTPRequestParser()
                var events = parser.feed(bytes[0..<first])
                events += parser.feed(bytes[first..<second])
                events += parser.feed(bytes[second...])
                XCTAssertEqual(requests(events), expected, "split at \(first), \(second)")
                XCTAssertNil(failure(events))
            }
        }
        var parser = HTTPRequestParser()
        var events: [HTTPParserEvent] = []
        for byte in bytes { events += parser.feed([byte]) }
        XCTAssertEqual(requests(events), expected)
        XCTAssertTrue(parser.isIdle)
    }

    func testPipelinedRequestsComeOutInOrder() {
        let one = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
        let two = "GET /2 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        let got = requests(feedAll(one + two + one))
        XCTAssertEqual(got.map(\.target), ["/1", "/2", "/1"])
        XCTAssertEqual(got.map(\.keepAlive), [true, false, true])
    }

    func testLeadingEmptyLinesAreIgnoredButBounded() {
        XCTAssertEqual(requests(feedAll("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")).count, 1)
        assertFailure(String(repeating: "\r\n", count: 9) + "GET / HTTP/1.1\r\n\r\n", .tooManyEmptyLines, status: 400)
    }

    func testMalformedRequestLines() {
        assertFailure("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", .malformedRequestLine, status: 400)
        assertFailure(" / HTTP/1.1\r\nHost: a\r\n\r\n", .malformedRequestLine, status: 400)
        assertFailure("GET / HTTP/1.1x\r\nHost: a\r\n\r\n", .malformedRequestLine, status: 400)
        assertFailure("GET / HTTP/1.\r\nHost: a\r\n\r\n", .malformedRequestLine, status: 400)
        assertFailure("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", .malformedRequestLine, status: 400)
        assertFailure("GET /\r\nHost: a\r\n\r\n", .malformedRequestLine, status: 400)
        assertFailure("GET / http/1.1\r\nHost: a\r\n\r\n", .malformedRequestLine, status: 400)
        assertFailure("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", .invalidMethod, status: 400)
        assertFailure("GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget, status: 400)
        assertFailure("GET http:///a HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget, status: 400)
        assertFailure("GET http://user@a/ HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget, status: 400)
        assertFailure("GET http://a/b#frag HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget, status: 400)
        assertFailure("GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget, status: 400)
        assertFailure("GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget, status: 400)
        assertFailure("GET /a\u{01} HTTP/1.1\r\nHost: a\r\n\r\n", .invalidTarget, status: 400)
        assertFailure("BREW / HTTP/1.1\r\nHost: a\r\n\r\n", .methodNotImplemented, status: 501)
        assertFailure("GET / HTTP/2.0\r\nHost: a\r\n\r\n", .unsupportedVersion, status: 505)
        assertFailure("GET / HTTP/0.9\r\nHost: a\r\n\r\n", .unsupportedVersion, status: 505)
    }

    func testHigherMinorVersionIsTreatedAsHTTP11() throws {
        let request = try XCTUnwrap(requests(feedAll("GET / HTTP/1.7\r\nHost: a\r\n\r\n")).first)
        XCTAssertEqual(request.version, .http1_1)
    }

    func testBareLineFeedAndBareCarriageReturnAreRejected() {
        assertFailure("GET / HTTP/1.1\nHost: a\r\n\r\n", .invalidLineEnding, status: 400)
        assertFailure("GET / HTTP/1.1\r\nHost: a\n\n", .invalidLineEnding, status: 400)
        assertFailure("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", .invalidHeaderField, status: 400)
        assertFailure("\nGET / HTTP/1.1\r\n\r\n", .invalidLineEnding, status: 400)
    }

    // MARK: Header fields.

    func testFieldValuesAreTrimmedAndNamesCaseInsensitive() throws {
        let request = try XCTUnwrap(requests(feedAll("GET / HTTP/1.1\r\nHOST: a\r\nX-Thing: \t v w \t\r\n\r\n")).first)
        XCTAssertEqual(request.headers.first("x-thing"), "v w")
        XCTAssertEqual(request.headers.first("host"), "a")
    }

    func testObsoleteLineFoldingIsRejected() {
        assertFailure("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n", .obsoleteLineFolding, status: 400)
        assertFailure("GET / HTTP/1.1\r\n\tHost: a\r\n\r\n", .obsoleteLineFolding, status: 400)
    }

    func testWhitespaceBeforeColonIsRejected() {
        assertFailure("GET / HTTP/1.1\r\nHost : a\r\n\r\n", .whitespaceBeforeColon, status: 400)
        assertFailure("GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", .whitespaceBeforeColon, status: 400)
    }

    func testInvalidFieldNamesAndValues() {
        assertFailure("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", .invalidHeaderField, status: 400)
        assertFailure("GET / HTTP/1.1\r\nHost: a\r\n: empty\r\n\r\n", .invalidHeaderField, status: 400)
        assertFailure("GET / HTTP/1.1\r\nHost: a\r\nBad(Name): x\r\n\r\n", .invalidHeaderField, status: 400)
        assertFailure("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{00}b\r\n\r\n", .invalidHeaderField, status: 400)
        assertFailure("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{7F}b\r\n\r\n", .invalidHeaderField, status: 400)
    }

    func testObsTextSurvivesAsLatin1() throws {
        var parser = HTTPRequestParser()
        let bytes = Array("GET / HTTP/1.1\r\nHost: a\r\nX: ".utf8) + [0xE9] + Array("\r\n\r\n".utf8)
        let request = try XCTUnwrap(requests(parser.feed(bytes)).first)
        XCTAssertEqual(request.headers.first("x")?.unicodeScalars.map(\.value), [0xE9])
    }

    func testHostIsRequiredOnceInHTTP11() {
        assertFailure("GET / HTTP/1.1\r\n\r\n", .missingHost, status: 400)
        assertFailure("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .duplicateHost, status: 400)
        XCTAssertEqual(requests(feedAll("GET / HTTP/1.0\r\n\r\n")).count, 1)
    }

    // MARK: Content-Length.

    func testContentLengthBody() throws {
        let request = try XCTUnwrap(
            requests(feedAll("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 003\r\n\r\nabc")).first)
        XCTAssertEqual(request.body, Array("abc".utf8))
    }

    func testIdenticalDuplicateContentLengthsAreAccepted() {
        XCTAssertEqual(
            requests(feedAll("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab")).count, 1
        )
        XCTAssertEqual(requests(feedAll("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 2\r\n\r\nab")).count, 1)
    }

    func testContentLengthSmuggling() {
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
            .conflictingContentLength, status: 400)
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 3\r\n\r\nabc", .conflictingContentLength, status: 400)
        assertFailure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", .invalidContentLength, status: 400)
        assertFailure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", .invalidContentLength, status: 400)
        assertFailure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n", .invalidContentLength, status: 400)
        assertFailure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n", .invalidContentLength, status: 400)
        assertFailure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", .invalidContentLength, status: 400)
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", .invalidContentLength,
            status: 400)
        assertFailure("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 65537\r\n\r\n", .bodyTooLarge, status: 413)
    }

    func testTransferEncodingSmuggling() {
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            .contentLengthWithTransferEncoding, status: 400)
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
            .contentLengthWithTransferEncoding, status: 400)
        assertFailure(
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .transferEncodingInHTTP10, status: 400)
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", .chunkedNotFinal, status: 400)
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            .chunkedNotFinal, status: 400)
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n", .chunkedNotFinal, status: 400)
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .unsupportedTransferCoding,
            status: 501)
    }

    func testTransferEncodingIsCaseInsensitive() {
        XCTAssertEqual(
            requests(feedAll("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n")).count, 1)
    }

    // MARK: Chunked bodies.

    func testChunkedEdgeCases() throws {
        let head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        let request = try XCTUnwrap(
            requests(feedAll(head + "A\r\n0123456789\r\n00001 ; a=b;c\r\nx\r\n0\r\n\r\n")).first)
        XCTAssertEqual(request.body, Array("0123456789x".utf8))
        XCTAssertEqual(requests(feedAll(head + "0\r\n\r\n")).first?.body, [])
        XCTAssertEqual(requests(feedAll(head + "0\r\nTrailer-A: 1\r\nTrailer-B: 2\r\n\r\n")).count, 1)
        XCTAssertEqual(requests(feedAll(head + "f\r\n0123456789abcde\r\n0\r\n\r\n")).first?.body.count, 15)
    }

    func testBadChunkSizes() {
        let head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        assertFailure(head + "-1\r\n", .invalidChunkSize, status: 400)
        assertFailure(head + "g\r\n", .invalidChunkSize, status: 400)
        assertFailure(head + "\r\n", .invalidChunkSize, status: 400)
        assertFailure(head + "0x5\r\n", .invalidChunkSize, status: 400)
        assertFailure(head + "5 x\r\n", .invalidChunkSize, status: 400)
        assertFailure(head + "1000000000000000000000\r\n", .invalidChunkSize, status: 400)
        assertFailure(head + "FFFFFFFFFFFFFFFF\r\n", .invalidChunkSize, status: 400)
        assertFailure(head + "10001\r\n", .bodyTooLarge, status: 413)
        assertFailure(
            head + "8000\r\n" + String(repeating: "a", count: 0x8000) + "\r\n8001\r\n", .bodyTooLarge, status: 413)
        assertFailure(head + "1;" + String(repeating: "e", count: 2000) + "\r\n", .chunkSizeLineTooLong, status: 400)
        assertFailure(head + "1;a\u{01}\r\n", .invalidChunkSize, status: 400)
    }

    func testBadChunkFraming() {
        let head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        assertFailure(head + "3\r\nabcX\r\n", .invalidChunkFraming, status: 400)
        assertFailure(head + "3\r\nabc\rX", .invalidChunkFraming, status: 400)
        assertFailure(head + "3\nabc\r\n", .invalidLineEnding, status: 400)
        assertFailure(head + "0\r\nBad Trailer\r\n\r\n", .invalidHeaderField, status: 400)
        assertFailure(head + "0\r\n folded\r\n\r\n", .obsoleteLineFolding, status: 400)
    }

    // MARK: Limits.

    func testRequestLineLimit() {
        let longTarget = "/" + String(repeating: "a", count: HTTPServerLimits.requestLineBytesMax)
        assertFailure("GET \(longTarget) HTTP/1.1\r\nHost: a\r\n\r\n", .requestLineTooLong, status: 414)
        // Detected before the line ends, so a never-ending line cannot grow.
        assertFailure("GET \(longTarget)", .requestLineTooLong, status: 414)
        let fitting = "/" + String(repeating: "a", count: HTTPServerLimits.requestLineBytesMax - 14)
        XCTAssertEqual(requests(feedAll("GET \(fitting) HTTP/1.1\r\nHost: a\r\n\r\n")).count, 1)
    }

    func testHeaderBlockLimit() {
        let big = String(repeating: "v", count: 4000)
        let fields = (0..<4).map { "X-\($0): \(big)\r\n" }.joined()
        XCTAssertEqual(requests(feedAll("GET / HTTP/1.1\r\nHost: a\r\n" + fields + "\r\n")).count, 1)
        let tooMany = (0..<5).map { "X-\($0): \(big)\r\n" }.joined()
        assertFailure("GET / HTTP/1.1\r\nHost: a\r\n" + tooMany + "\r\n", .headerBlockTooLarge, status: 431)
        assertFailure("GET / HTTP/1.1\r\nHost: a\r\n" + tooMany, .headerBlockTooLarge, status: 431)
    }

    /// Found by Fuzz/HTTP1Fuzz (split independence): an over-long line
    /// ending in a bare LF was 400 (line ending) when it arrived in one read
    /// and 414/431 (limit) when it trickled in. Now the limit wins either way.
    func testOverlongLineWithBareLineFeedFailsTheSameWhateverTheSplit() {
        let longTarget = "/" + String(repeating: "a", count: HTTPServerLimits.requestLineBytesMax + 2)
        let bigField = "X-Big: " + String(repeating: "v", count: HTTPServerLimits.headerBlockBytesMax)
        let chunkExtension = ";" + String(repeating: "e", count: HTTPServerLimits.chunkSizeLineBytesMax + 2)
        let cases: [(String, HTTPRequestError.Reason)] = [
            ("GET \(longTarget) HTTP/1.1\n", .requestLineTooLong),
            ("GET / HTTP/1.1\r\nHost: a\r\n\(bigField)\n", .headerBlockTooLarge),
            (
                "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\(chunkExtension)\n",
                .chunkSizeLineTooLong
            ),
        ]
        for (text, reason) in cases {
            let bytes = Array(text.utf8)
            var whole = HTTPRequestParser()
            XCTAssertEqual(failure(whole.feed(bytes))?.reason, reason)
            var trickled = HTTPRequestParser()
            var events: [HTTPParserEvent] = []
            for byte in bytes { events += trickled.feed([byte]) }
            XCTAssertEqual(failure(events)?.reason, reason)
        }
    }

    func testHeaderFieldCountLimit() {
        let hundred = (0..<99).map { "X-\($0): 1\r\n" }.joined()
        XCTAssertEqual(requests(feedAll("GET / HTTP/1.1\r\nHost: a\r\n" + hundred + "\r\n")).count, 1)
        assertFailure(
            "GET / HTTP/1.1\r\nHost: a\r\n" + hundred + "X-Last: 1\r\n\r\n", .tooManyHeaderFields, status: 431)
    }

    func testBodyLimitAcceptsExactlyTheMaximum() {
        let body = String(repeating: "b", count: HTTPServerLimits.requestBodyBytesMax)
        let request = requests(
            feedAll("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        ).first
        XCTAssertEqual(request?.body.count, HTTPServerLimits.requestBodyBytesMax)
    }

    // MARK: Keep-alive and Expect.

    func testKeepAliveSemantics() {
        XCTAssertEqual(requests(feedAll("GET / HTTP/1.1\r\nHost: a\r\n\r\n")).first?.keepAlive, true)
        XCTAssertEqual(
            requests(feedAll("GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n")).first?.keepAlive, false)
        XCTAssertEqual(
            requests(feedAll("GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade, close\r\n\r\n")).first?.keepAlive, false
        )
        XCTAssertEqual(requests(feedAll("GET / HTTP/1.0\r\n\r\n")).first?.keepAlive, false)
        XCTAssertEqual(requests(feedAll("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")).first?.keepAlive, true)
        XCTAssertEqual(
            requests(feedAll("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n")).first?.keepAlive, false)
    }

    func testExpectContinueIsAnnouncedBeforeTheBody() {
        var parser = HTTPRequestParser()
        let head = parser.feed(
            Array("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8))
        XCTAssertEqual(head, [.continueRequired])
        XCTAssertEqual(requests(parser.feed(Array("ok".utf8))).first?.body, Array("ok".utf8))
    }

    func testExpectContinueIsIgnoredWithoutBodyOrInHTTP10() {
        XCTAssertEqual(feedAll("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n").count, 1)
        let events = feedAll("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx")
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(requests(events).count, 1)
    }

    func testUnknownExpectationIsRejected() {
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nExpect: teapot\r\nContent-Length: 1\r\n\r\nx", .unsupportedExpectation,
            status: 417)
    }

    func testExpectContinueWithOversizedBodyFailsBeforeTheBody() {
        assertFailure(
            "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 70000\r\n\r\n", .bodyTooLarge,
            status: 413)
    }

    // MARK: Failure is final.

    func testNothingIsParsedAfterAFailure() {
        var parser = HTTPRequestParser()
        let first = parser.feed(
            Array("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/9.9\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        XCTAssertEqual(requests(first).count, 1)
        XCTAssertEqual(failure(first)?.reason, .unsupportedVersion)
        XCTAssertTrue(parser.hasFailed)
        XCTAssertEqual(parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)), [])
    }

    // MARK: Fuzz.

    /// Seeded mutations of valid requests: the parser never crashes and every
    /// feed ends in requests, a typed error, or a wait for more bytes.
    func testSeededFuzzNeverCrashes() {
        var generator = SeededRandom(seed: 0x5EED_1234)
        let seeds = [
            "POST /api/v1/payments/apple/transactions/verify HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n{  }",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\nT: 1\r\n\r\n",
            "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        ].map { Array($0.utf8) }
        let alphabet = Array("\r\n :;,0123456789abcdefABCDEF-\t/HTTP".utf8) + [0x00, 0x7F, 0xFF]
        for iteration in 0..<3000 {
            var bytes = seeds[Int(generator.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes[position] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: position)
                default: bytes.remove(at: position)
                }
            }
            var parser = HTTPRequestParser()
            var events: [HTTPParserEvent] = []
            var offset = 0
            while offset < bytes.count {
                let size = 1 + Int(generator.next() % 16)
                events += parser.feed(bytes[offset..<min(bytes.count, offset + size)])
                offset += size
            }
            let failures = events.filter { if case .failure = $0 { return true } else { return false } }
            XCTAssertLessThanOrEqual(failures.count, 1, "iteration \(iteration)")
            if let last = failures.last { XCTAssertEqual(events.last, last, "a failure is always the last event") }
            if let error = failure(events) {
                XCTAssertTrue([400, 413, 414, 417, 431, 501, 505].contains(error.status))
            }
        }
    }
}
