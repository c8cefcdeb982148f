import HTTPServer
import StrictJSON

/// A response body the gateway renders as `application/json`.
public protocol JSONResponseBody: Sendable {
    /// The document, members in the documented order.
    var json: JSONValue { get }
    /// The document's bytes: `JSONWriter.bytes(of: json)`, or the same
    /// bytes written directly by a body on a hot path.
    func jsonBytes() -> [UInt8]
}

extension JSONResponseBody {
    /// A 200 (or `status`) response carrying this body, never cached.
    public func response(status: Int = 200) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Cache-Control", value: "no-store")
        return HTTPResponse(status: status, headers: headers, body: jsonBytes())
    }

    public func jsonBytes() -> [UInt8] { JSONWriter.bytes(of: json) }
}
