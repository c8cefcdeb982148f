import HTTPServer
import Metrics

/// The admin routes of every process, answered without touching a database:
///
/// - `GET /metrics`: the process's `MetricsRegistry` in the Prometheus text
///   format 0.0.4 (collectors such as the process metrics run first).
/// - `GET /livez`: 200 while the process runs (a liveness probe must not
///   fail because a dependency is down, or the orchestrator restarts
///   healthy processes during a database outage).
/// - `GET /readyz`: 200 when `readiness()` says the dependencies are up,
///   else 503 (a readiness probe takes the instance out of rotation).
///
/// Anything else is 404; other methods on those paths 405. Plain text bodies.
public struct AdminResponder: HTTPResponder {
    public static let livenessPath = "/livez"
    public static let readinessPath = "/readyz"

    private let metrics: MetricsEndpoint
    private let readiness: @Sendable () -> AdminReadiness

    public init(registry: MetricsRegistry, readiness: @escaping @Sendable () -> AdminReadiness) {
        metrics = MetricsEndpoint(registry: registry)
        self.readiness = readiness
    }

    public func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse {
        answer(method: request.method, target: request.target)
    }

    /// The answer for a request line (pure apart from the registry and the
    /// readiness closure).
    public func answer(method: String, target: String) -> HTTPResponse {
        if let answer = metrics.respond(method: method, target: target) {
            var headers = HTTPHeaders()
            for header in answer.headers { headers.add(name: header.name, value: header.value) }
            return HTTPResponse(status: answer.status, headers: headers, body: answer.body)
        }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == Self.livenessPath || path == Self.readinessPath else { return Self.text(404, "not found\n") }
        guard method == "GET" || method == "HEAD" else {
            var response = Self.text(405, "method not allowed: use GET\n")
            response.headers.add(name: "Allow", value: "GET, HEAD")
            return response
        }
        var response: HTTPResponse
        if path == Self.livenessPath {
            response = Self.text(200, "ok\n")
        } else {
            let state = readiness()
            response = Self.text(
                state.isReady ? 200 : 503, (state.isReady ? "ready" : "not ready") + " " + state.detail + "\n")
        }
        // HEAD keeps the body: the server sends GET's Content-Length and
        // leaves the body out (RFC 9110 9.3.2).
        return response
    }

    public func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse {
        Self.text(error.status, "bad request (\(error.reason.rawValue))\n")
    }

    private static func text(_ status: Int, _ body: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-store")
        return HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
    }
}
