import HTTPServer
import StrictJSON

/// A response body the gateway renders as `application/json`.
public protocol JSONResponseBody: Sendable {
    /// The document, members in the documented order.
    var json: JSONValue { get }
}

extension JSONResponseBody {
    /// A 200 (or `status`) response carrying this body, never cached.
    public func response(status: Int = 200) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Cache-Control", value: "no-store")
        return HTTPResponse(status: status, headers: headers, body: JSONWriter.bytes(of: json))
    }
}
