/// A strict RFC 8259 parser: one top-level value, no duplicate keys, valid
/// UTF-8 only, no lone surrogates, bounded size and nesting. Whatever
/// Foundation would tolerate (comments, trailing commas, NaN, BOM) is refused.
public struct StrictJSONParser: Sendable {
    /// Largest document accepted, in bytes.
    public let documentBytesMax: Int
    /// Deepest nesting of arrays and objects accepted.
    public let depthMax: Int

    public init(
        documentBytesMax: Int = GatewayLimits.requestBodyBytesMax,
        depthMax: Int = GatewayLimits.jsonDepthMax
    ) {
        precondition(documentBytesMax > 0 && depthMax > 0)
        self.documentBytesMax = documentBytesMax
        self.depthMax = depthMax
    }

    /// Parses a whole document.
    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        if bytes.count > documentBytesMax {
            throw JSONParseError(kind: .documentTooLarge, byteOffset: documentBytesMax)
        }
        var cursor = Cursor(bytes: bytes, depthMax: depthMax)
        cursor.skipWhitespace()
        let value = try cursor.parseValue(depth: 0)
        cursor.skipWhitespace()
        if cursor.index != bytes.count {
            throw JSONParseError(kind: .trailingContent, byteOffset: cursor.index)
        }
        return value
    }

    /// Parses text (convenience for tests and token segments).
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}

/// The parser's position in one document.
private struct Cursor {
    let bytes: [UInt8]
    let depthMax: Int
    var index = 0

    init(bytes: [UInt8], depthMax: Int) {
        self.bytes = bytes
        self.depthMax = depthMax
    }

    func fail(_ kind: JSONParseError.Kind, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(kind: kind, byteOffset: offset ?? index)
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            index += 1
        }
    }

    mutating func expect(_ byte: UInt8) throws(JSONParseError) {
        guard let found = current else { throw fail(.unexpectedEnd) }
        guard found == byte else { throw fail(.unexpectedByte(found)) }
        index += 1
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw fail(.unexpectedEnd) }
        switch byte {
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw fail(.unexpectedByte(byte))
        }
    }

    mutating func parseLiteral(_ literal: String) throws(JSONParseError) {
        for expected in literal.utf8 {
            try expect(expected)
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONObject {
        if depth > depthMax { throw fail(.depthLimitExceeded) }
        index += 1  // "{"
        var object = JSONObject()
        skipWhitespace()
        if current == UInt8(ascii: "}") { index += 1; return object }
        while true {
            skipWhitespace()
            let keyOffset = index
            guard let byte = current else { throw fail(.unexpectedEnd) }
            guard byte == UInt8(ascii: "\"") else { throw fail(.unexpectedByte(byte)) }
            let key = try parseString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            let value = try parseValue(depth: depth)
            if !object.insert(key, value) { throw fail(.duplicateKey(key), at: keyOffset) }
            skipWhitespace()
            guard let next = current else { throw fail(.unexpectedEnd) }
            index += 1
            if next == UInt8(ascii: "}") { return object }
            if next != UInt8(ascii: ",") { throw fail(.unexpectedByte(next), at: index - 1) }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> [JSONValue] {
        if depth > depthMax { throw fail(.depthLimitExceeded) }
        index += 1  // "["
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { index += 1; return elements }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard let next = current else { throw fail(.unexpectedEnd) }
            index += 1
            if next == UInt8(ascii: "]") { return elements }
            if next != UInt8(ascii: ",") { throw fail(.unexpectedByte(next), at: index - 1) }
        }
    }

    /// number = [ "-" ] int [ frac ] [ exp ]; int = "0" / digit1-9 *DIGIT.
    mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current else { throw fail(.unexpectedEnd) }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, isDigit(next) { throw fail(.invalidNumber) }
        } else if isDigit(first) {
            skipDigits()
        } else {
            throw fail(.invalidNumber)
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let next = current, isDigit(next) else { throw fail(.invalidNumber) }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let next = current, isDigit(next) else { throw fail(.invalidNumber) }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        return JSONNumber(validatedText: text)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        while true {
            guard let byte = current else { throw fail(.unexpectedEnd) }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                scalars.append(try parseEscape())
            case 0x00..<0x20:
                throw fail(.controlCharacterInString)
            case 0x20..<0x80:
                scalars.append(Unicode.Scalar(byte))
                index += 1
            default:
                scalars.append(try parseUTF8Scalar())
            }
        }
    }

    mutating func parseEscape() throws(JSONParseError) -> Unicode.Scalar {
        let start = index
        index += 1  // backslash
        guard let byte = current else { throw fail(.unexpectedEnd) }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"): break
        default: throw fail(.invalidEscape, at: start)
        }
        let high = try parseHex4()
        if (0xDC00...0xDFFF).contains(high) { throw fail(.loneSurrogate, at: start) }
        if (0xD800...0xDBFF).contains(high) {
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw fail(.loneSurrogate, at: start)
            }
            index += 2
            let low = try parseHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw fail(.loneSurrogate, at: start) }
            let combined = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            guard let scalar = Unicode.Scalar(combined) else { throw fail(.invalidEscape, at: start) }
            return scalar
        }
        guard let scalar = Unicode.Scalar(high) else { throw fail(.invalidEscape, at: start) }
        return scalar
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw fail(.unexpectedEnd) }
            guard let digit = hexValue(byte) else { throw fail(.invalidEscape) }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// Decodes one multi-byte UTF-8 sequence, refusing overlong forms,
    /// surrogates and code points above U+10FFFF (RFC 3629).
    mutating func parseUTF8Scalar() throws(JSONParseError) -> Unicode.Scalar {
        let start = index
        let lead = bytes[index]
        let length: Int
        var value: UInt32
        var minimum: UInt32
        switch lead {
        case 0xC2...0xDF: length = 2; value = UInt32(lead & 0x1F); minimum = 0x80
        case 0xE0...0xEF: length = 3; value = UInt32(lead & 0x0F); minimum = 0x800
        case 0xF0...0xF4: length = 4; value = UInt32(lead & 0x07); minimum = 0x10000
        default: throw fail(.invalidUTF8)
        }
        guard index + length <= bytes.count else { throw fail(.invalidUTF8, at: start) }
        for offset in 1..<length {
            let continuation = bytes[index + offset]
            guard continuation & 0xC0 == 0x80 else { throw fail(.invalidUTF8, at: start) }
            value = value << 6 | UInt32(continuation & 0x3F)
        }
        guard value >= minimum, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value),
            let scalar = Unicode.Scalar(value)
        else { throw fail(.invalidUTF8, at: start) }
        index += length
        return scalar
    }
}
