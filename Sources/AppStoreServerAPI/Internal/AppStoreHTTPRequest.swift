import RPCCore

/// One request to Apple as it goes on the wire (path already percent-encoded, query included).
struct AppStoreHTTPRequest: Sendable {
    var method: String
    var path: String
    var headers: [HTTPHeaderField]
    var body: [UInt8]?
}
