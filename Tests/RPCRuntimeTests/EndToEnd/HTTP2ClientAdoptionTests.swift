import Foundation
import RPCCore
import RPCRuntime
import Synchronization
import XCTest

/// The pieces a client outside RPCRuntime builds on: `ConnectedSocket.connect`,
/// `startClientTLS` with a `TLSClientContext`, and `HTTP2Connection.client`.
final class HTTP2ClientAdoptionTests: XCTestCase {
    /// Answers each request with 200 and the request's path as body.
    private final class PathEcho: HTTP2StreamDelegate {
        private var path = ""
        func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {
            path = headers.first(named: ":path") ?? ""
            if endStream { respond(stream) }
        }
        func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) {
            if endStream { respond(stream) }
        }
        func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {}
        private func respond(_ stream: HTTP2Stream) {
            stream.sendHeaders([HTTPHeaderField(name: ":status", value: "200")], endStream: false)
            stream.sendData(Array(path.utf8), endStream: true)
        }
    }

    /// Collects one response on the loop and hands it to a continuation.
    private final class Collector: HTTP2StreamDelegate {
        var status: String?
        var body: [UInt8] = []
        let done: (Result<(String, String), any Error>) -> Void
        init(done: @escaping (Result<(String, String), any Error>) -> Void) { self.done = done }
        func streamDidReceiveHeaders(_ stream: HTTP2Stream, headers: [HTTPHeaderField], endStream: Bool) {
            status = status ?? headers.first(named: ":status")
        }
        func streamDidReceiveData(_ stream: HTTP2Stream, bytes: [UInt8], endStream: Bool) { body += bytes }
        func streamDidClose(_ stream: HTTP2Stream, errorCode: UInt32) {
            if errorCode == 0, let status {
                done(.success((status, String(decoding: body, as: UTF8.self))))
            } else {
                done(.failure(SystemError(call: "stream closed \(errorCode)", errorNumber: 0)))
            }
        }
    }

    private struct HandshakeRefused: Error { let reason: String }

    /// Connects, runs the TLS handshake, adopts the socket as an HTTP/2
    /// client and sends GET `path`; returns (status, body).
    private func get(port: Int, context: TLSClientContext, path: String, loop: EventLoop) async throws -> (
        String, String
    ) {
        let once = Mutex(false)
        return try await withCheckedThrowingContinuation { continuation in
            let finish: @Sendable (Result<(String, String), any Error>) -> Void = { result in
                guard
                    once.withLock({ flag in
                        defer { flag = true }; return !flag
                    })
                else { return }
                continuation.resume(with: result)
            }
            loop.execute {
                do {
                    let (socket, connected) = try ConnectedSocket.connect(host: "127.0.0.1", port: port)
                    func adopt() {
                        do {
                            let connection = try HTTP2Connection.client(adopting: socket, loop: loop, limits: .default)
                            let collector = Collector { result in
                                finish(result)
                                connection.close()
                            }
                            // The collector's closure holds the connection until the answer (a cycle close() breaks).
                            let headers = [
                                HTTPHeaderField(name: ":method", value: "GET"),
                                HTTPHeaderField(name: ":scheme", value: "https"),
                                HTTPHeaderField(name: ":path", value: path),
                                HTTPHeaderField(name: ":authority", value: "localhost"),
                            ]
                            if connection.startRequest(headers: headers, body: nil, delegate: collector) == nil {
                                finish(.failure(SystemError(call: "startRequest", errorNumber: 0)))
                            }
                        } catch { finish(.failure(error)) }
                    }
                    func handshake() {
                        switch socket.continueTLSHandshake() {
                        case .complete:
                            loop.unregister(fd: socket.descriptor)
                            XCTAssertEqual(socket.negotiatedProtocol, "h2")
                            adopt()
                        case .wantsReadable: try? loop.modify(fd: socket.descriptor, events: .readable)
                        case .wantsWritable: try? loop.modify(fd: socket.descriptor, events: .writable)
                        case .failed(let reason):
                            loop.unregister(fd: socket.descriptor)
                            socket.close()
                            finish(.failure(HandshakeRefused(reason: reason)))
                        }
                    }
                    try loop.register(fd: socket.descriptor, events: .writable) { _ in
                        if !socket.isTLS {
                            if let error = socket.finishConnect() { return finish(.failure(error)) }
                            do { try socket.startClientTLS(context) } catch { return finish(.failure(error)) }
                        }
                        handshake()
                    }
                    _ = connected
                } catch { finish(.failure(error)) }
            }
        }
    }

    private func startServer(certificate: String, key: String) throws -> (HTTP2Server, Int) {
        let server = try HTTP2Server(
            configuration: .init(tls: .server(certificateChainPath: certificate, privateKeyPath: key))
        ) { _ in PathEcho() }
        return (server, try server.start())
    }

    func testClientOverAdoptedTLSSocketGetsAnswer() async throws {
        let (certificate, key) = try await TLSTests.makeCertificate()
        let (server, port) = try startServer(certificate: certificate, key: key)
        let loop = try EventLoop(name: "adopt-test")
        let context = try TLSClientContext(trustRootsPath: certificate, serverName: "localhost")
        let (status, body) = try await get(port: port, context: context, path: "/inApps/v1/x", loop: loop)
        XCTAssertEqual(status, "200")
        XCTAssertEqual(body, "/inApps/v1/x")
        await loop.shutdown()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testUntrustedCertificateIsRefusedWithReason() async throws {
        let (certificate, key) = try await TLSTests.makeCertificate()
        let (other, _) = try await TLSTests.makeCertificate()
        let (server, port) = try startServer(certificate: certificate, key: key)
        let loop = try EventLoop(name: "adopt-test")
        let context = try TLSClientContext(trustRootsPath: other, serverName: "localhost")
        do {
            _ = try await get(port: port, context: context, path: "/", loop: loop)
            XCTFail("an untrusted certificate was accepted")
        } catch let refused as HandshakeRefused {
            XCTAssertTrue(refused.reason.contains("certificate verify failed"), refused.reason)
        }
        await loop.shutdown()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testWrongHostNameIsRefusedWithReason() async throws {
        let (certificate, key) = try await TLSTests.makeCertificate()
        let (server, port) = try startServer(certificate: certificate, key: key)
        let loop = try EventLoop(name: "adopt-test")
        let context = try TLSClientContext(trustRootsPath: certificate, serverName: "api.storekit.apple.com")
        do {
            _ = try await get(port: port, context: context, path: "/", loop: loop)
            XCTFail("a certificate for another host was accepted")
        } catch let refused as HandshakeRefused {
            XCTAssertTrue(refused.reason.contains("hostname mismatch"), refused.reason)
        }
        await loop.shutdown()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testClientContextRequiresServerName() {
        XCTAssertThrowsError(try TLSClientContext(trustRootsPath: nil, serverName: ""))
    }

    func testConnectToClosedPortReportsError() async throws {
        let loop = try EventLoop(name: "adopt-test")
        // Port 1 on loopback: nothing listens there, so the connect is refused.
        let error: SystemError? = await withCheckedContinuation { continuation in
            loop.execute {
                do {
                    let (socket, connected) = try ConnectedSocket.connect(host: "127.0.0.1", port: 1)
                    if connected { return continuation.resume(returning: nil) }
                    try loop.register(fd: socket.descriptor, events: .writable) { _ in
                        loop.unregister(fd: socket.descriptor)
                        continuation.resume(returning: socket.finishConnect())
                        socket.close()
                    }
                } catch let error as SystemError {
                    continuation.resume(returning: error)
                } catch {
                    continuation.resume(returning: SystemError(call: "unexpected", errorNumber: 0))
                }
            }
        }
        XCTAssertEqual(error?.errorNumber, ECONNREFUSED)
        await loop.shutdown()
    }
}
