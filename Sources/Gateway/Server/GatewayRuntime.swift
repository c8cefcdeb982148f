import HTTPServer
import Locking
import Logging
import Metrics
import RPCRuntime
import ServiceKit

/// The whole gateway process in one object: backend clients, the readiness
/// probe running in the background, the request pipeline and the server.
/// The server, both backend clients and the balance reads' calls share one
/// event loop thread, which the runtime owns: a request's parsing, its
/// backend call and its response run there without a hand-off between
/// threads (docs/ARCHITECTURE.md, "Tasks on a loop").
/// `main` runs one; end-to-end tests start one in-process:
///
///     let gateway = try GatewayRuntime(
///         listen: HostAndPort(host: "127.0.0.1", port: 0),
///         pointsTargets: [points], paymentsTargets: [payments],
///         verifier: verifier, emailIdentity: identity, logger: logger)
///     let port = try await gateway.start()
///     ...
///     await gateway.shutdown(gracePeriod: .seconds(5))
public final class GatewayRuntime: Sendable {
    public let backends: GatewayBackends
    public let readiness: ReadinessProbe
    public let application: GatewayApplication
    public let server: HTTPServer
    /// The server's and the backend clients' loop, stopped last.
    private let loop: EventLoop
    private let logger: Logger
    private let probeTask = Mutex<Task<Void, Never>?>(nil)

    public init(
        listen: HostAndPort,
        pointsTargets: [HostAndPort],
        paymentsTargets: [HostAndPort],
        verifier: JWTVerifier,
        emailIdentity: EmailIdentity,
        logger: Logger,
        connectionsMax: Int = HTTPServerLimits.connectionsMax,
        admission: AdmissionLimits = AdmissionLimits(),
        backendConfiguration: RPCClient.Configuration = .init(),
        paymentsBackendConfiguration: RPCClient.Configuration? = nil,
        tls: TLSConfiguration? = nil,
        metrics: GatewayMetrics? = nil
    ) throws {
        let loop = try EventLoop(name: "gateway")
        do {
            backends = try GatewayBackends(
                pointsTargets: pointsTargets, paymentsTargets: paymentsTargets, configuration: backendConfiguration,
                paymentsConfiguration: paymentsBackendConfiguration, loop: loop)
            readiness = ReadinessProbe(backends: backends, dependencies: metrics?.dependencies)
            application = GatewayApplication(
                preparer: RequestPreparer(verifier: verifier),
                executor: CommandExecutor(
                    backends: backends, emailIdentity: emailIdentity, readiness: readiness,
                    rpcMetrics: metrics?.rpcClient,
                    balanceReadsPerCall: metrics?.balanceReadsPerCall, callLoop: loop),
                logger: logger, metrics: metrics, admission: RequestAdmission(limits: admission))
            server = try HTTPServer(
                configuration: .init(
                    host: listen.host, port: listen.port, connectionsMax: connectionsMax, tls: tls,
                    bodyLimits: GatewayLimits.bodyLimits),
                responder: application, loop: loop)
        } catch {
            loop.stopSoon()
            throw error
        }
        self.loop = loop
        self.logger = logger
    }

    /// Starts the readiness probe and the listener; returns the bound port.
    @discardableResult
    public func start() async throws -> Int {
        let readiness = self.readiness
        let logger = self.logger
        let task = Task {
            await readiness.run { ready in
                logger.notice(ready ? "backends ready" : "backends not ready", ["detail": readiness.detail])
            }
        }
        probeTask.withLock { $0 = task }
        return try await server.start()
    }

    /// Turns /readyz to not ready, stops accepting, lets in-flight requests
    /// finish within `gracePeriod`, stops the probe, closes the backend
    /// clients and stops the loop.
    public func shutdown(gracePeriod: Duration) async {
        readiness.beginShutdown()
        await server.shutdown(gracePeriod: gracePeriod)
        let task = probeTask.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        await backends.close()
        await loop.shutdown()
    }
}
