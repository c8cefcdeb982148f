/// Conversions between HTTP/2 header lists and the HTTP/1-shaped
/// `HTTPRequest`/`HTTPResponse`, so both protocols share one responder.
/// Pure. Field names arrive lower-case (nghttp2 enforces RFC 9113 §8.2).
public enum HTTP2Messages {
    /// Response fields HTTP/2 forbids (connection-specific, RFC 9113 §8.2.2)
    /// or that we compute ourselves.
    static let droppedResponseFields: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "content-length", "date",
    ]

    /// The request for a stream's header list and body; a missing or odd
    /// pseudo-header is a malformed request (400), a body over `bodyLimits`
    /// for the path 413.
    public static func request(
        fields: [(name: String, value: String)], body: [UInt8], bodyLimits: HTTPBodyLimits = HTTPBodyLimits()
    ) -> Result<HTTPRequest, HTTPRequestError> {
        var method: String?
        var path: String?
        var headers = HTTPHeaders()
        for field in fields {
            switch field.name {
            case ":method": method = field.value
            case ":path": path = field.value
            case ":authority": headers.add(name: "host", value: field.value)
            case ":scheme": continue
            default:
                if field.name.hasPrefix(":") {
                    return .failure(HTTPRequestError(.unknownPseudoHeader))
                }
                headers.add(name: field.name, value: field.value)
            }
        }
        guard let method, !method.isEmpty, let path, path.hasPrefix("/") else {
            return .failure(HTTPRequestError(.missingPseudoHeader))
        }
        guard body.count <= bodyLimits.bytesMax(target: path) else { return .failure(HTTPRequestError(.bodyTooLarge)) }
        return .success(HTTPRequest(method: method, target: path, version: .http1_1, headers: headers, body: body, keepAlive: true))
    }

    /// The header list for `response`: `:status`, its fields lower-cased
    /// (minus the dropped ones), content-length and date.
    public static func responseFields(_ response: HTTPResponse, date: String?) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [(":status", String(response.status))]
        for field in response.headers.fields {
            let name = field.name.lowercasedASCII
            if droppedResponseFields.contains(name) { continue }
            fields.append((name, field.value))
        }
        fields.append(("content-length", String(response.body.count)))
        if let date { fields.append(("date", date)) }
        return fields
    }

    /// The header list of an answer sent before the request was complete
    /// (the stream is reset after it): `:status` and the response's own
    /// fields, without a body or the fields that describe one.
    public static func earlyResponseFields(_ response: HTTPResponse) -> [(name: String, value: String)] {
        var bare = HTTPResponse(status: response.status)
        for field in response.headers.fields where field.name.lowercasedASCII != "content-type" {
            bare.headers.add(name: field.name, value: field.value)
        }
        return responseFields(bare, date: nil)
    }
}
