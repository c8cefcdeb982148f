/// `GET /metrics` as a pure function of the request line, so any HTTP
/// server (the gateway's, a service's admin listener) serves the
/// exposition with a few lines:
///
///     if let answer = endpoint.respond(method: request.method, target: request.target) {
///         return HTTPResponse(status: answer.status, headers: answer.headers, body: answer.body)
///     }
///
/// It answers only its own path (`nil` for anything else, which the server
/// routes as usual). Framing headers (Content-Length, Connection) are the
/// server's; a HEAD answer has the GET answer's headers and no body.
public struct MetricsEndpoint: Sendable {
    /// One response header.
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// What to send back.
    public struct Response: Sendable, Equatable {
        public var status: Int
        public var headers: [Header]
        public var body: [UInt8]
    }

    /// The path Prometheus scrapes by default.
    public static let path = "/metrics"
    /// The text exposition format's media type (version 0.0.4).
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let registry: MetricsRegistry

    public init(registry: MetricsRegistry) {
        self.registry = registry
    }

    /// The answer for `method` and request target `target` (origin form;
    /// a query string is ignored), or nil when the target is not `path`.
    /// GET and HEAD render the registry; any other method is 405 with `Allow`.
    public func respond(method: String, target: String) -> Response? {
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == Self.path else { return nil }
        switch method {
        case "GET", "HEAD":
            // HEAD gets GET's body too: the HTTP server sends its length and
            // leaves the body out (RFC 9110 9.3.2).
            return Response(
                status: 200, headers: [Header("Content-Type", Self.contentType)], body: Array(registry.render().utf8))
        default:
            return Response(
                status: 405,
                headers: [Header("Content-Type", "text/plain; charset=utf-8"), Header("Allow", "GET, HEAD")],
                body: Array("method not allowed: use GET\n".utf8))
        }
    }
}
