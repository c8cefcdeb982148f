import Contracts
import HTTPServer
import Logging
import Metrics
import RPCCore
import RPCRuntime
import ServiceKit

/// The gateway's request pipeline: request id, admission
/// (`RequestAdmission`: the concurrent-request cap and the notification
/// route's per-address rate limit), `RequestPreparer` (route, token, media
/// type, body), `CommandExecutor` (backend calls), the single catch site
/// that renders every failure as a problem, and one access-log line and
/// one count (`GatewayMetrics`: route pattern, method, status, latency,
/// problem code, refusal reason) per request. A request whose client went
/// away (its Task cancelled by the server) is logged and counted with
/// status 499, nginx's "client closed request", not as a 503 of ours; one
/// already gone when its request reaches us (its stream reset while the
/// Task waited to start) is answered so at once: no admission, token check
/// or backend call runs for it (the probes and unmatched paths, which cost
/// nothing, are answered as usual).
/// Logs and labels carry no Authorization header, token, email or JWS:
/// only method, path (no query; the route pattern in metrics), status,
/// duration, ids and the problem code.
public struct GatewayApplication: HTTPResponder {
    /// The status logged and counted for a request whose client went away.
    public static let clientClosedRequestStatus = 499

    public let preparer: RequestPreparer
    public let executor: CommandExecutor
    public let logger: Logger
    /// nil in tests that do not count.
    public let metrics: GatewayMetrics?
    /// nil: no admission limits (tests of other concerns).
    public let admission: RequestAdmission?

    public init(
        preparer: RequestPreparer, executor: CommandExecutor, logger: Logger, metrics: GatewayMetrics? = nil,
        admission: RequestAdmission? = nil
    ) {
        self.preparer = preparer
        self.executor = executor
        self.logger = logger
        self.metrics = metrics
        self.admission = admission
    }

    public func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse {
        let startedAt = ContinuousClock.now
        let requestId = RequestID.resolve(request.headers)
        let instance = String(request.path)
        // The access log's fields from the failure path; the rest are added
        // only when the line is written (most lines are below the level in
        // production, and each field is a string to build).
        var failureFields: [String: String] = [:]
        var userId: String?
        var response: HTTPResponse
        var problemCode: ProblemCode?
        var refusal: RefusalReasonLabel?
        var clientGone = false
        let resolved = preparer.router.resolve(method: request.method, target: request.target)
        // A client that reset its stream at once (or provoked the reset)
        // costs no work: each such request would otherwise run in full.
        // The probes and unmatched paths, which cost nothing, still answer.
        let goneAtEntry = Task.isCancelled && Self.routeDoesWork(resolved.match)
        let verdict: RequestAdmission.Verdict =
            goneAtEntry
            ? .exempt : admission?.enter(resolved.match, peer: origin.remotePeer, instance: instance) ?? .exempt
        defer { if verdict == .admitted { admission?.leave() } }
        switch verdict {
        case .refused(let problem, let reason):
            response = problem.response
            problemCode = problem.code
            refusal = reason
        case .exempt where goneAtEntry:
            // Never admitted (see `goneAtEntry`); answered as a cancelled call is.
            response =
                RPCFailureMapping.problem(
                    grpcCode: RPCFailureMapping.GRPCCode.cancelled, reason: nil, instance: instance
                ).response
            clientGone = true
        case .admitted, .exempt:
            let prepared = preparer.prepareRouted(
                request, resolved: resolved, nowSeconds: HTTPServerClock.unixSeconds())
            switch prepared.result {
            case .failure(let problem):
                response = problem.response
                problemCode = problem.code
            case .success(let command):
                userId = command.userId
                do {
                    response = try await executor.execute(command, requestId: requestId, instance: instance)
                } catch {
                    let problem = Self.problem(for: error, instance: instance, fields: &failureFields)
                    response = problem.response
                    problemCode = problem.code
                    clientGone = Task.isCancelled
                }
            }
            if problemCode == .serviceUnavailable && !clientGone { refusal = .backendUnavailable }
        }
        let record = AccessRecord(
            method: request.method, instance: instance, pattern: resolved.pattern, requestId: requestId, origin: origin,
            duration: ContinuousClock.now - startedAt, problemCode: problemCode, refusal: refusal, userId: userId,
            clientGone: clientGone, failureFields: failureFields)
        account(record, &response)
        return response
    }

    /// A request refused from its head (an unknown route, a missing or bad
    /// bearer token) before its body is read: answered, counted and logged
    /// exactly as `respond` would answer it once the body had come, so a
    /// client without a credential never has a body held against the
    /// server's request bytes (`RequestBytesBudget`).
    public func refuseBeforeBody(_ head: HTTPRequestHead, origin: RequestOrigin) -> HTTPResponse? {
        let startedAt = ContinuousClock.now
        let resolved = preparer.router.resolve(method: head.method, target: head.target)
        guard let problem = preparer.screen(head, match: resolved.match, nowSeconds: HTTPServerClock.unixSeconds())
        else { return nil }
        var response = problem.response
        let record = AccessRecord(
            method: head.method, instance: String(head.path), pattern: resolved.pattern,
            requestId: RequestID.resolve(head.headers),
            origin: origin, duration: ContinuousClock.now - startedAt, problemCode: problem.code, refusal: nil,
            userId: nil,
            clientGone: false, failureFields: [:])
        account(record, &response)
        return response
    }

    /// What one answered request leaves in the metrics and the access log.
    private struct AccessRecord {
        let method: String
        /// The request's path (the problem's `instance`).
        let instance: String
        /// The route pattern; nil when no route fits.
        let pattern: String?
        let requestId: String
        let origin: RequestOrigin
        let duration: Duration
        let problemCode: ProblemCode?
        let refusal: RefusalReasonLabel?
        let userId: String?
        let clientGone: Bool
        let failureFields: [String: String]
    }

    /// Counts the request, adds its request id to the response and writes
    /// its access-log line.
    private func account(_ record: AccessRecord, _ response: inout HTTPResponse) {
        let countedStatus = record.clientGone ? Self.clientClosedRequestStatus : response.status
        if let refusal = record.refusal { metrics?.recordRefusal(refusal) }
        metrics?.recordRequest(
            route: record.pattern ?? IAPMetricLabels.unmatchedRoute, method: record.method, status: countedStatus,
            duration: record.duration, problemCode: record.clientGone ? nil : record.problemCode?.rawValue)
        response.headers.add(name: RequestID.headerName, value: record.requestId)
        let level: LogLevel = !record.clientGone && response.status >= 500 ? .warning : .info
        guard level >= logger.minimumLevel else { return }
        var fields = record.failureFields
        if let userId = record.userId { fields["user_id"] = userId }
        if let problemCode = record.problemCode, !record.clientGone { fields["problem"] = problemCode.wireCode }
        if let refusal = record.refusal { fields["refusal"] = refusal.rawValue }
        fields["method"] = record.method
        fields["path"] = record.instance
        fields["protocol"] = record.origin.protocolName
        fields["status"] = String(countedStatus)
        let duration = record.duration.components
        fields["duration_ms"] = String(duration.seconds * 1000 + duration.attoseconds / 1_000_000_000_000_000)
        fields["request_id"] = record.requestId
        logger.log(level, record.clientGone ? "client closed request" : "request", fields)
    }

    /// A matched route other than the probes: admission, usually a token
    /// and a backend call.
    private static func routeDoesWork(_ match: RouteMatch) -> Bool {
        switch match {
        case .matched(.health, _), .matched(.readiness, _), .notFound, .methodNotAllowed: return false
        case .matched: return true
        }
    }

    public func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse {
        let requestId = RequestID.generate()
        var response = error.problem.response
        response.headers.add(name: RequestID.headerName, value: requestId)
        // No route was read: counted as unmatched, method unknown.
        metrics?.recordRequest(
            route: IAPMetricLabels.unmatchedRoute, method: IAPMetricLabels.otherMethod, status: response.status,
            duration: .zero, problemCode: error.problem.code.rawValue)
        logger.info(
            "request refused",
            [
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
