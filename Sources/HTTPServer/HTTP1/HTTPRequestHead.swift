/// A request's head as soon as it is complete, before its body: what a
/// server may decide on without reading the body (the route, a bearer
/// token). `HTTPResponder.refuseBeforeBody(_:origin:)` sees it.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The method token, case-sensitive ("GET", "POST", ...).
    public let method: String
    /// The origin-form request target, path and query ("/a/b?c=d").
    public let target: String
    public let headers: HTTPHeaders

    public init(method: String, target: String, headers: HTTPHeaders) {
        self.method = method
        self.target = target
        self.headers = headers
    }

    /// The target's path, without the query.
    public var path: Substring { HTTPRequest.path(of: target) }
}
