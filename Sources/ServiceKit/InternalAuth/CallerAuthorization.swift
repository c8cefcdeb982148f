import Logging
import RPCCore

/// The one place a service checks its caller: a `Router` interceptor that
/// asks the `CallerPolicy` before the request is decoded or any handler
/// runs, so a refused call changes nothing. Refusals are logged with the
/// method, the peer's address and its certificate names (no secrets exist
/// in either).
public struct CallerAuthorization: ServerInterceptor {
    public let policy: CallerPolicy
    public let logger: Logger

    public init(policy: CallerPolicy, logger: Logger) {
        self.policy = policy
        self.logger = logger
    }

    public func intercept(_ request: ServerRequest<[UInt8]>, next: Router.RawHandler) async throws -> ServerResponse<
        [UInt8]
    > {
        let context = request.context
        switch policy.decide(context.method, caller: context.peerIdentity) {
        case .allow:
            return try await next(request)
        case .unauthenticated:
            logger.warning(
                "caller refused",
                ["method": context.method.path, "peer": context.remotePeer, "reason": "no client certificate"])
            throw RPCError(
                code: .unauthenticated, message: "A client certificate is required for \(context.method.path)")
        case .permissionDenied:
            let names = context.peerIdentity?.description ?? ""
            logger.warning(
                "caller refused",
                [
                    "method": context.method.path, "peer": context.remotePeer, "caller": names,
                    "reason": "identity not allowed",
                ])
            throw RPCError(code: .permissionDenied, message: "\(names) may not call \(context.method.path)")
        }
    }
}
