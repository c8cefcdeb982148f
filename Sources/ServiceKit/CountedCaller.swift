import Metrics
import RPCCore

/// A `UnaryCaller` that counts every call it passes to `base` in `metrics`
/// (`iap_rpc_client_requests_total` by full method path and the status name
/// the call ended with, `iap_rpc_client_request_duration_seconds`); with no
/// metrics it only passes calls through. Contracts' typed `call` works on it
/// as on any caller, so counting needs no knowledge of the messages.
public struct CountedCaller: UnaryCaller {
    public let base: any UnaryCaller
    public let metrics: RPCClientMetrics?

    public init(_ base: any UnaryCaller, metrics: RPCClientMetrics?) {
        self.base = base
        self.metrics = metrics
    }

    public func unaryRaw(
        _ method: MethodDescriptor, request: [UInt8], metadata: Metadata, timeout: Duration?
    ) async throws -> ClientResponse<[UInt8]> {
        guard let metrics else {
            return try await base.unaryRaw(method, request: request, metadata: metadata, timeout: timeout)
        }
        let startedAt = ContinuousClock.now
        do {
            let response = try await base.unaryRaw(method, request: request, metadata: metadata, timeout: timeout)
            metrics.record(
                method: method.path, code: RPCMetricsInterceptor.name(of: .ok),
                duration: ContinuousClock.now - startedAt)
            return response
        } catch {
            metrics.record(
                method: method.path, code: RPCMetricsInterceptor.name(of: RPCError.from(error).code),
                duration: ContinuousClock.now - startedAt)
            throw error
        }
    }
}
