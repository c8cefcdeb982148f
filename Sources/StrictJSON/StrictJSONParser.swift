/// A strict RFC 8259 parser: one top-level value, no duplicate keys, valid
/// UTF-8 only, no lone surrogates, bounded size and nesting. Whatever lenient
/// parsers would tolerate (comments, trailing commas, NaN, BOM) is refused:
/// for signed payloads such leniency is a tampering surface.
public struct StrictJSONParser: Sendable {
    /// Largest document accepted, in bytes.
    public let documentBytesMax: Int
    /// Deepest nesting of arrays and objects accepted.
    public let depthMax: Int

    public init(
        documentBytesMax: Int = StrictJSONLimits.documentBytesMaxDefault,
        depthMax: Int = StrictJSONLimits.depthMaxDefault
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

/// The parser's position in one document. Every read checks `index` against
/// `bytes.count` explicitly instead of going through an optional.
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

    /// The error for the byte at `index`: unexpected, or the end.
    func unexpected() -> JSONParseError {
        index < bytes.count ? fail(.unexpectedByte(bytes[index])) : fail(.unexpectedEnd)
    }

    func isAt(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw fail(.unexpectedEnd) }
        switch bytes[index] {
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        default: throw unexpected()
        }
    }

    mutating func parseLiteral(_ literal: StaticString) throws(JSONParseError) {
        for offset in 0..<literal.utf8CodeUnitCount {
            guard isAt(literal.utf8Start[offset]) else { throw unexpected() }
            index += 1
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONObject {
        if depth > depthMax { throw fail(.depthLimitExceeded) }
        index += 1  // "{"
        var object = JSONObject()
        skipWhitespace()
        if isAt(UInt8(ascii: "}")) { index += 1; return object }
        while true {
            skipWhitespace()
            let keyOffset = index
            guard isAt(UInt8(ascii: "\"")) else { throw unexpected() }
            let key = try parseString()
            skipWhitespace()
            guard isAt(UInt8(ascii: ":")) else { throw unexpected() }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            if !object.insert(key, value) { throw fail(.duplicateKey(key), at: keyOffset) }
            if try consumeSeparator(closing: UInt8(ascii: "}")) { return object }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> [JSONValue] {
        if depth > depthMax { throw fail(.depthLimitExceeded) }
        index += 1  // "["
        var elements: [JSONValue] = []
        skipWhitespace()
        if isAt(UInt8(ascii: "]")) { index += 1; return elements }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            if try consumeSeparator(closing: UInt8(ascii: "]")) { return elements }
        }
    }

    /// After a member or element: true past the `closing` byte, false past
    /// a comma; anything else is an error.
    mutating func consumeSeparator(closing: UInt8) throws(JSONParseError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw fail(.unexpectedEnd) }
        let next = bytes[index]
        index += 1
        if next == UInt8(ascii: ",") { return false }
        if next == closing { return true }
        throw fail(.unexpectedByte(next), at: index - 1)
    }

    /// number = [ "-" ] int [ frac ] [ exp ]; int = "0" / digit1-9 *DIGIT.
    mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw fail(.unexpectedEnd) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if isDigitAt(index) { throw fail(.invalidNumber) }
        } else if isDigitAt(index) {
            skipDigits()
        } else {
            throw fail(.invalidNumber)
        }
        if isAt(UInt8(ascii: ".")) {
            index += 1
            guard isDigitAt(index) else { throw fail(.invalidNumber) }
            skipDigits()
        }
        if isAt(UInt8(ascii: "e")) || isAt(UInt8(ascii: "E")) {
            index += 1
            if isAt(UInt8(ascii: "+")) || isAt(UInt8(ascii: "-")) { index += 1 }
            guard isDigitAt(index) else { throw fail(.invalidNumber) }
            skipDigits()
        }
        return JSONNumber(validatedText: String(decoding: bytes[start..<index], as: UTF8.self))
    }

    func isDigitAt(_ position: Int) -> Bool {
        position < bytes.count && bytes[position] &- 0x30 < 10
    }

    mutating func skipDigits() {
        while isDigitAt(index) { index += 1 }
    }

    /// Strings are read in runs of plain bytes between escapes: each run is
    /// validated and appended whole, which is much cheaper than decoding
    /// scalar by scalar. A string without escapes is a single run.
    mutating func parseString() throws(JSONParseError) -> String {
        let start = index
        index += 1  // opening quote
        var text = ""
        var isASCII = true
        while true {
            let runStart = index
            let run = Self.plainRun(in: bytes, from: runStart)
            index = run.end
            try appendRun(from: runStart, isASCII: run.isASCII, into: &text)
            isASCII = isASCII && run.isASCII
            guard index < bytes.count else { throw fail(.unexpectedEnd) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                if !isASCII && !Self.isStreamSafe(text) { throw fail(.tooManyCombiningMarks, at: start) }
                return text
            }
            if byte < 0x20 { throw fail(.controlCharacterInString) }
            let scalar = try parseEscape()
            isASCII = isASCII && scalar.isASCII
            text.unicodeScalars.append(scalar)
        }
    }

    /// Whether `text` has no run of more than
    /// `StrictJSONLimits.combiningMarksInARowMax` non-starters: scalars with
    /// a combining class, and the three whose class is 0 but whose
    /// decomposition starts with non-starters (U+0F73, U+0F75, U+0F81; UAX
    /// #15's non-starter decompositions). Linear; called for non-ASCII
    /// strings only.
    static func isStreamSafe(_ text: String) -> Bool {
        var run = 0
        for scalar in text.unicodeScalars {
            let isNonStarter =
                scalar.properties.canonicalCombiningClass != .notReordered
                || scalar.value == 0x0F73 || scalar.value == 0x0F75 || scalar.value == 0x0F81
            run = isNonStarter ? run + 1 : 0
            if run > StrictJSONLimits.combiningMarksInARowMax { return false }
        }
        return true
    }

    /// Where the run of plain string bytes (no quote, backslash or control
    /// character) starting at `start` ends, and whether it is all ASCII. The
    /// hot loop of the parser (certificate chains are long strings), so it
    /// reads through a buffer pointer that never leaves this function.
    static func plainRun(in bytes: [UInt8], from start: Int) -> (end: Int, isASCII: Bool) {
        bytes.withUnsafeBufferPointer { buffer in
            var position = start
            var highBits: UInt8 = 0
            while position < buffer.count {
                let byte = buffer[position]
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { break }
                highBits |= byte
                position += 1
            }
            return (position, highBits < 0x80)
        }
    }

    /// Appends `bytes[start..<index]`, refusing malformed UTF-8 (overlong
    /// forms, encoded surrogates, code points above U+10FFFF: RFC 3629).
    func appendRun(from start: Int, isASCII: Bool, into text: inout String) throws(JSONParseError) {
        guard start < index else { return }
        let run = bytes[start..<index]
        if isASCII {
            text += String(decoding: run, as: UTF8.self)
            return
        }
        guard let decoded = String(validating: run, as: UTF8.self) else {
            throw fail(.invalidUTF8, at: Self.firstInvalidUTF8Offset(in: run))
        }
        text += decoded
    }

    /// Where the first malformed sequence of `run` starts (only called on
    /// runs already known to be malformed, to report a precise offset).
    static func firstInvalidUTF8Offset(in run: ArraySlice<UInt8>) -> Int {
        var position = run.startIndex
        while position < run.endIndex {
            let lead = run[position]
            let length: Int
            var value: UInt32
            let minimum: UInt32
            switch lead {
            case 0x00..<0x80: position += 1; continue
            case 0xC2...0xDF: length = 2; value = UInt32(lead & 0x1F); minimum = 0x80
            case 0xE0...0xEF: length = 3; value = UInt32(lead & 0x0F); minimum = 0x800
            case 0xF0...0xF4: length = 4; value = UInt32(lead & 0x07); minimum = 0x10000
            default: return position
            }
            guard position + length <= run.endIndex else { return position }
            for offset in 1..<length {
                let continuation = run[position + offset]
                guard continuation & 0xC0 == 0x80 else { return position }
                value = value << 6 | UInt32(continuation & 0x3F)
            }
            guard value >= minimum, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value) else { return position }
            position += length
        }
        return run.startIndex
    }

    mutating func parseEscape() throws(JSONParseError) -> Unicode.Scalar {
        let start = index
        index += 1  // backslash
        guard index < bytes.count else { throw fail(.unexpectedEnd) }
        let byte = bytes[index]
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
            guard isAt(UInt8(ascii: "\\")), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
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
            guard index < bytes.count else { throw fail(.unexpectedEnd) }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail(.invalidEscape)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
