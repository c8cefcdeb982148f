/// Runs around every handler of a `Router` (see `Router.intercept(with:)`),
/// before the request message is even decoded: the one place for checks
/// every method needs, such as caller authorisation. Throwing ends the call
/// with that error's status and the handler never runs; calling `next`
/// runs the rest of the chain and then the handler.
public protocol ServerInterceptor: Sendable {
    func intercept(_ request: ServerRequest<[UInt8]>, next: Router.RawHandler) async throws -> ServerResponse<[UInt8]>
}
