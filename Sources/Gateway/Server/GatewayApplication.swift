import Contracts
import HTTPServer
import Logging
import Metrics
import RPCCore
import RPCRuntime
import ServiceKit

/// The gateway's request pipeline: request id, `RequestPreparer` (route,
/// token, media type, body), `CommandExecutor` (backend calls), the single
/// catch site that renders every failure as a problem, and one access-log
/// line and one count (`GatewayMetrics`: route pattern, method, status,
/// latency, problem code) per request. Logs and labels carry no
/// Authorization header, token, email or JWS: only method, path (no
/// query; the route pattern in metrics), status, duration, ids and the
/// problem code.
public struct GatewayApplication: HTTPResponder {
    public let preparer: RequestPreparer
    public let executor: CommandExecutor
    public let logger: Logger
    /// nil in tests that do not count.
    public let metrics: GatewayMetrics?

    public init(preparer: RequestPreparer, executor: CommandExecutor, logger: Logger, metrics: GatewayMetrics? = nil) {
        self.preparer = preparer
        self.executor = executor
        self.logger = logger
        self.metrics = metrics
    }

    public func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse {
        let startedAt = ContinuousClock.now
        let requestId = RequestID.resolve(request.headers)
        let instance = String(request.path)
        var fields: [String: String] = [:]
        var response: HTTPResponse
        var problemCode: ProblemCode?
        let prepared = preparer.prepareRouted(request, nowSeconds: HTTPServerClock.unixSeconds())
        switch prepared.result {
        case .failure(let problem):
            response = problem.response
            problemCode = problem.code
        case .success(let command):
            if let userId = command.userId { fields["user_id"] = userId }
            do {
                response = try await executor.execute(command, requestId: requestId, instance: instance)
            } catch {
                let problem = Self.problem(for: error, instance: instance, fields: &fields)
                response = problem.response
                problemCode = problem.code
            }
        }
        let duration = ContinuousClock.now - startedAt
        if let problemCode { fields["problem"] = problemCode.wireCode }
        metrics?.recordRequest(
            route: prepared.route ?? IAPMetricLabels.unmatchedRoute, method: request.method, status: response.status,
            duration: duration, problemCode: problemCode?.rawValue)
        response.headers.add(name: RequestID.headerName, value: requestId)
        fields["method"] = request.method
        fields["path"] = instance
        fields["protocol"] = origin.protocolName
        fields["status"] = String(response.status)
        fields["duration_ms"] = String(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        fields["request_id"] = requestId
        logger.log(response.status >= 500 ? .warning : .info, "request", fields)
        return response
    }

    public func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse {
        let requestId = RequestID.generate()
        var response = error.problem.response
        response.headers.add(name: RequestID.headerName, value: requestId)
        // No route was read: counted as unmatched, method unknown.
        metrics?.recordRequest(
            route: IAPMetricLabels.unmatchedRoute, method: IAPMetricLabels.otherMethod, status: response.status,
            duration: .zero, problemCode: error.problem.code.rawValue)
        logger.info("request refused", [
            "protocol": origin.protocolName, "status": String(response.status), "request_id": requestId,
            "problem": error.problem.code.wireCode, "reason": error.reason.rawValue,
        ])
        return response
    }

    /// The single catch site: backend statuses through `RPCFailureMapping`,
    /// everything else through `Problem(rendering:)` (unknown is INTERNAL).
    static func problem(for error: any Error, instance: String, fields: inout [String: String]) -> Problem {
        if let rpcError = error as? RPCError {
            fields["grpc_code"] = String(describing: rpcError.code)
            if let reason = Contracts.ErrorReason.reason(of: rpcError) { fields["error_reason"] = reason }
            return RPCFailureMapping.problem(for: rpcError, instance: instance)
        }
        if let violation = error as? ResponseInvariantViolation { fields["invariant"] = violation.message }
        return Problem(rendering: error, instance: instance)
    }
}
