import Foundation
@testable import Gateway
import HTTPServer
import Logging
import Metrics
import RPCRuntime
import ServiceKit

/// A real HTTPServer on 127.0.0.1:0 in front of in-process backend
/// doubles, with its log lines captured in memory.
final class GatewayHarness: Sendable {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    static let emailHashKey = Array("email-hash-key-email-hash-key-0123456789".utf8)
    static let issuer = "https://auth.example.test"
    static let audience = "iap-credits"
    static let email = "Alice.Secret@Example.com"

    let doubles: BackendDoubles
    let backends: GatewayBackends
    /// The pipeline the server answers with.
    let application: GatewayApplication
    let readiness: ReadinessProbe
    let server: HTTPServer
    /// The server's and the clients' loop.
    let loop: EventLoop
    /// What the application counted (a registry of its own per harness).
    let metrics: GatewayMetrics
    let logs = MemorySink()
    let port: Int

    /// `admission` nil: no admission limits.
    static func start(
        configuration: HTTPServer.Configuration = .init(host: "127.0.0.1", port: 0), admission: RequestAdmission? = nil
    ) async throws -> GatewayHarness {
        let doubles = BackendDoubles.make()
        let ports = try doubles.start()
        return try await GatewayHarness(
            doubles: doubles, ports: ports, configuration: configuration, admission: admission)
    }

    private init(
        doubles: BackendDoubles, ports: (points: Int, payments: Int), configuration: HTTPServer.Configuration,
        admission: RequestAdmission?
    ) async throws {
        self.doubles = doubles
        // One loop for the server, both clients and the balance reads' calls, as in GatewayRuntime.
        loop = try EventLoop(name: "gateway-harness")
        backends = try GatewayBackends(
            pointsTargets: [HostAndPort(host: "127.0.0.1", port: ports.points)],
            paymentsTargets: [HostAndPort(host: "127.0.0.1", port: ports.payments)], loop: loop)
        metrics = try GatewayMetrics(registry: MetricsRegistry())
        readiness = ReadinessProbe(backends: backends, dependencies: metrics.dependencies)
        let keys = try JWTKeySet(hs256Secret: Self.secret, es256PublicKeyPEM: nil)
        let verifier = JWTVerifier(
            configuration: JWTVerifierConfiguration(keys: keys, issuer: Self.issuer, audience: Self.audience))
        application = GatewayApplication(
            preparer: RequestPreparer(verifier: verifier),
            executor: CommandExecutor(
                backends: backends, emailIdentity: try EmailIdentity(hashKey: Self.emailHashKey), readiness: readiness,
                callLoop: loop),
            logger: Logger(service: "gateway", minimumLevel: .debug, sink: logs), metrics: metrics, admission: admission
        )
        // The gateway's listener always has the gateway's body limits (the receipt route's larger one).
        var gatewayConfiguration = configuration
        gatewayConfiguration.bodyLimits = GatewayLimits.bodyLimits
        server = try HTTPServer(configuration: gatewayConfiguration, responder: application, loop: loop)
        port = try await server.start()
    }

    func stop() async {
        await server.shutdown(gracePeriod: .seconds(2))
        await backends.close()
        await loop.shutdown()
        await doubles.stop()
    }

    static func token(
        userId: String = BackendDoubles.ownerUserId, email: String = GatewayHarness.email, lifetimeSeconds: Int64 = 3600
    ) -> String {
        let minter = try! DevTokenMinter(secret: secret, issuer: issuer, audience: audience)
        return minter.mint(
            userId: userId, email: email, issuedAtSeconds: HTTPServerClock.unixSeconds(),
            lifetimeSeconds: lifetimeSeconds)
    }

    /// One request on a fresh connection.
    func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil) async throws
        -> RawResponse
    {
        let port = self.port
        return try await onDedicatedThread {
            let client = try RawHTTPClient(port: port)
            try client.send(Self.requestText(method, target, headers: headers, body: body))
            return try client.readResponse()
        }
    }

    static func requestText(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil, close: Bool = false
    ) -> String {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: gateway.test\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        if close { text += "Connection: close\r\n" }
        text += "\r\n"
        if let body { text += body }
        return text
    }

    static var bearer: (String, String) { ("Authorization", "Bearer \(token())") }

    static let signedTransactionInfo =
        "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2lnbmF0dXJlLWJ5dGVzLXNlY3JldA"

    static func verifyBody(transactionId: String = "1000000123456789") -> String {
        #"{"productCode":"starter_pack","appStoreProductId":"com.meeyao.qianwen.starter_pack","transactionId":""#
            + transactionId + #"","signedTransactionInfo":""# + signedTransactionInfo
            + #"","appAccountToken":"7C4C7A82-2F6F-4E70-B57A-8B0A7F2E9B72"}"#
    }

    /// Waits (bounded) until the readiness probe reports `ready`.
    func awaitReadiness(_ ready: Bool) async -> Bool {
        for _ in 0..<50 {
            if await readiness.probeOnce() == ready { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
