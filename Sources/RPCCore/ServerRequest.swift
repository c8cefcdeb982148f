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
