/// What a request head says about its body and the connection: decided once
/// from the parsed headers, refusing every ambiguous combination.
struct HTTPMessageFraming: Sendable {
    enum Body: Sendable, Equatable {
        case none
        case fixed(Int)
        case chunked
    }

    let body: Body
    let keepAlive: Bool
    /// `Expect: 100-continue` on an HTTP/1.1 request with a body.
    let expectsContinue: Bool

    init(version: HTTPVersion, headers: HTTPHeaders, bodyBytesMax: Int = HTTPServerLimits.requestBodyBytesMax)
        throws(HTTPRequestError)
    {
        let hostCount = headers.values("host").count
        if hostCount > 1 { throw HTTPRequestError(.duplicateHost) }
        if hostCount == 0 && version == .http1_1 { throw HTTPRequestError(.missingHost) }

        body = try Self.body(version: version, headers: headers, bodyBytesMax: bodyBytesMax)

        let connection = headers.listElements("connection")
        switch version {
        case .http1_1: keepAlive = !connection.contains("close")
        case .http1_0: keepAlive = connection.contains("keep-alive") && !connection.contains("close")
        }

        // RFC 9110 §10.1.1: ignore 100-continue from HTTP/1.0 clients.
        let expectations = headers.listElements("expect")
        if version == .http1_1 && !expectations.isEmpty {
            guard expectations == ["100-continue"] else { throw HTTPRequestError(.unsupportedExpectation) }
            expectsContinue = body != .none && body != .fixed(0)
        } else {
            expectsContinue = false
        }
    }

    private static func body(version: HTTPVersion, headers: HTTPHeaders, bodyBytesMax: Int) throws(HTTPRequestError)
        -> Body
    {
        let transferEncodingLines = headers.values("transfer-encoding")
        let contentLengthLines = headers.values("content-length")
        if !transferEncodingLines.isEmpty {
            // RFC 9112 §6.1: framing with TE in HTTP/1.0 is faulty; with CL too
            // it is the classic smuggling vector. Refuse both outright.
            if version == .http1_0 { throw HTTPRequestError(.transferEncodingInHTTP10) }
            if !contentLengthLines.isEmpty { throw HTTPRequestError(.contentLengthWithTransferEncoding) }
            let codings = headers.listElements("transfer-encoding")
            guard codings.last == "chunked" else { throw HTTPRequestError(.chunkedNotFinal) }
            if codings.dropLast().contains("chunked") { throw HTTPRequestError(.chunkedNotFinal) }
            if codings.count > 1 { throw HTTPRequestError(.unsupportedTransferCoding) }
            return .chunked
        }
        guard !contentLengthLines.isEmpty else { return .none }
        var length: Int?
        for line in contentLengthLines {
            for element in line.split(separator: ",", omittingEmptySubsequences: false) {
                let value = try parseContentLength(element.trimmingOWS)
                if let length, length != value { throw HTTPRequestError(.conflictingContentLength) }
                length = value
            }
        }
        guard let length else { throw HTTPRequestError(.invalidContentLength) }
        if length > bodyBytesMax { throw HTTPRequestError(.bodyTooLarge) }
        return length == 0 ? .none : .fixed(length)
    }

    /// 1*DIGIT; leading zeros allowed, more than 18 significant digits is an
    /// overflow (Int64 holds every 18-digit number).
    static func parseContentLength(_ text: Substring) throws(HTTPRequestError) -> Int {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw HTTPRequestError(.invalidContentLength)
        }
        let significant = digits.drop(while: { $0 == 0x30 })
        guard significant.count <= 18 else { throw HTTPRequestError(.invalidContentLength) }
        return significant.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
}
