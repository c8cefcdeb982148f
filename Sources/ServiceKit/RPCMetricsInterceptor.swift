import RPCCore
import Metrics
import RPCRuntime

/// Counts every RPC a service handles (`iap_rpc_server_requests_total` by
/// full method path and status name, `iap_rpc_server_request_duration_seconds`)
/// as a `Router` interceptor, so RPCRuntime knows nothing of metrics.
/// Register it before any other interceptor: it then also counts the calls
/// caller authorisation refuses (UNAUTHENTICATED, PERMISSION_DENIED).
/// Unregistered methods never reach a router's handlers and are not counted.
public struct RPCMetricsInterceptor: ServerInterceptor {
    /// The status names by code, made once (a code's `description` builds them per call).
    static let codeNames: [String] = RPCError.Code.all.map(\.description)

    public let metrics: RPCServerMetrics

    public init(metrics: RPCServerMetrics) { self.metrics = metrics }

    public func intercept(_ request: ServerRequest<[UInt8]>, next: Router.RawHandler) async throws -> ServerResponse<
        [UInt8]
    > {
        let startedAt = ContinuousClock.now
        do {
            let response = try await next(request)
            record(request, code: .ok, since: startedAt)
            return response
        } catch {
            record(request, code: RPCError.from(error).code, since: startedAt)
            throw error
        }
    }

    private func record(
        _ request: ServerRequest<[UInt8]>, code: RPCError.Code, since startedAt: ContinuousClock.Instant
    ) {
        metrics.record(
            method: request.context.method.path, code: Self.name(of: code), duration: ContinuousClock.now - startedAt)
    }

    /// The gRPC status name of `code` ("OK", "UNAVAILABLE"); `CODE_n` beyond the seventeen.
    public static func name(of code: RPCError.Code) -> String {
        codeNames.indices.contains(code.rawValue) ? codeNames[code.rawValue] : code.description
    }
}
