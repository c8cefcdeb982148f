import HTTPServer
import Metrics
import RPCRuntime

/// The admin listener of one process: `AdminResponder` on an `HTTPServer`
/// of its own (HTTP/1.1 and h2c, plaintext), separate from the public or
/// gRPC port so scrapes and probes never compete with traffic and the
/// gateway's public port never exposes /metrics. Bind it to a private
/// address: it has no authentication.
public final class AdminServer: Sendable {
    public let server: HTTPServer

    public init(listen: HostAndPort, registry: MetricsRegistry, readiness: @escaping @Sendable () -> AdminReadiness)
        throws
    {
        server = try HTTPServer(
            configuration: .init(
                host: listen.host, port: listen.port, connectionsMax: AdminLimits.connectionsMax,
                bodyLimits: HTTPBodyLimits(defaultBytesMax: AdminLimits.requestBodyBytesMax)),
            responder: AdminResponder(registry: registry, readiness: readiness))
    }

    /// Binds and starts serving; returns the bound port (port 0 picks one).
    @discardableResult
    public func start() async throws -> Int { try await server.start() }

    /// Stops accepting and closes the connections (scrapes in flight get
    /// `AdminLimits.shutdownGrace`).
    public func shutdown() async {
        await server.shutdown(gracePeriod: AdminLimits.shutdownGrace)
    }
}
