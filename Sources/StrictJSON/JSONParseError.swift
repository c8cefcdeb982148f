/// Why a byte sequence is not acceptable JSON, and where (byte offset).
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The failure kinds, stable for tests and logs.
    public enum Kind: Sendable, Equatable {
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
    }

    public let kind: Kind
    /// Offset of the offending byte from the start of the document.
    public let byteOffset: Int

    public init(kind: Kind, byteOffset: Int) {
        self.kind = kind
        self.byteOffset = byteOffset
    }

    /// A short reason with the offset, safe to log: it never quotes document
    /// content (a duplicated key is named by its length only).
    public var description: String {
        let reason: String
        switch kind {
        case .documentTooLarge: reason = "document too large"
        case .unexpectedEnd: reason = "unexpected end"
        case .unexpectedByte(let byte): reason = "unexpected byte 0x" + String(byte, radix: 16)
        case .trailingContent: reason = "trailing content"
        case .invalidUTF8: reason = "invalid UTF-8"
        case .controlCharacterInString: reason = "control character in string"
        case .invalidEscape: reason = "invalid escape"
        case .loneSurrogate: reason = "lone surrogate"
        case .invalidNumber: reason = "invalid number"
        case .duplicateKey(let key): reason = "duplicate key (\(key.utf8.count) bytes)"
        case .depthLimitExceeded: reason = "nesting too deep"
        }
        return "\(reason) at byte \(byteOffset)"
    }
}
