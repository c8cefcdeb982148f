/// Where a request came from, for handlers and the access log.
public struct RequestOrigin: Sendable, Equatable {
    /// "HTTP/1.1", "HTTP/1.0" or "HTTP/2".
    public let protocolName: String
    /// The peer as "ip:port".
    public let remotePeer: String

    public init(protocolName: String, remotePeer: String) {
        self.protocolName = protocolName
        self.remotePeer = remotePeer
    }
}

/// What the server asks of the application: one response per request
/// (called on a Task, never on the event loop), and a log line for requests
/// the connection itself refused before they were complete.
public protocol GatewayResponder: Sendable {
    func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse
    /// A framing failure (408, 413, 431, ...) the connection answers with
    /// `response` before closing; returns the response to send (with a
    /// request id).
    func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse
}
