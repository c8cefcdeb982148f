/// A JSON number kept as its exact text, so that integers beyond 2^53 and
/// decimals survive unchanged; callers ask for the representation they need.
public struct JSONNumber: Sendable, Equatable {
    /// The number exactly as written (RFC 8259 grammar, already validated).
    public let text: String

    /// Wraps already-validated number text (the parser's job).
    init(validatedText: String) { text = validatedText }

    /// A number from text, or nil unless `text` is exactly one RFC 8259
    /// number (no sign "+", no leading zeros, no surrounding whitespace).
    public init?(_ text: String) {
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || (0x30...0x39).contains(first),
            case .number(let number)? = try? StrictJSONParser(documentBytesMax: max(text.utf8.count, 1)).parse(text),
            number.text == text
        else { return nil }
        self = number
    }

    /// A number from an integer.
    public init(integer: Int64) { text = String(integer) }

    /// The value when it is an integer (no fraction, no exponent) that fits
    /// in Int64; nil otherwise.
    public var int64Value: Int64? {
        if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) { return nil }
        return Int64(text)
    }

    /// The value as a binary double (may round).
    public var doubleValue: Double? { Double(text) }
}
