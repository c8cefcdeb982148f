import RPCCore

/// One complete answer from Apple.
struct AppStoreHTTPResponse: Sendable {
    var status: Int
    var headers: [HTTPHeaderField]
    var body: [UInt8]
}
