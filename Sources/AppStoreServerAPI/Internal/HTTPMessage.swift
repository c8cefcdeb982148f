import RPCCore

/// One request as it goes on the wire (path already percent-encoded, query included).
struct HTTPRequest: Sendable {
    var method: String
    var path: String
    var headers: [HTTPHeaderField]
    var body: [UInt8]?
}

/// One complete answer.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [HTTPHeaderField]
    var body: [UInt8]
}
