/// What a handler knows about its call besides the message.
public struct ServerContext: Sendable {
    /// The method being called.
    public var method: MethodDescriptor
    /// When the caller stops waiting, from `grpc-timeout`; nil without one.
    public var deadline: ContinuousClock.Instant?
    /// The peer's address, e.g. `127.0.0.1:53422`.
    public var remotePeer: String
    /// The caller's verified client certificate names; nil without TLS,
    /// without a client CA configured, or when the caller sent no certificate.
    public var peerIdentity: PeerIdentity?

    public init(
        method: MethodDescriptor, deadline: ContinuousClock.Instant?, remotePeer: String,
        peerIdentity: PeerIdentity? = nil
    ) {
        self.method = method
        self.deadline = deadline
        self.remotePeer = remotePeer
        self.peerIdentity = peerIdentity
    }
}
