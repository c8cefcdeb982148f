import Contracts
import HTTPServer
import RPCRuntime
import ServiceKit

/// The gateway's request pipeline: request id, `RequestPreparer` (route,
/// token, media type, body), `CommandExecutor` (backend calls), the single
/// catch site that renders every failure as a problem, and one access-log
/// line per request. Logs carry no Authorization header, token, email or
/// JWS: only method, path (no query), status, duration, ids and the
/// problem code.
public struct GatewayApplication: HTTPResponder {
    public let preparer: RequestPreparer
    public let executor: CommandExecutor
    public let logger: Logger

    public init(preparer: RequestPreparer, executor: CommandExecutor, logger: Logger) {
        self.preparer = preparer
        self.executor = executor
        self.logger = logger
    }

    public func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse {
        let startedAt = HTTPServerClock.monotonicMilliseconds()
        let requestId = RequestID.resolve(request.headers)
        let instance = String(request.path)
        var fields: [String: String] = [:]
        var response: HTTPResponse
        switch preparer.prepare(request, nowSeconds: HTTPServerClock.unixSeconds()) {
        case .failure(let problem):
            response = problem.response
            fields["problem"] = problem.code.wireCode
        case .success(let command):
            if let userId = command.userId { fields["user_id"] = userId }
            do {
                response = try await executor.execute(command, requestId: requestId, instance: instance)
            } catch {
                let problem = Self.problem(for: error, instance: instance, fields: &fields)
                response = problem.response
                fields["problem"] = problem.code.wireCode
            }
        }
        response.headers.add(name: RequestID.headerName, value: requestId)
        fields["method"] = request.method
        fields["path"] = instance
        fields["protocol"] = origin.protocolName
        fields["status"] = String(response.status)
        fields["duration_ms"] = String(HTTPServerClock.monotonicMilliseconds() - startedAt)
        fields["request_id"] = requestId
        logger.log(response.status >= 500 ? .warning : .info, "request", fields)
        return response
    }

    public func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse {
        let requestId = RequestID.generate()
        var response = error.problem.response
        response.headers.add(name: RequestID.headerName, value: requestId)
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
