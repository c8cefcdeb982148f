import Foundation
import RPCCore
import RPCRuntime
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The server's handshake and idle timeouts, with short values injected
/// through `RPCLimits`, on a real server on 127.0.0.1.
final class ConnectionTimeoutTests: XCTestCase {
    private func limits(handshake: Duration = .seconds(10), idle: Duration = .seconds(300)) -> RPCLimits {
        var limits = RPCLimits()
        limits.handshakeTimeout = handshake
        limits.idleTimeout = idle
        return limits
    }

    func testSilentSocketIsClosedAfterTheHandshakeTimeout() async throws {
        let (server, port) = try startTestServer(limits: limits(handshake: .milliseconds(300)))
        let waited = try await onDedicatedThread { try secondsUntilPeerCloses(port: port, sending: []) }
        let seconds = try XCTUnwrap(waited, "the server kept a socket that sent nothing")
        XCTAssertGreaterThanOrEqual(seconds, 0.25)
        XCTAssertLessThan(seconds, 4)
        try await waitForConnectionCount(server, 0)
        try await assertAnswers(port: port)
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testPrefaceWithoutSettingsIsClosedAfterTheHandshakeTimeout() async throws {
        let (server, port) = try startTestServer(limits: limits(handshake: .milliseconds(300)))
        let waited = try await onDedicatedThread {
            try secondsUntilPeerCloses(port: port, sending: RawHTTP2Client.preface)
        }
        let seconds = try XCTUnwrap(waited, "the server kept a socket that sent only the preface")
        XCTAssertLessThan(seconds, 4)
        try await waitForConnectionCount(server, 0)
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testSilentSocketOnTLSIsClosedAfterTheHandshakeTimeout() async throws {
        let (certificate, key) = try await TLSTests.makeCertificate()
        let (server, port) = try startTestServer(
            limits: limits(handshake: .milliseconds(300)),
            tls: .server(certificateChainPath: certificate, privateKeyPath: key))
        // No ClientHello ever comes.
        let waited = try await onDedicatedThread { try secondsUntilPeerCloses(port: port, sending: []) }
        let seconds = try XCTUnwrap(waited, "the TLS server kept a socket that sent nothing")
        XCTAssertLessThan(seconds, 4)
        try await waitForConnectionCount(server, 0)
        // A real TLS client after its handshake is not cut by the timer.
        let client = try makeTestClient(
            ports: [port], tls: TLSConfiguration(trustRootsPath: certificate, serverName: "localhost"))
        _ = try await client.unary(TestMethods.echo, request: RawMessage("tls"), responseType: RawMessage.self)
        try await Task.sleep(for: .milliseconds(600))
        let open = await server.connectionCount()
        XCTAssertEqual(open, 1, "a connection that finished its handshake outlives the handshake timeout")
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testIdleConnectionIsClosedAndTheClientReconnectsForTheNextCall() async throws {
        let (server, port) = try startTestServer(
            limits: limits(handshake: .milliseconds(200), idle: .milliseconds(700)))
        let client = try makeTestClient(ports: [port])
        let first = try await client.unary(TestMethods.echo, request: RawMessage("one"), responseType: RawMessage.self)
        XCTAssertEqual(first.message.text, "one")
        // Past the handshake timeout, within the idle one: still open.
        try await Task.sleep(for: .milliseconds(350))
        let openBefore = await server.connectionCount()
        XCTAssertEqual(openBefore, 1)

        // Idle past the timeout: GOAWAY, then closed.
        try await waitForConnectionCount(server, 0)

        // The next call finds the connection gone and opens a new one, with no error.
        let second = try await client.unary(TestMethods.echo, request: RawMessage("two"), responseType: RawMessage.self)
        XCTAssertEqual(second.message.text, "two")
        let openAfter = await server.connectionCount()
        XCTAssertEqual(openAfter, 1)
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testConnectionWithACallLongerThanTheIdleTimeoutStaysOpen() async throws {
        let (server, port) = try startTestServer(limits: limits(idle: .milliseconds(300)))
        let client = try makeTestClient(ports: [port])
        let response = try await client.unary(
            TestMethods.sleep, request: RawMessage("900"), responseType: RawMessage.self)
        XCTAssertEqual(response.message.text, "slept", "an open stream is not idle")
        try await waitForConnectionCount(server, 0)
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    /// Waits (bounded, 5 s) until the server has `expected` connections.
    private func waitForConnectionCount(
        _ server: RPCServer, _ expected: Int, file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        var count = await server.connectionCount()
        for _ in 0..<500 where count != expected {
            try await Task.sleep(for: .milliseconds(10))
            count = await server.connectionCount()
        }
        XCTAssertEqual(count, expected, file: file, line: line)
    }

    private func assertAnswers(port: Int) async throws {
        let client = try makeTestClient(ports: [port])
        let response = try await client.unary(
            TestMethods.echo, request: RawMessage("still here"), responseType: RawMessage.self)
        XCTAssertEqual(response.message.text, "still here")
        await client.close()
    }
}

/// Connects to 127.0.0.1:`port`, sends `bytes`, then reads (discarding)
/// until the server closes: the seconds that took, or nil when 5 s passed
/// without it. Blocking: call on a dedicated thread.
private func secondsUntilPeerCloses(port: Int, sending bytes: [UInt8]) throws -> Double? {
    let client = try RawHTTP2Client(port: port)  // 5 s receive timeout
    defer { client.close() }
    if !bytes.isEmpty { try client.send(bytes) }
    let start = ContinuousClock.now
    var buffer = [UInt8](repeating: 0, count: 4096)
    for _ in 0..<1000 {
        let count = buffer.withUnsafeMutableBytes { Glibc.recv(client.fd, $0.baseAddress, $0.count, 0) }
        if count > 0 { continue }
        // 0: the server's FIN; ECONNRESET: its close with our bytes unread.
        guard count == 0 || errno == ECONNRESET else { return nil }
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
    return nil
}
