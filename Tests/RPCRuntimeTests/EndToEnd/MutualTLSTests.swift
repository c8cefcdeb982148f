import Foundation
import RPCCore
import RPCRuntime
import TestSupport
import XCTest

/// Mutual TLS over real sockets on 127.0.0.1: the server verifies client
/// certificates against a client CA and hands the caller's names to
/// handlers and interceptors; the client presents its certificate and
/// checks the server's name.
final class MutualTLSTests: XCTestCase {
    static let whoAmI = MethodDescriptor(service: "test.v1.Peer", method: "WhoAmI")
    static let secret = MethodDescriptor(service: "test.v1.Peer", method: "Secret")

    private var pki: InternalTestPKI!
    private var stranger: InternalTestPKI!

    override func setUp() async throws {
        pki = try await InternalTestPKI.makeOffPool([
            "server", "payments", "gateway", "cn-only=", "uri=URI:spiffe://iap-credits/payments",
        ])
        // Same names, another CA: the server must not trust it.
        stranger = try await InternalTestPKI.makeOffPool(["payments"])
    }

    override func tearDown() async throws {
        pki?.remove()
        stranger?.remove()
    }

    /// Answers the caller's names ("-" without an identity) and its CN.
    private func router(interceptor: (any ServerInterceptor)? = nil, probe: HandlerProbe = HandlerProbe()) -> Router {
        var router = Router()
        router.registerUnary(Self.whoAmI, requestType: RawMessage.self, responseType: RawMessage.self) { request in
            guard let peer = request.context.peerIdentity else { return ServerResponse(message: RawMessage("-")) }
            return ServerResponse(message: RawMessage("\(peer.names.joined(separator: ","))|\(peer.commonName ?? "")"))
        }
        router.registerUnary(Self.secret, requestType: RawMessage.self, responseType: RawMessage.self) { _ in
            probe.completed.withLock { $0 += 1 }
            return ServerResponse(message: RawMessage("secret"))
        }
        if let interceptor { router.intercept(with: interceptor) }
        return router
    }

    private func startServer(_ router: Router, certificate: String = "server") throws -> (RPCServer, Int) {
        let tls = TLSConfiguration.server(
            certificateChainPath: pki.certificatePath(certificate), privateKeyPath: pki.keyPath(certificate),
            clientCertificateTrustRootsPath: pki.caPath)
        let server = RPCServer(
            configuration: .init(listen: .init(host: "127.0.0.1", port: 0), tls: tls), router: router)
        return (server, try server.start())
    }

    /// A client trusting our CA, checking the server's name, presenting `identity` from `authority`.
    private func client(port: Int, identity: String?, authority: InternalTestPKI? = nil, serverName: String = "server")
        throws -> RPCClient
    {
        let issuer = authority ?? pki!
        let tls = TLSConfiguration.client(
            trustRootsPath: pki.caPath, serverName: serverName,
            certificateChainPath: identity.map(issuer.certificatePath), privateKeyPath: identity.map(issuer.keyPath))
        return try makeTestClient(ports: [port], tls: tls)
    }

    private func whoAmI(_ client: RPCClient) async throws -> String {
        try await client.unary(
            Self.whoAmI, request: RawMessage(""), responseType: RawMessage.self, timeout: .seconds(10)
        ).message.text
    }

    func testHandlersSeeTheVerifiedSubjectAlternativeNames() async throws {
        let (server, port) = try startServer(router())
        for (identity, expected) in [
            ("payments", "payments|payments"), ("gateway", "gateway|gateway"),
            ("uri", "spiffe://iap-credits/payments|uri"),
            // A CN alone is no identity: nothing for authorisation to match.
            ("cn-only", "|cn-only"),
        ] {
            let caller = try client(port: port, identity: identity)
            let answer = try await whoAmI(caller)
            XCTAssertEqual(answer, expected, identity)
            // Many calls on one connection: the identity is the connection's.
            let again = try await whoAmI(caller)
            XCTAssertEqual(again, expected, identity)
            await caller.close()
        }
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testACallerWithoutACertificateGetsThroughWithoutAnIdentity() async throws {
        let (server, port) = try startServer(router())
        let anonymous = try client(port: port, identity: nil)
        let answer = try await whoAmI(anonymous)
        XCTAssertEqual(answer, "-")
        await anonymous.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testACertificateFromAnotherCAFailsTheHandshakeAndTheServerSurvives() async throws {
        let (server, port) = try startServer(router())
        let impostor = try client(port: port, identity: "payments", authority: stranger)
        let error = await expectRPCError { _ = try await self.whoAmI(impostor) }
        XCTAssertEqual(error?.code, .unavailable)
        await impostor.close()
        let genuine = try client(port: port, identity: "payments")
        let answer = try await whoAmI(genuine)
        XCTAssertEqual(answer, "payments|payments")
        await genuine.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    func testTheClientRefusesAServerWithAnotherName() async throws {
        let (server, port) = try startServer(router())
        // The server's certificate says "server"; a client expecting "points" must not talk to it.
        let misdirected = try client(port: port, identity: "payments", serverName: "points")
        let error = await expectRPCError { _ = try await self.whoAmI(misdirected) }
        XCTAssertEqual(error?.code, .unavailable)
        await misdirected.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }

    /// The expected name must be one of the server certificate's DNS names:
    /// a certificate of the same CA whose subject CN is that name, with no
    /// DNS name (CN-only, or URI-only as SPIFFE certificates are), is
    /// refused. OpenSSL's host check falls back to the CN otherwise.
    func testTheClientNeverTakesTheServersCommonNameForItsName() async throws {
        for certificate in ["cn-only", "uri"] {
            let (server, port) = try startServer(router(), certificate: certificate)
            let impostor = try client(port: port, identity: "payments", serverName: certificate)
            let error = await expectRPCError { _ = try await self.whoAmI(impostor) }
            XCTAssertEqual(error?.code, .unavailable, certificate)
            await impostor.close()
            await server.shutdown(gracePeriod: .seconds(1))
        }
    }

    func testAClientCertificateNeedsItsKey() throws {
        let tls = TLSConfiguration(
            certificateChainPath: pki.certificatePath("payments"), trustRootsPath: pki.caPath, serverName: "server")
        XCTAssertThrowsError(
            try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: 1)], configuration: .init(tls: tls)))
        let mismatched = TLSConfiguration.client(
            trustRootsPath: pki.caPath, serverName: "server",
            certificateChainPath: pki.certificatePath("payments"), privateKeyPath: pki.keyPath("gateway"))
        XCTAssertThrowsError(
            try RPCClient(targets: [HostAndPort(host: "127.0.0.1", port: 1)], configuration: .init(tls: mismatched)))
    }

    func testAnInterceptorSeesTheIdentityAndRefusesBeforeTheHandler() async throws {
        let probe = HandlerProbe()
        let (server, port) = try startServer(router(interceptor: OnlyPayments(), probe: probe))
        let payments = try client(port: port, identity: "payments")
        let allowed = try await payments.unary(
            Self.secret, request: RawMessage(""), responseType: RawMessage.self, timeout: .seconds(10))
        XCTAssertEqual(allowed.message.text, "secret")
        XCTAssertEqual(probe.count(.completed), 1)
        for identity in ["gateway", "cn-only", nil] as [String?] {
            let caller = try client(port: port, identity: identity)
            let error = await expectRPCError {
                _ = try await caller.unary(
                    Self.secret, request: RawMessage(""), responseType: RawMessage.self, timeout: .seconds(10))
            }
            XCTAssertEqual(
                error?.code, identity == nil ? .unauthenticated : .permissionDenied, identity ?? "no certificate")
            await caller.close()
        }
        XCTAssertEqual(probe.count(.completed), 1, "the handler never ran for a refused caller")
        await payments.close()
        await server.shutdown(gracePeriod: .seconds(1))
    }
}

/// Lets only callers named "payments" through.
private struct OnlyPayments: ServerInterceptor {
    func intercept(_ request: ServerRequest<[UInt8]>, next: Router.RawHandler) async throws -> ServerResponse<[UInt8]> {
        guard let peer = request.context.peerIdentity else {
            throw RPCError(code: .unauthenticated, message: "no certificate")
        }
        guard peer.names.contains("payments") else { throw RPCError(code: .permissionDenied, message: "not payments") }
        return try await next(request)
    }
}
