/// A response to serialise. Framing headers (Content-Length, Connection,
/// Transfer-Encoding, Date) belong to the serializer and are ignored here.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        precondition((100...599).contains(status), "HTTP status out of range")
        self.status = status
        self.headers = headers
        self.body = body
    }
}
