/// What the server asks of the application: one response per request
/// (called on a Task that prefers the server's event loop as its executor,
/// so it runs on the loop thread: see `HTTPServer`), and the answer to
/// requests the connection itself refused before they were complete.
public protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest, origin: RequestOrigin) async -> HTTPResponse
    /// A framing failure (400, 408, 413, 431, ...) the connection answers
    /// before closing (HTTP/1.1) or resetting the stream (HTTP/2); returns
    /// the response to send, whole, over both protocols (over HTTP/2 an
    /// answer sent before the request was complete is followed by
    /// RST_STREAM(NO_ERROR)).
    func framingFailure(_ error: HTTPRequestError, origin: RequestOrigin) -> HTTPResponse
}
