import HTTPServer
import Foundation
import RPCRuntime
import ServiceKit
import TestSupport
import XCTest
@testable import Gateway

/// The public port with TLS: ALPN picks HTTP/2 or HTTP/1.1, plaintext
/// clients are refused without harming the server. Driven by curl over
/// loopback against a self-signed certificate made with the openssl CLI.
final class GatewayServerTLSTests: XCTestCase {
    /// A fresh directory holding cert.pem and key.pem for 127.0.0.1.
    private struct Credentials {
        let directory: URL
        var certificatePath: String { directory.appendingPathComponent("cert.pem").path }
        var keyPath: String { directory.appendingPathComponent("key.pem").path }
    }

    private struct CurlResult: Sendable {
        let exitStatus: Int32
        /// What `-w` printed ("<http_version> <status>") plus any error text.
        let summary: String
        let body: String
    }

    private func makeCredentials() async throws -> Credentials {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gwtls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let credentials = Credentials(directory: directory)
        let certificate = credentials.certificatePath
        let key = credentials.keyPath
        let status = try await onDedicatedThread {
            try Command.run([
                "/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        }
        XCTAssertEqual(status, 0, "openssl req")
        return credentials
    }

    private func curl(_ arguments: [String], in directory: URL) async throws -> CurlResult {
        let output = directory.appendingPathComponent("curl-\(UUID().uuidString).out").path
        let body = directory.appendingPathComponent("curl-\(UUID().uuidString).body").path
        let status = try await onDedicatedThread {
            try Command.run(
                ["/usr/bin/curl", "-sS", "--max-time", "10", "-o", body, "-w", "%{http_version} %{http_code}"]
                    + arguments,
                outputPath: output)
        }
        let summary = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let bodyText = (try? String(contentsOfFile: body, encoding: .utf8)) ?? ""
        return CurlResult(exitStatus: status, summary: summary, body: bodyText)
    }

    private func startTLSHarness(_ credentials: Credentials) async throws -> GatewayHarness {
        try await GatewayHarness.start(
            configuration: .init(
                host: "127.0.0.1", port: 0,
                tls: .server(certificateChainPath: credentials.certificatePath, privateKeyPath: credentials.keyPath)))
    }

    func testALPNSelectsHTTP2OrHTTP1AndNoALPNMeansHTTP1() async throws {
        let credentials = try await makeCredentials()
        defer { try? FileManager.default.removeItem(at: credentials.directory) }
        let harness = try await startTLSHarness(credentials)
        let url = "https://127.0.0.1:\(harness.port)/healthz"
        let base = ["--cacert", credentials.certificatePath]

        let h2 = try await curl(base + ["--http2", url], in: credentials.directory)
        XCTAssertEqual(h2.exitStatus, 0, h2.summary)
        XCTAssertEqual(h2.summary, "2 200")
        XCTAssertTrue(h2.body.contains("\"ok\""), h2.body)

        let h1 = try await curl(base + ["--http1.1", url], in: credentials.directory)
        XCTAssertEqual(h1.exitStatus, 0, h1.summary)
        XCTAssertEqual(h1.summary, "1.1 200")
        XCTAssertTrue(h1.body.contains("\"ok\""), h1.body)

        let noALPN = try await curl(base + ["--no-alpn", url], in: credentials.directory)
        XCTAssertEqual(noALPN.exitStatus, 0, noALPN.summary)
        XCTAssertEqual(noALPN.summary, "1.1 200")

        // The certificate is really checked: without the CA curl refuses it.
        let untrusted = try await curl([url], in: credentials.directory)
        XCTAssertNotEqual(untrusted.exitStatus, 0)
        await harness.stop()
    }

    func testPlaintextClientIsRefusedAndTheServerStaysUp() async throws {
        let credentials = try await makeCredentials()
        defer { try? FileManager.default.removeItem(at: credentials.directory) }
        let harness = try await startTLSHarness(credentials)
        let port = harness.port

        let plain = try await curl(["http://127.0.0.1:\(port)/healthz"], in: credentials.directory)
        XCTAssertNotEqual(plain.exitStatus, 0, "plaintext HTTP/1.1 must not be answered: \(plain.summary)")
        let h2c = try await curl(
            ["--http2-prior-knowledge", "http://127.0.0.1:\(port)/healthz"], in: credentials.directory)
        XCTAssertNotEqual(h2c.exitStatus, 0, "h2c must not be answered: \(h2c.summary)")
        // A raw plaintext request: the connection ends without an HTTP response.
        let closedWithoutResponse = try await onDedicatedThread { () -> Bool in
            let client = try RawHTTPClient(port: port)
            try client.send(GatewayHarness.requestText("GET", "/healthz"))
            return (try? client.readResponse()) == nil
        }
        XCTAssertTrue(closedWithoutResponse)

        let after = try await curl(
            ["--cacert", credentials.certificatePath, "https://127.0.0.1:\(port)/healthz"], in: credentials.directory)
        XCTAssertEqual(after.exitStatus, 0, after.summary)
        XCTAssertTrue(after.summary.hasSuffix(" 200"), after.summary)
        await harness.stop()
    }

    func testAStalledHandshakeIsClosedAfterTheHandshakeTimeout() async throws {
        let credentials = try await makeCredentials()
        defer { try? FileManager.default.removeItem(at: credentials.directory) }
        let harness = try await GatewayHarness.start(
            configuration: .init(
                host: "127.0.0.1", port: 0,
                tls: .server(certificateChainPath: credentials.certificatePath, privateKeyPath: credentials.keyPath),
                tlsHandshakeTimeoutMilliseconds: 200))
        let port = harness.port
        // Connects and never says anything: the server must hang up (the
        // client's own receive timeout, 20 s, would throw instead).
        let closed = try await onDedicatedThread { () -> Bool in
            let client = try RawHTTPClient(port: port)
            return try client.waitForClose()
        }
        XCTAssertTrue(closed)
        let after = try await curl(
            ["--cacert", credentials.certificatePath, "https://127.0.0.1:\(port)/healthz"], in: credentials.directory)
        XCTAssertEqual(after.exitStatus, 0, after.summary)
        await harness.stop()
    }

    func testAuthenticatedRouteOverTLSWithBothProtocols() async throws {
        let credentials = try await makeCredentials()
        defer { try? FileManager.default.removeItem(at: credentials.directory) }
        let harness = try await startTLSHarness(credentials)
        let url = "https://127.0.0.1:\(harness.port)/api/v1/points/balance"
        let bearer = GatewayHarness.bearer
        let base = ["--cacert", credentials.certificatePath, "-H", "\(bearer.0): \(bearer.1)"]
        for (flag, version) in [("--http2", "2"), ("--http1.1", "1.1")] {
            let result = try await curl(base + [flag, url], in: credentials.directory)
            XCTAssertEqual(result.exitStatus, 0, result.summary)
            XCTAssertEqual(result.summary, "\(version) 200", result.body)
            XCTAssertTrue(result.body.contains("balance"), result.body)
        }
        let anonymous = try await curl(
            ["--cacert", credentials.certificatePath, "--http2", url], in: credentials.directory)
        XCTAssertEqual(anonymous.summary, "2 401")
        await harness.stop()
    }

    /// HTTP/2 inside TLS only by ALPN "h2" (RFC 9113 3.3): a client that
    /// agreed on http/1.1 and then sends the HTTP/2 preface is read as
    /// HTTP/1.1 (and refused), never answered with HTTP/2 SETTINGS.
    func testThePrefaceAfterALPNHTTP1IsNotHTTP2() async throws {
        let credentials = try await makeCredentials()
        defer { try? FileManager.default.removeItem(at: credentials.directory) }
        let harness = try await GatewayHarness.start(
            configuration: .init(
                host: "127.0.0.1", port: 0, http2IdleTimeoutMilliseconds: 1_000,
                tls: .server(certificateChainPath: credentials.certificatePath, privateKeyPath: credentials.keyPath)))
        let input = credentials.directory.appendingPathComponent("preface.bin").path
        let output = credentials.directory.appendingPathComponent("preface.out").path
        let errors = credentials.directory.appendingPathComponent("preface.err").path
        // The preface and an empty SETTINGS frame.
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0]
        try Data(preface).write(to: URL(fileURLWithPath: input))
        // s_client -quiet keeps the connection after its input ends, until
        // the server closes it (or `timeout` ends it).
        let command =
            "exec /usr/bin/timeout 20 /usr/bin/openssl s_client -connect 127.0.0.1:\(harness.port) "
            + "-alpn http/1.1 -quiet -CAfile \(credentials.certificatePath) < \(input)"
        let status = try await onDedicatedThread {
            try Command.run(["/bin/sh", "-c", command], outputPath: output, errorPath: errors)
        }
        let answer = (try? Data(contentsOf: URL(fileURLWithPath: output))).map { [UInt8]($0) } ?? []
        let text = String(decoding: answer, as: UTF8.self)
        XCTAssertNotEqual(status, 124, "the server closed the connection itself")
        XCTAssertTrue(
            text.hasPrefix("HTTP/1.1 4") || text.hasPrefix("HTTP/1.1 5"),
            "an HTTP/1.1 refusal, not HTTP/2: \(answer.prefix(40))")
        await harness.stop()
    }

    /// An HTTP/2 connection over TLS that the server ends (idle here) says
    /// so with close_notify before its TCP end, so the client can tell a
    /// finished connection from a cut one (OpenSSL 3 reports an end
    /// without it as an error: "unexpected eof while reading").
    func testAnHTTP2ConnectionOverTLSEndsWithCloseNotify() async throws {
        let credentials = try await makeCredentials()
        defer { try? FileManager.default.removeItem(at: credentials.directory) }
        let harness = try await GatewayHarness.start(
            configuration: .init(
                host: "127.0.0.1", port: 0, http2IdleTimeoutMilliseconds: 300,
                tls: .server(certificateChainPath: credentials.certificatePath, privateKeyPath: credentials.keyPath)))
        let port = harness.port
        let certificate = credentials.certificatePath
        let outcome = try await onDedicatedThread { () -> String in
            try Self.readUntilTheServerEnds(port: port, trustRootsPath: certificate)
        }
        XCTAssertEqual(outcome, "close_notify")
        await harness.stop()
    }

    /// Connects over TLS with ALPN h2, sends the preface and SETTINGS, and
    /// reads until the server ends the connection: "close_notify" for a
    /// TLS end, else what happened. Blocking, bounded (10 s of waits).
    private static func readUntilTheServerEnds(port: Int, trustRootsPath: String) throws -> String {
        func wait(_ fd: Int32, for events: Int16) -> Bool {
            var entry = pollfd(fd: fd, events: events, revents: 0)
            return poll(&entry, 1, 100) > 0
        }
        let context = try TLSClientContext(trustRootsPath: trustRootsPath, serverName: "127.0.0.1")
        let (socket, connected) = try ConnectedSocket.connect(host: "127.0.0.1", port: port)
        defer { socket.close() }
        if !connected {
            guard wait(socket.descriptor, for: Int16(POLLOUT)), socket.finishConnect() == nil else {
                return "no connection"
            }
        }
        try socket.startClientTLS(context)
        var handshaken = false
        for _ in 0..<100 where !handshaken {
            switch socket.continueTLSHandshake() {
            case .complete: handshaken = true
            case .wantsReadable: _ = wait(socket.descriptor, for: Int16(POLLIN))
            case .wantsWritable: _ = wait(socket.descriptor, for: Int16(POLLOUT))
            case .failed(let reason): return "handshake failed: \(reason)"
            }
        }
        guard handshaken, socket.negotiatedProtocol == "h2" else { return "no h2 handshake" }
        var output = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0]
        for _ in 0..<100 where !output.isEmpty {
            switch output.withUnsafeBytes({ socket.write($0) }) {
            case .wrote(let count): output.removeFirst(count)
            case .wouldBlock: _ = wait(socket.descriptor, for: Int16(POLLOUT))
            case .failed(let errorNumber): return "write failed: \(errorNumber)"
            }
        }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<100 {
            switch buffer.withUnsafeMutableBytes({ socket.read(into: $0) }) {
            case .bytes: continue
            case .wouldBlock: _ = wait(socket.descriptor, for: Int16(POLLIN))
            case .endOfStream: return "close_notify"
            case .failed(let errorNumber): return "ended without close_notify (errno \(errorNumber))"
            }
        }
        return "still open"
    }

    func testSettingsReadTheCertificateAndKeyTogether() throws {
        func settings(_ arguments: [String], _ environment: [String: String] = [:]) throws -> GatewaySettings {
            try GatewaySettings(
                options: CommandLineOptions(
                    specs: GatewaySettings.specs, arguments: arguments,
                    environment: environment.merging(["INTERNAL_AUTH": "off"]) { $1 }))
        }
        XCTAssertNil(try settings([]).tls)
        let fromFlags = try settings(["--tls-cert", "/c.pem", "--tls-key", "/k.pem"]).tls
        XCTAssertEqual(fromFlags, .server(certificateChainPath: "/c.pem", privateKeyPath: "/k.pem"))
        let fromEnvironment = try settings([], ["TLS_CERT": "/c2.pem", "TLS_KEY": "/k2.pem"]).tls
        XCTAssertEqual(fromEnvironment, .server(certificateChainPath: "/c2.pem", privateKeyPath: "/k2.pem"))
        XCTAssertThrowsError(try settings(["--tls-cert", "/c.pem"]))
        XCTAssertThrowsError(try settings([], ["TLS_KEY": "/k.pem"]))
        let help = try CommandLineOptions(specs: GatewaySettings.specs, arguments: [], environment: [:])
            .helpText(program: "Gateway", summary: "x")
        for name in ["--tls-cert", "TLS_CERT", "--tls-key", "TLS_KEY"] { XCTAssertTrue(help.contains(name), name) }
    }

    func testAMissingKeyFileFailsAtConstruction() async throws {
        let credentials = try await makeCredentials()
        defer { try? FileManager.default.removeItem(at: credentials.directory) }
        XCTAssertThrowsError(
            try HTTPServer(
                configuration: .init(
                    host: "127.0.0.1", port: 0,
                    tls: .server(
                        certificateChainPath: credentials.certificatePath,
                        privateKeyPath: credentials.keyPath + ".missing")),
                responder: RefusingResponder()))
    }
}

/// A responder the failing-construction test never reaches.
private struct RefusingResponder: HTTPResponder {
    func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse {
        HTTPResponse(status: 500)
    }

    func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse {
        HTTPResponse(status: 400)
    }
}
