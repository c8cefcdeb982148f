/// Conversions between HTTP/2 header lists and the HTTP/1-shaped
/// `HTTPRequest`/`HTTPResponse`, so both protocols share one responder.
/// Pure. Field names arrive lower-case (nghttp2 enforces RFC 9113 §8.2).
public enum HTTP2Messages {
    /// Response fields HTTP/2 forbids (connection-specific, RFC 9113 §8.2.2)
    /// or that we compute ourselves.
    static let droppedResponseFields: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "content-length", "date",
    ]

    /// The bytes of an HTTP/1.1 request line besides its method and target
    /// (two spaces and "HTTP/1.1"), so that `:method` and `:path` meet the
    /// same length limit.
    static let requestLineFixedBytes = 10

    /// The request for a stream's header list and body, refused for the
    /// same reasons and with the same statuses as an HTTP/1.1 request line
    /// (`HTTPRequestLine`): a missing or unknown pseudo-header (400), a
    /// method that is not a token (400) or not implemented (501), a `:path`
    /// that is not origin-form (400) or longer than a request line may be
    /// (414), and a body over `bodyLimits` for the path (413).
    public static func request(
        fields: [(name: String, value: String)], body: [UInt8], bodyLimits: HTTPBodyLimits = HTTPBodyLimits()
    ) -> Result<HTTPRequest, HTTPRequestError> {
        head(fields: fields).flatMap { head in
            guard body.count <= bodyLimits.bytesMax(target: head.target) else {
                return .failure(HTTPRequestError(.bodyTooLarge))
            }
            return .success(
                HTTPRequest(
                    method: head.method, target: head.target, version: .http1_1, headers: head.headers, body: body,
                    keepAlive: true))
        }
    }

    /// The head of a stream's header list, refused as `request` refuses it
    /// (everything but the body): what a responder screens before the body
    /// (`HTTPResponder.refuseBeforeBody`).
    public static func head(fields: [(name: String, value: String)]) -> Result<HTTPRequestHead, HTTPRequestError> {
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
        guard let method, !method.isEmpty, let path, !path.isEmpty else {
            return .failure(HTTPRequestError(.missingPseudoHeader))
        }
        // In the order the HTTP/1.1 parser meets them.
        guard method.utf8.count + path.utf8.count + requestLineFixedBytes <= HTTPServerLimits.requestLineBytesMax else {
            return .failure(HTTPRequestError(.requestLineTooLong))
        }
        guard method.utf8.allSatisfy(HTTPByte.isTokenCharacter) else {
            return .failure(HTTPRequestError(.invalidMethod))
        }
        guard HTTPRequestLine.isOriginForm(Array(path.utf8)[...]) else {
            return .failure(HTTPRequestError(.invalidTarget))
        }
        guard HTTPRequestLine.implementedMethods.contains(method) else {
            return .failure(HTTPRequestError(.methodNotImplemented))
        }
        return .success(HTTPRequestHead(method: method, target: path, headers: headers))
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
}
