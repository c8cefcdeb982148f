/// Where a request came from, for handlers and the access log.
public struct RequestOrigin: Sendable, Equatable {
    /// "HTTP/1.1", "HTTP/1.0" or "HTTP/2".
    public let protocolName: String
    /// The peer as "ip:port".
    public let remotePeer: String

    public init(protocolName: String, remotePeer: String) {
        self.protocolName = protocolName
        self.remotePeer = remotePeer
    }
}
