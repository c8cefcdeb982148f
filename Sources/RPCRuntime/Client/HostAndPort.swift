/// A server address a client connects to.
public struct HostAndPort: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

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
