import CryptoPrimitives
import HTTPServer
import Contracts
import Foundation
import XCTest
@testable import Gateway

/// HTTP/1.1 mechanics against the real server over loopback.
final class GatewayServerHTTP1Tests: XCTestCase {
    func testKeepAliveAndPipelinedRequestsAreAnsweredInOrderOnOneConnection() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let responses = try await onDedicatedThread { () -> [RawResponse] in
            let client = try RawHTTPClient(port: port)
            // Two requests in one write (pipelined), then a third after.
            try client.send(
                GatewayHarness.requestText("GET", "/healthz", headers: [("X-Request-Id", "first")])
                    + GatewayHarness.requestText("GET", "/nope", headers: [("X-Request-Id", "second")]))
            var responses = [try client.readResponse(), try client.readResponse()]
            try client.send(
                GatewayHarness.requestText("GET", "/healthz", headers: [("X-Request-Id", "third")], close: true))
            responses.append(try client.readResponse())
            XCTAssertTrue(try client.waitForClose())
            return responses
        }
        XCTAssertEqual(responses.map(\.status), [200, 404, 200])
        XCTAssertEqual(responses.map { $0.header("X-Request-Id") }, ["first", "second", "third"])
        XCTAssertEqual(responses[0].json["status"] as? String, "ok")
        XCTAssertEqual(responses[1].header("Content-Type"), "application/problem+json")
        XCTAssertEqual(responses[2].header("Connection"), "close")
        XCTAssertNotNil(responses[0].header("Date"))
        await harness.stop()
    }

    /// HEAD is answered as GET without the body (RFC 9110 9.3.2): the same
    /// status and Content-Length, and the next response on the connection
    /// follows right after the head.
    func testHeadIsAnsweredLikeGetWithoutTheBody() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let token = GatewayHarness.bearer
        let (head, get) = try await onDedicatedThread {
            let client = try RawHTTPClient(port: port)
            try client.send(
                GatewayHarness.requestText("HEAD", "/api/v1/points/balance", headers: [token])
                    + GatewayHarness.requestText("GET", "/api/v1/points/balance", headers: [token]))
            return (try client.readResponse(toHead: true), try client.readResponse())
        }
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(get.status, 200)
        XCTAssertEqual(head.header("content-length"), get.header("content-length"))
        XCTAssertTrue(head.body.isEmpty)
        XCTAssertEqual(get.json["balance"] as? Int, 180, "the GET after it read whole: no body bytes came for the HEAD")
        await harness.stop()
    }

    /// A method HTTP defines that a route does not declare (TRACE, PUT) is
    /// 405 with the route's `Allow` (RFC 9110 15.5.6), on a known path, and
    /// 404 elsewhere; a method HTTP does not define stays 501.
    func testUndeclaredMethodsAre405WithAllowAndUnknownMethods501() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let token = GatewayHarness.bearer
        let (trace, put, unknownPath, brew) = try await onDedicatedThread {
            let client = try RawHTTPClient(port: port)
            try client.send(
                GatewayHarness.requestText("TRACE", "/api/v1/points/balance", headers: [token])
                    + GatewayHarness.requestText("PUT", "/api/v1/payments/apple/transactions/verify", headers: [token])
                    + GatewayHarness.requestText("TRACE", "/api/v1/nothing-here", headers: [token]))
            let answers = (try client.readResponse(), try client.readResponse(), try client.readResponse())
            let other = try RawHTTPClient(port: port)
            try other.send(GatewayHarness.requestText("BREW", "/api/v1/points/balance", headers: [token]))
            return (answers.0, answers.1, answers.2, try other.readResponse())
        }
        XCTAssertEqual(trace.status, 405)
        XCTAssertEqual(trace.header("allow"), "GET, HEAD")
        XCTAssertEqual(trace.json["code"] as? String, "METHOD_NOT_ALLOWED")
        XCTAssertEqual(put.status, 405)
        XCTAssertEqual(put.header("allow"), "POST")
        XCTAssertEqual(unknownPath.status, 404)
        XCTAssertEqual(brew.status, 501)
        await harness.stop()
    }

    func testPipelinedRequestsFollowedByAHalfCloseEndTheConnection() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let queueMax = HTTPServerLimits.pipelinedRequestCountMax
        let statuses = try await onDedicatedThread { () -> [Int] in
            let client = try RawHTTPClient(port: port)
            try client.send(String(repeating: GatewayHarness.requestText("GET", "/healthz"), count: queueMax + 4))
            shutdown(client.fd, Int32(SHUT_WR))
            // The end of input means the client is gone: whatever was in
            // flight is answered (or not), the rest dropped, then close.
            var statuses: [Int] = []
            while let response = try? client.readResponse() { statuses.append(response.status) }
            return statuses
        }
        XCTAssertGreaterThanOrEqual(
            statuses.count, 1, "the request in flight (a health check, which does not wait) is answered")
        XCTAssertLessThanOrEqual(statuses.count, queueMax + 1)
        XCTAssertTrue(statuses.allSatisfy { $0 == 200 || $0 == 429 }, "\(statuses)")
        await harness.stop()
    }

    func testExpectContinueGetsAnInterimResponseBeforeTheBody() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let body = GatewayHarness.verifyBody()
        let bearer = GatewayHarness.bearer
        let (interim, final) = try await onDedicatedThread { () -> (String, RawResponse) in
            let client = try RawHTTPClient(port: port)
            try client.send(
                "POST /api/v1/payments/apple/transactions/verify HTTP/1.1\r\nHost: gw\r\n\(bearer.0): \(bearer.1)\r\n"
                    + "Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            )
            var interim = [UInt8](repeating: 0, count: 25)
            let count = interim.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, Int32(MSG_WAITALL)) }
            try client.send(body)
            return (String(decoding: interim.prefix(max(0, count)), as: UTF8.self), try client.readResponse())
        }
        XCTAssertEqual(interim, "HTTP/1.1 100 Continue\r\n\r\n")
        XCTAssertEqual(final.status, 200)
        await harness.stop()
    }

    func testChunkedBodyReachesTheBackend() async throws {
        let harness = try await GatewayHarness.start()
        let body = Array(GatewayHarness.verifyBody().utf8)
        let port = harness.port
        let bearer = GatewayHarness.bearer
        let response = try await onDedicatedThread { () -> RawResponse in
            let client = try RawHTTPClient(port: port)
            var text = "POST /api/v1/payments/apple/transactions/verify HTTP/1.1\r\nHost: gw\r\n"
            text += "\(bearer.0): \(bearer.1)\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            try client.send(text)
            for chunk in stride(from: 0, to: body.count, by: 50).map({ Array(body[$0..<min($0 + 50, body.count)]) }) {
                try client.send(String(chunk.count, radix: 16) + "\r\n")
                try client.send(chunk + Array("\r\n".utf8))
            }
            try client.send("0\r\n\r\n")
            return try client.readResponse()
        }
        XCTAssertEqual(response.status, 200, response.bodyText)
        XCTAssertEqual(response.json["status"] as? String, "granted")
        XCTAssertEqual(
            harness.doubles.last(VerifyTransactionRequest.self)?.signedTransactionInfo,
            GatewayHarness.signedTransactionInfo)
        await harness.stop()
    }

    func testOversizedBodyIs413ProblemAndTheConnectionCloses() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let bearer = GatewayHarness.bearer
        let (response, closed) = try await onDedicatedThread { () -> (RawResponse, Bool) in
            let client = try RawHTTPClient(port: port)
            let size = GatewayLimits.requestBodyBytesMax + 1
            try client.send(
                "POST /api/v1/payments/apple/transactions/verify HTTP/1.1\r\nHost: gw\r\n\(bearer.0): \(bearer.1)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(size)\r\n\r\n")
            return (try client.readResponse(), try client.waitForClose())
        }
        XCTAssertEqual(response.status, 413)
        XCTAssertEqual(response.json["code"] as? String, "PAYLOAD_TOO_LARGE")
        XCTAssertTrue(closed)
        XCTAssertEqual(harness.doubles.recordedMethods, [])
        await harness.stop()
    }

    func testMalformedJSONAndWrongMediaTypeAreProblemsWithoutBackendCalls() async throws {
        let harness = try await GatewayHarness.start()
        let path = "/api/v1/payments/apple/transactions/verify"
        let malformed = try await harness.request(
            "POST", path, headers: [GatewayHarness.bearer, ("Content-Type", "application/json")],
            body: #"{"productCode":"#)
        XCTAssertEqual(malformed.status, 400)
        XCTAssertEqual(malformed.json["code"] as? String, "VALIDATION_FAILED")
        let wrongType = try await harness.request(
            "POST", path, headers: [GatewayHarness.bearer, ("Content-Type", "text/plain")],
            body: GatewayHarness.verifyBody())
        XCTAssertEqual(wrongType.status, 415)
        XCTAssertEqual(wrongType.json["code"] as? String, "UNSUPPORTED_MEDIA_TYPE")
        let userIdInBody = try await harness.request(
            "POST", path, headers: [GatewayHarness.bearer, ("Content-Type", "application/json")],
            body: String(GatewayHarness.verifyBody().dropLast()) + #","userId":"someone-else"}"#)
        XCTAssertEqual(userIdInBody.status, 400)
        XCTAssertEqual(userIdInBody.json["field"] as? String, "userId")
        XCTAssertEqual(harness.doubles.recordedMethods, [])
        await harness.stop()
    }

    func testBadTokensAre401AndNeverReachTheBackend() async throws {
        let harness = try await GatewayHarness.start()
        let minter = try DevTokenMinter(
            secret: GatewayHarness.secret, issuer: GatewayHarness.issuer, audience: GatewayHarness.audience)
        let forger = try DevTokenMinter(
            secret: Array(repeating: 7, count: 32), issuer: GatewayHarness.issuer, audience: GatewayHarness.audience)
        let wrongAudience = try DevTokenMinter(
            secret: GatewayHarness.secret, issuer: GatewayHarness.issuer, audience: "someone-else")
        let now = HTTPServerClock.unixSeconds()
        let user = BackendDoubles.ownerUserId
        let valid = minter.mint(userId: user, email: "a@b.c", issuedAtSeconds: now)
        let parts = valid.split(separator: ".")
        let noneHeader = StrictBase64.encodeURL(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let cases: [(String, [(String, String)])] = [
            ("missing", []),
            (
                "expired",
                [
                    (
                        "Authorization",
                        "Bearer "
                            + minter.mint(
                                userId: user, email: "a@b.c", issuedAtSeconds: now - 7200, lifetimeSeconds: 60)
                    )
                ]
            ),
            (
                "forged",
                [("Authorization", "Bearer " + forger.mint(userId: user, email: "a@b.c", issuedAtSeconds: now))]
            ),
            ("alg none", [("Authorization", "Bearer \(noneHeader).\(parts[1]).")]),
            (
                "wrong audience",
                [("Authorization", "Bearer " + wrongAudience.mint(userId: user, email: "a@b.c", issuedAtSeconds: now))]
            ),
            ("not bearer", [("Authorization", "Basic dXNlcjpwYXNz")]),
        ]
        for (name, headers) in cases {
            let balance = try await harness.request("GET", "/api/v1/points/balance", headers: headers)
            XCTAssertEqual(balance.status, 401, name)
            XCTAssertEqual(balance.json["code"] as? String, "UNAUTHENTICATED", name)
            let verify = try await harness.request(
                "POST", "/api/v1/payments/apple/transactions/verify",
                headers: headers + [("Content-Type", "application/json")], body: GatewayHarness.verifyBody())
            XCTAssertEqual(verify.status, 401, name)
        }
        XCTAssertEqual(harness.doubles.recordedMethods, [], "nothing reached a backend")
        await harness.stop()
    }

    func testSlowLorisIsCutOffWhileOthersAreServed() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        // Trickles one byte a second, never finishing the head; bounded to
        // well past the head timeout.
        async let trickler = onDedicatedThread { () -> (status: Int?, closed: Bool) in
            let client = try RawHTTPClient(port: port, receiveTimeoutSeconds: 1)
            let head =
                Array("GET /healthz HTTP/1.1\r\nHost: gw\r\nX-Padding: ".utf8)
                + Array(repeating: UInt8(ascii: "a"), count: 64)
            let boundSeconds = Int(HTTPServerLimits.requestHeadTimeoutMilliseconds / 1000) + 10
            for index in 0..<boundSeconds {
                do {
                    try client.send([head[index % head.count]])
                } catch {
                    break  // the server closed on us
                }
                if let response = try? client.readResponse() {
                    return (response.status, (try? client.waitForClose()) ?? false)
                }
            }
            return (nil, false)
        }
        // Meanwhile other clients are served promptly, again and again.
        for _ in 0..<5 {
            let response = try await harness.request("GET", "/healthz")
            XCTAssertEqual(response.status, 200)
            try await Task.sleep(for: .milliseconds(500))
        }
        let outcome = try await trickler
        XCTAssertEqual(outcome.status, 408, "the trickling client gets 408")
        XCTAssertTrue(outcome.closed)
        await harness.stop()
    }

    func testThousandIdleConnectionsDoNotStopServiceAndTheLimitHolds() async throws {
        let harness = try await GatewayHarness.start()
        let port = harness.port
        let idle = try await onDedicatedThread { () -> [RawHTTPClient] in
            try (0..<1000).map { _ in try RawHTTPClient(port: port) }
        }
        var count = 0
        for _ in 0..<100 where count < 1000 {
            count = await harness.server.connectionCount()
            if count < 1000 { try await Task.sleep(for: .milliseconds(50)) }
        }
        XCTAssertEqual(count, 1000)
        let response = try await harness.request("GET", "/healthz")
        XCTAssertEqual(response.status, 200)
        withExtendedLifetime(idle) {}
        await harness.stop()

        // A small limit: the connection over it is closed at once.
        let limited = try await GatewayHarness.start(
            configuration: .init(host: "127.0.0.1", port: 0, connectionsMax: 3))
        let limitedPort = limited.port
        let overLimitClosed = try await onDedicatedThread { () -> Bool in
            let held = try (0..<3).map { _ in try RawHTTPClient(port: limitedPort) }
            Thread.sleep(forTimeInterval: 0.2)
            let extra = try RawHTTPClient(port: limitedPort, receiveTimeoutSeconds: 5)
            let closed = try extra.waitForClose()
            withExtendedLifetime(held) {}
            return closed
        }
        XCTAssertTrue(overLimitClosed)
        await limited.stop()
    }
}
