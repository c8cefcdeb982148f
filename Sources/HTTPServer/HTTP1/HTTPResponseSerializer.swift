/// Turns an `HTTPResponse` into HTTP/1.1 wire bytes. The serializer owns the
/// framing: it always writes Content-Length, and Connection when the
/// connection's fate differs from the version's default.
public enum HTTPResponseSerializer {
    /// Header names the serializer writes itself; callers' copies are dropped.
    static let framingHeaderNames = ["content-length", "connection", "transfer-encoding", "date"]

    /// Whether `name` is one of `framingHeaderNames`, in any case, without
    /// building the lower-cased copy.
    static func isFramingHeader(_ name: String) -> Bool {
        let length = name.utf8.count
        return framingHeaderNames.contains { $0.utf8.count == length && name.equalsIgnoringASCIICase($0) }
    }

    /// The interim `100 Continue` response.
    public static let continueResponseBytes: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Serialises `response` for a request of `requestVersion`.
    /// - Parameters:
    ///   - keepAlive: whether the connection stays open after this response.
    ///   - omitBody: true for HEAD requests (Content-Length still describes the body).
    ///   - date: the Date header value (IMF-fixdate), if the caller has a clock.
    public static func serialize(
        _ response: HTTPResponse,
        requestVersion: HTTPVersion,
        keepAlive: Bool,
        omitBody: Bool = false,
        date: String? = nil
    ) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256 + response.body.count)
        let phrase = HTTPStatusText.reasonPhrase(response.status)
        output.append(contentsOf: "HTTP/1.1 ".utf8)
        output.append(contentsOf: String(response.status).utf8)
        output.append(HTTPByte.space)
        output.append(contentsOf: phrase.utf8)
        output.append(contentsOf: [HTTPByte.cr, HTTPByte.lf])
        if let date { appendField("Date", date, to: &output) }
        for field in response.headers.fields where !isFramingHeader(field.name) {
            appendField(field.name, field.value, to: &output)
        }
        let bodyAllowed = response.status >= 200 && response.status != 204 && response.status != 304
        if bodyAllowed { appendField("Content-Length", String(response.body.count), to: &output) }
        if !keepAlive {
            appendField("Connection", "close", to: &output)
        } else if requestVersion == .http1_0 {
            appendField("Connection", "keep-alive", to: &output)
        }
        output.append(contentsOf: [HTTPByte.cr, HTTPByte.lf])
        if bodyAllowed && !omitBody { output.append(contentsOf: response.body) }
        return output
    }

    /// Writes one field line; a name that is not a token or a value holding
    /// CR, LF or NUL is a programming error, and is dropped rather than sent
    /// (response splitting) after failing an assertion in debug builds.
    private static func appendField(_ name: String, _ value: String, to output: inout [UInt8]) {
        let nameIsToken = !name.isEmpty && name.utf8.allSatisfy(HTTPByte.isTokenCharacter)
        let valueIsSafe = value.utf8.allSatisfy { $0 == HTTPByte.tab || ($0 >= 0x20 && $0 != 0x7F) }
        assert(nameIsToken && valueIsSafe, "unsafe response header \(name)")
        guard nameIsToken && valueIsSafe else { return }
        output.append(contentsOf: name.utf8)
        output.append(contentsOf: ": ".utf8)
        output.append(contentsOf: value.utf8)
        output.append(contentsOf: [HTTPByte.cr, HTTPByte.lf])
    }
}
