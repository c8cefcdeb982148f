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
    /// Called on the server's loop as soon as the head of a request that
    /// announces a body is complete, before any of the body is held: a
    /// response refuses the request unread (what `respond` would answer for
    /// it, e.g. an unknown route or a bad bearer token), so a client without
    /// a credential never has a body held against the server's request
    /// bytes. HTTP/1.1 then closes the connection after the answer (the
    /// body still on its way cannot be told from a next request); HTTP/2
    /// lets a body declared within its path's limit still come, dropped,
    /// until the request deadline, and resets the stream with NO_ERROR
    /// after the answer for any other. nil: read the body and call
    /// `respond` as usual. Must not block (it runs on the loop).
    func refuseBeforeBody(_ head: HTTPRequestHead, origin: RequestOrigin) -> HTTPResponse?
}

extension HTTPResponder {
    /// Reads every body (no screening).
    public func refuseBeforeBody(_ head: HTTPRequestHead, origin: RequestOrigin) -> HTTPResponse? { nil }
}
