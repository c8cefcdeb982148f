/// A unary call's successful answer.
public struct ClientResponse<Message: Sendable>: Sendable {
    public var message: Message
    /// Initial (header) metadata.
    public var metadata: Metadata
    /// Trailing metadata.
    public var trailingMetadata: Metadata

    public init(message: Message, metadata: Metadata, trailingMetadata: Metadata) {
        self.message = message
        self.metadata = metadata
        self.trailingMetadata = trailingMetadata
    }
}
