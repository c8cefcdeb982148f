import Foundation
import RPCRuntime
import XCTest

/// TLS with ALPN "h2" between the Swift client and server.
final class TLSTests: XCTestCase {
    /// Makes a throwaway self-signed certificate for 127.0.0.1/localhost with the openssl CLI.
    static func makeCertificate() async throws -> (certificate: String, key: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rpc-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let status = try await onDedicatedThread { () -> Int32 in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-days", "1", "-keyout", key, "-out", certificate,
            ]
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        XCTAssertEqual(status, 0, "openssl could not make a test certificate")
        return (certificate, key)
    }

    func testUnaryOverTLSWithALPN() async throws {
        let (certificate, key) = try await Self.makeCertificate()
        let (server, port) = try startTestServer(tls: .server(certificateChainPath: certificate, privateKeyPath: key))
        let client = try makeTestClient(
            ports: [port], tls: TLSConfiguration(trustRootsPath: certificate, serverName: "localhost"))
        let response = try await client.unary(
            TestMethods.echo, request: RawMessage("secret-free hello"), responseType: RawMessage.self)
        XCTAssertEqual(response.message.text, "secret-free hello")
        let error = await expectRPCError {
            _ = try await client.unary(TestMethods.fail, request: RawMessage("5"), responseType: RawMessage.self)
        }
        XCTAssertEqual(error?.code, .notFound)
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testClientRejectsUntrustedServerCertificate() async throws {
        let (certificate, key) = try await Self.makeCertificate()
        let (other, _) = try await Self.makeCertificate()
        let (server, port) = try startTestServer(tls: .server(certificateChainPath: certificate, privateKeyPath: key))
        let client = try makeTestClient(
            ports: [port], tls: TLSConfiguration(trustRootsPath: other, serverName: "localhost"))
        let error = await expectRPCError {
            _ = try await client.unary(
                TestMethods.echo, request: RawMessage("x"), responseType: RawMessage.self, timeout: .seconds(5))
        }
        XCTAssertEqual(error?.code, .unavailable)
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testPlaintextClientAgainstTLSServerFailsAndServerSurvives() async throws {
        let (certificate, key) = try await Self.makeCertificate()
        let (server, port) = try startTestServer(tls: .server(certificateChainPath: certificate, privateKeyPath: key))
        let plain = try makeTestClient(ports: [port])
        let error = await expectRPCError {
            _ = try await plain.unary(
                TestMethods.echo, request: RawMessage("x"), responseType: RawMessage.self, timeout: .seconds(5))
        }
        XCTAssertNotNil(error)
        await plain.close()
        let client = try makeTestClient(
            ports: [port], tls: TLSConfiguration(trustRootsPath: certificate, serverName: "localhost"))
        let response = try await client.unary(
            TestMethods.echo, request: RawMessage("ok"), responseType: RawMessage.self)
        XCTAssertEqual(response.message.text, "ok")
        await client.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
