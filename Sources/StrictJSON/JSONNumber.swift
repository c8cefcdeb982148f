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

    /// How many digits the number has written out in plain decimal, with
    /// no exponent (as PostgreSQL's `numeric` prints it): `1.5e-3` is
    /// `0.0015`, 5 digits; `1e131071` is 131,072. Saturates at
    /// `plainDigitCountCeiling` for exponents that long text could never
    /// spell out. The sign and the decimal point are not counted.
    public var plainDigitCount: Int {
        var integerDigits = 0, fractionDigits = 0, exponent = 0, exponentNegative = false
        var part = 0  // 0: integer part, 1: fraction, 2: exponent
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "."): part = 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"): part = 2
            case UInt8(ascii: "-") where part == 2: exponentNegative = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                switch part {
                case 0: integerDigits += 1
                case 1: fractionDigits += 1
                default:
                    exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
                    if exponent >= Self.plainDigitCountCeiling { return Self.plainDigitCountCeiling }
                }
            default: break  // "-" before the digits, "+" in the exponent
            }
        }
        if exponentNegative { exponent = -exponent }
        let count = max(integerDigits + exponent, 1) + max(fractionDigits - exponent, 0)
        return min(count, Self.plainDigitCountCeiling)
    }

    /// Where `plainDigitCount` stops counting.
    public static let plainDigitCountCeiling = 1_000_000
}
