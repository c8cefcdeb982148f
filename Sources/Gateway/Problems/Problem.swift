import HTTPServer
import StrictJSON

/// An RFC 9457 problem detail, rendered as `application/problem+json` with
/// our extension members `code` and `retryable` (and `field` for validation).
/// `detail` must never carry secrets: no JWS, token, email or key material.
public struct Problem: Error, Sendable, Equatable {
    public static let mediaType = "application/problem+json"

    public let code: ProblemCode
    /// A human explanation of this occurrence.
    public let detail: String?
    /// A URI reference for this occurrence (e.g. the request path or id).
    public let instance: String?
    /// The request field at fault, for validation problems.
    public let field: String?
    /// Extra response headers (e.g. Allow for 405, WWW-Authenticate for 401).
    public let headers: HTTPHeaders

    public init(
        _ code: ProblemCode, detail: String? = nil, instance: String? = nil, field: String? = nil,
        headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.code = code
        self.detail = detail
        self.instance = instance
        self.field = field
        self.headers = headers
    }

    public var status: Int { code.httpStatus }

    /// The JSON document, members in a fixed order.
    public var json: JSONValue {
        var object = JSONObject()
        object.insert("type", .string(code.typeURI))
        object.insert("title", .string(code.title))
        object.insert("status", .integer(Int64(code.httpStatus)))
        object.insertIfPresent("detail", detail.map(JSONValue.string))
        object.insertIfPresent("instance", instance.map(JSONValue.string))
        object.insert("code", .string(code.wireCode))
        object.insert("retryable", .bool(code.retryable))
        object.insertIfPresent("field", field.map(JSONValue.string))
        return .object(object)
    }

    /// The complete HTTP response (with the code's `Retry-After` when the
    /// problem's own headers have none).
    public var response: HTTPResponse {
        var responseHeaders = headers
        if let seconds = code.retryAfterSeconds, responseHeaders.first("retry-after") == nil {
            responseHeaders.add(name: "Retry-After", value: String(seconds))
        }
        responseHeaders.add(name: "Content-Type", value: Problem.mediaType)
        responseHeaders.add(name: "Cache-Control", value: "no-store")
        return HTTPResponse(status: code.httpStatus, headers: responseHeaders, body: JSONWriter.bytes(of: json))
    }
}
