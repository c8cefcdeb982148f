/// What the I/O layer must do next for one connection; it performs the
/// actions in order and is the only place with side effects.
public enum HTTPConnectionAction: Sendable, Equatable {
    /// Write `HTTPResponseSerializer.continueResponseBytes`.
    case writeContinue
    /// Run the handler for this request, write its response serialised with
    /// `keepAlive`, then call `responseWritten(nowMilliseconds:)`.
    case dispatch(HTTPRequest, keepAlive: Bool)
    /// Write an error response with `error.status` (Connection: close),
    /// then close.
    case writeErrorAndClose(HTTPRequestError)
    /// Write this response (a head refused before its body was read,
    /// Connection: close), then close.
    case writeResponseAndClose(HTTPResponse)
    /// The client has gone (its input ended) while the dispatched request
    /// runs: cancel the handler's Task. Its response is still written if the
    /// socket takes it, then the connection closes.
    case cancelInFlight
    /// Close the connection without writing anything more.
    case close
}
