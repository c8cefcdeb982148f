/// A JSON value as parsed by `StrictJSON`. Numbers keep their source text so
/// integers are read exactly (no detour through Double).
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in source order; keys are unique (duplicates are rejected).
    case object([(key: String, value: JSONValue)])

    public static func == (left: JSONValue, right: JSONValue) -> Bool {
        switch (left, right) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The member named `key` of an object, nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}

/// Why `StrictJSON` refused a text.
public struct JSONSyntaxError: Error, Equatable, Sendable {
    public let reason: String
    public let offset: Int
}

/// A small strict JSON (RFC 8259) parser: UTF-8 only, no trailing commas or
/// comments, duplicate keys rejected, nesting limited, nothing after the value.
/// Apple's payloads are plain JSON, so anything lenient parsers would tolerate
/// is treated as tampering.
public enum StrictJSON {
    /// Parses one complete JSON text.
    public static func parse(_ bytes: some Collection<UInt8>, depthMax: Int = VerificationLimits.jsonDepthMax)
        throws(JSONSyntaxError) -> JSONValue
    {
        var parser = Parser(bytes: Array(bytes), depthMax: depthMax)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("trailing characters") }
        return value
    }

    private struct Parser {
        /// Objects with fewer members check duplicate keys by scanning.
        static let linearKeyScanMembersMax = 32
        let bytes: [UInt8]
        let depthMax: Int
        var index = 0

        init(bytes: [UInt8], depthMax: Int) {
            self.bytes = bytes
            self.depthMax = depthMax
        }

        func error(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(reason: reason, offset: index) }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
            guard index < bytes.count else { throw error("unexpected end") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
            case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
            case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
            case UInt8(ascii: "n"): try expectLiteral("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
            default: throw error("unexpected character")
            }
        }

        mutating func expectLiteral(_ literal: String) throws(JSONSyntaxError) {
            for byte in literal.utf8 {
                guard index < bytes.count, bytes[index] == byte else { throw error("bad literal") }
                index += 1
            }
        }

        mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
            guard depth <= depthMax else { throw error("nesting too deep") }
            index += 1
            var members: [(key: String, value: JSONValue)] = []
            var keys = Set<String>()
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected key") }
                let key = try parseString()
                // Small objects (Apple's payloads) scan their few keys; larger
                // ones switch to a set so duplicate detection stays linear.
                if members.count < Self.linearKeyScanMembersMax {
                    guard !members.contains(where: { $0.key == key }) else { throw error("duplicate key") }
                } else {
                    if keys.isEmpty { keys = Set(members.map(\.key)) }
                    guard keys.insert(key).inserted else { throw error("duplicate key") }
                }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected colon") }
                index += 1
                skipWhitespace()
                members.append((key, try parseValue(depth: depth)))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw error("expected comma or brace")
            }
        }

        mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
            guard depth <= depthMax else { throw error("nesting too deep") }
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try parseValue(depth: depth))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw error("expected comma or bracket")
            }
        }

        mutating func parseNumber() throws(JSONSyntaxError) -> String {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("bad number") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw error("bad fraction") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard index < bytes.count, isDigit(bytes[index]) else { throw error("bad exponent") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        mutating func parseString() throws(JSONSyntaxError) -> String {
            index += 1
            var text = ""
            var runStart = index
            while true {
                guard index < bytes.count else { throw error("unterminated string") }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    try appendRun(from: runStart, to: index, into: &text)
                    index += 1
                    return text
                }
                if byte < 0x20 { throw error("control character in string") }
                if byte == UInt8(ascii: "\\") {
                    try appendRun(from: runStart, to: index, into: &text)
                    index += 1
                    text.unicodeScalars.append(try parseEscape())
                    runStart = index
                    continue
                }
                index += 1
            }
        }

        func appendRun(from start: Int, to end: Int, into text: inout String) throws(JSONSyntaxError) {
            guard start < end else { return }
            guard let run = String(validating: bytes[start..<end], as: UTF8.self) else {
                throw JSONSyntaxError(reason: "invalid UTF-8", offset: start)
            }
            text += run
        }

        mutating func parseEscape() throws(JSONSyntaxError) -> Unicode.Scalar {
            guard index < bytes.count else { throw error("unterminated escape") }
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
            case UInt8(ascii: "u"):
                let high = try parseHex4()
                if (0xD800...0xDBFF).contains(high) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    else { throw error("lone surrogate") }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("bad surrogate pair") }
                    let combined = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    guard let scalar = Unicode.Scalar(combined) else { throw error("bad surrogate pair") }
                    return scalar
                }
                guard let scalar = Unicode.Scalar(high) else { throw error("lone surrogate") }
                return scalar
            default: throw error("bad escape")
            }
        }

        mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("short unicode escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw error("bad unicode escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }
    }
}
