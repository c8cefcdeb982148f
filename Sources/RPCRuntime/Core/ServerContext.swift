/// What a handler knows about its call besides the message.
public struct ServerContext: Sendable {
    /// The method being called.
    public var method: MethodDescriptor
    /// When the caller stops waiting, from `grpc-timeout`; nil without one.
    public var deadline: ContinuousClock.Instant?
    /// The peer's address, e.g. `127.0.0.1:53422`.
    public var remotePeer: String

    public init(method: MethodDescriptor, deadline: ContinuousClock.Instant?, remotePeer: String) {
        self.method = method
        self.deadline = deadline
        self.remotePeer = remotePeer
    }
}

/// A unary request as a handler sees it.
public struct ServerRequest<Message: Sendable>: Sendable {
    public var message: Message
    public var metadata: Metadata
    public var context: ServerContext

    public init(message: Message, metadata: Metadata, context: ServerContext) {
        self.message = message
        self.metadata = metadata
        self.context = context
    }
}

/// A unary handler's successful answer: the message plus initial and trailing metadata.
public struct ServerResponse<Message: Sendable>: Sendable {
    public var message: Message
    public var metadata: Metadata
    public var trailingMetadata: Metadata

    public init(message: Message, metadata: Metadata = [:], trailingMetadata: Metadata = [:]) {
        self.message = message
        self.metadata = metadata
        self.trailingMetadata = trailingMetadata
    }
}
