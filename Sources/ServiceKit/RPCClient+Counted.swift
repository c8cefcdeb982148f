import Contracts
import Metrics
import RPCRuntime

extension RPCClient {
    /// `call(method, request, ...)`, counted in `metrics` when given
    /// (`iap_rpc_client_requests_total` by full method path and the status
    /// name the call ended with, `iap_rpc_client_request_duration_seconds`).
    public func call<Request, Response>(
        _ method: UnaryMethod<Request, Response>, _ request: Request, metadata: Metadata = [:], timeout: Duration? = nil,
        countedIn metrics: RPCClientMetrics?
    ) async throws -> Response {
        guard let metrics else { return try await call(method, request, metadata: metadata, timeout: timeout) }
        let startedAt = ContinuousClock.now
        do {
            let response = try await call(method, request, metadata: metadata, timeout: timeout)
            metrics.record(method: method.descriptor.path, code: RPCMetricsInterceptor.name(of: .ok), duration: ContinuousClock.now - startedAt)
            return response
        } catch {
            let code = RPCMetricsInterceptor.name(of: RPCError.from(error).code)
            metrics.record(method: method.descriptor.path, code: code, duration: ContinuousClock.now - startedAt)
            throw error
        }
    }
}
