/// One complete request as the parser yields it: head, de-chunked body, and
/// whether the connection may carry another request afterwards.
public struct HTTPRequest: Sendable, Equatable {
    /// The method token, case-sensitive ("GET", "POST", ...).
    public let method: String
    /// The origin-form request target, path and query ("/a/b?c=d").
    public let target: String
    public let version: HTTPVersion
    public let headers: HTTPHeaders
    /// The body after removing any chunked framing; empty when none.
    public let body: [UInt8]
    /// True when the client allows keep-alive (HTTP/1.1 without
    /// `Connection: close`, or HTTP/1.0 with `Connection: keep-alive`).
    public let keepAlive: Bool

    public init(
        method: String, target: String, version: HTTPVersion, headers: HTTPHeaders, body: [UInt8], keepAlive: Bool
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.keepAlive = keepAlive
    }

    /// The target's path, without the query.
    public var path: Substring { Self.path(of: target) }

    /// An origin-form target's path, without the query.
    static func path(of target: String) -> Substring {
        target[..<(target.utf8.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex)]
    }

    /// The target's query (after the first "?"), if any.
    public var query: Substring? {
        target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[target.utf8.index(after: $0)...] }
    }
}
