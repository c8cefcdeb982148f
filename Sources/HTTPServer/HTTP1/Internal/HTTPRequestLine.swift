/// The request line: method SP request-target SP HTTP-version, with
/// exactly one space between parts (RFC 9112 §3). The target is kept in
/// origin form: an absolute-form target ("http://host/path?q", which a
/// server must accept, RFC 9112 §3.2.2) is reduced to its path and query.
struct HTTPRequestLine: Sendable {
    /// The methods HTTP defines for an origin server (RFC 9110 9.3, and PATCH
    /// of RFC 5789): the responder decides which a resource allows and answers
    /// the others 405 with `Allow`. Other valid tokens (and CONNECT, which
    /// asks for a tunnel this server never opens) answer 501.
    static let implementedMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH",
    ]

    let method: String
    let target: String
    let version: HTTPVersion

    init(bytes: ArraySlice<UInt8>) throws(HTTPRequestError) {
        // The three parts around the first two spaces (the version keeps any
        // later one, and fails for it), found without building a list.
        guard let firstSpace = bytes.firstIndex(of: HTTPByte.space),
            let secondSpace = bytes[(firstSpace + 1)...].firstIndex(of: HTTPByte.space),
            firstSpace > bytes.startIndex, secondSpace > firstSpace + 1
        else { throw HTTPRequestError(.malformedRequestLine) }
        let methodBytes = bytes[..<firstSpace]
        let targetBytes = bytes[(firstSpace + 1)..<secondSpace]
        version = try Self.parseVersion(bytes[(secondSpace + 1)...])
        guard methodBytes.allSatisfy(HTTPByte.isTokenCharacter) else { throw HTTPRequestError(.invalidMethod) }
        guard let originForm = Self.originForm(of: targetBytes) else { throw HTTPRequestError(.invalidTarget) }
        method = String(decoding: methodBytes, as: UTF8.self)
        target = String(decoding: originForm, as: UTF8.self)
    }

    /// The target in origin form: itself, or an absolute-form target's path
    /// and query ("/" when it has no path); nil when it is neither.
    static func originForm(of target: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        if isOriginForm(target) { return target }
        let lowered = target.prefix(8).map { $0 | 0x20 }
        let schemeLength: Int
        if lowered.starts(with: Array("http://".utf8)) {
            schemeLength = 7
        } else if lowered.starts(with: Array("https://".utf8)) {
            schemeLength = 8
        } else {
            return nil
        }
        let afterScheme = target.dropFirst(schemeLength)
        let pathStart =
            afterScheme.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? afterScheme.endIndex
        let authority = afterScheme[..<pathStart]
        guard !authority.isEmpty, authority.allSatisfy(isAuthorityCharacter) else { return nil }
        let rest = afterScheme[pathStart...]
        if rest.isEmpty { return Array("/".utf8)[...] }
        // "http://host?q" has an empty path: "/?q".
        let path = rest.first == UInt8(ascii: "?") ? ArraySlice(Array("/".utf8) + rest) : rest
        return isOriginForm(path) ? path : nil
    }

    /// host [ ":" port ] as RFC 3986 allows it: reg-name or IPv4 characters,
    /// an IP literal's brackets, and the port's colon; no userinfo.
    private static func isAuthorityCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "%"): return true
        default: return isUnreservedOrSubDelimiter(byte)
        }
    }

    /// unreserved / sub-delims of RFC 3986 §2.2–2.3: what a path and an
    /// authority both allow.
    private static func isUnreservedOrSubDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"),
            UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
            return true
        default:
            return false
        }
    }

    /// "HTTP/" DIGIT "." DIGIT; 1.0 and 1.x (x >= 1, treated as 1.1).
    private static func parseVersion(_ bytes: ArraySlice<UInt8>) throws(HTTPRequestError) -> HTTPVersion {
        let start = bytes.startIndex
        guard bytes.count == 8, bytes[start..<(start + 5)].elementsEqual("HTTP/".utf8),
            bytes[start + 6] == UInt8(ascii: "."),
            let major = digit(bytes[start + 5]), let minor = digit(bytes[start + 7])
        else { throw HTTPRequestError(.malformedRequestLine) }
        guard major == 1 else { throw HTTPRequestError(.unsupportedVersion) }
        return minor == 0 ? .http1_0 : .http1_1
    }

    private static func digit(_ byte: UInt8) -> UInt8? {
        byte >= 0x30 && byte <= 0x39 ? byte - 0x30 : nil
    }

    /// absolute-path [ "?" query ] with pchar, "/" and "?" only and every
    /// "%" followed by two hex digits. No fragments.
    static func isOriginForm(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.first == UInt8(ascii: "/") else { return false }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, hexValue(bytes[index + 1]) != nil, hexValue(bytes[index + 2]) != nil
                else { return false }
                index += 3
                continue
            }
            guard isTargetCharacter(byte) else { return false }
            index += 1
        }
        return true
    }

    private static func isTargetCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"): return true
        default: return isUnreservedOrSubDelimiter(byte)
        }
    }
}
