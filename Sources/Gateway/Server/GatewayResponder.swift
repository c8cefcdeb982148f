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
