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
