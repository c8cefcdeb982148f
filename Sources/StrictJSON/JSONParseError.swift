/// Why a byte sequence is not acceptable JSON, and where (byte offset).
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The failure kinds, stable for tests and logs. Their description is
    /// safe to log or answer: it never quotes document content (a
    /// duplicated key is named by its length only).
    public enum Kind: Sendable, Equatable, CustomStringConvertible {
        /// The document exceeds the caller's byte limit.
        case documentTooLarge
        /// The input ended inside a value.
        case unexpectedEnd
        /// A byte that cannot start or continue the current construct.
        case unexpectedByte(UInt8)
        /// Bytes after the top-level value (other than whitespace).
        case trailingContent
        /// Malformed UTF-8 inside a string.
        case invalidUTF8
        /// A raw control character (below U+0020) inside a string.
        case controlCharacterInString
        /// An unknown escape or a malformed \u escape.
        case invalidEscape
        /// A \u escape naming half of a surrogate pair on its own.
        case loneSurrogate
        /// A number outside the RFC 8259 grammar (e.g. leading zero, "1.").
        case invalidNumber
        /// An object repeats a key (compared after unescaping).
        case duplicateKey(String)
        /// Arrays and objects nest deeper than the limit.
        case depthLimitExceeded
        /// A string holds a longer run of combining marks than
        /// `StrictJSONLimits.combiningMarksInARowMax` (not stream-safe text).
        case tooManyCombiningMarks

        public var description: String {
            switch self {
            case .documentTooLarge: return "document too large"
            case .unexpectedEnd: return "unexpected end"
            case .unexpectedByte(let byte): return "unexpected byte 0x" + String(byte, radix: 16)
            case .trailingContent: return "trailing content"
            case .invalidUTF8: return "invalid UTF-8"
            case .controlCharacterInString: return "control character in string"
            case .invalidEscape: return "invalid escape"
            case .loneSurrogate: return "lone surrogate"
            case .invalidNumber: return "invalid number"
            case .duplicateKey(let key): return "duplicate key (\(key.utf8.count) bytes)"
            case .depthLimitExceeded: return "nesting too deep"
            case .tooManyCombiningMarks: return "too many combining marks in a row"
            }
        }
    }

    public let kind: Kind
    /// Offset of the offending byte from the start of the document.
    public let byteOffset: Int

    public init(kind: Kind, byteOffset: Int) {
        self.kind = kind
        self.byteOffset = byteOffset
    }

    /// A short reason with the offset, safe to log (`Kind.description`).
    public var description: String { "\(kind) at byte \(byteOffset)" }
}
