/// Strict base64 (RFC 4648): standard padded base64 (section 4: `x5c`
/// certificates, PEM bodies, App Store receipts) and base64url without
/// padding (section 5, as JWS and JWT use it, RFC 7515 section 2). Decoding
/// accepts exactly one text per byte string: no whitespace or line breaks,
/// no characters of the other alphabet, `=` only as padding of standard
/// base64, and zero trailing bits. Anything else is a `Base64Error`.
public enum StrictBase64 {
    /// Encodes as padded standard base64 (`A-Z a-z 0-9 + /`, `=`).
    public static func encodeStandard(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encode(bytes, alphabet: standardAlphabet, padded: true), as: UTF8.self)
    }

    /// Encodes as unpadded base64url (`A-Z a-z 0-9 - _`).
    public static func encodeURL(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encode(bytes, alphabet: urlAlphabet, padded: false), as: UTF8.self)
    }

    /// Decodes padded standard base64.
    public static func decodeStandard(_ text: some Collection<UInt8>) throws(Base64Error) -> [UInt8] {
        try decode(text, table: standardTable, padded: true)
    }

    /// Decodes padded standard base64 from a string.
    public static func decodeStandard(_ text: some StringProtocol) throws(Base64Error) -> [UInt8] {
        try decode(text.utf8, table: standardTable, padded: true)
    }

    /// Decodes unpadded base64url.
    public static func decodeURL(_ text: some Collection<UInt8>) throws(Base64Error) -> [UInt8] {
        try decode(text, table: urlTable, padded: false)
    }

    /// Decodes unpadded base64url from a string.
    public static func decodeURL(_ text: some StringProtocol) throws(Base64Error) -> [UInt8] {
        try decode(text.utf8, table: urlTable, padded: false)
    }

    /// Whether `byte` is one of the 64 characters of base64url (a quick
    /// shape check before decoding, e.g. of a bearer token). Inlinable range
    /// checks, not the decoding table: callers test every byte of a JWS, and
    /// the table, a lazily initialised global in another module, cost a call
    /// and a `swift_once` per byte.
    @inlinable
    public static func isURLAlphabetByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    // MARK: Tables.

    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The sextet of each byte; 0xFF for bytes outside the alphabet.
    private static let standardTable = makeTable(standardAlphabet)
    private static let urlTable = makeTable(urlAlphabet)

    private static func makeTable(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }

    // MARK: Decoding.

    private static func decode(
        _ text: some Collection<UInt8>, table: [UInt8], padded: Bool
    ) throws(Base64Error) -> [UInt8] {
        // Contiguous inputs (arrays, slices, native strings) decode in place.
        let result =
            text.withContiguousStorageIfAvailable { decode($0, table: table, padded: padded) }
            ?? Array(text).withUnsafeBufferPointer { decode($0, table: table, padded: padded) }
        return try result.get()
    }

    private static func decode(
        _ input: UnsafeBufferPointer<UInt8>, table: [UInt8], padded: Bool
    ) -> Result<[UInt8], Base64Error> {
        var count = input.count
        if padded {
            guard count % 4 == 0 else { return .failure(lengthError(input, table: table, padded: padded)) }
            var paddingCount = 0
            while paddingCount < 2, count > 0, input[count - 1] == UInt8(ascii: "=") {
                count -= 1
                paddingCount += 1
            }
        }
        guard count % 4 != 1 else { return .failure(lengthError(input, table: table, padded: padded)) }
        let outputCount = count * 3 / 4
        var accumulator: UInt32 = 0
        var valid = true
        let output = table.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initializedCount in
                var written = 0
                var index = 0
                // Four characters -> three bytes; the 0xFF marker of any stray byte shows in the top bits.
                while index + 4 <= count {
                    let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                    let c = table[Int(input[index + 2])], d = table[Int(input[index + 3])]
                    if (a | b | c | d) & 0xC0 != 0 { valid = false; break }
                    let quad = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    buffer[written] = UInt8(truncatingIfNeeded: quad >> 16)
                    buffer[written + 1] = UInt8(truncatingIfNeeded: quad >> 8)
                    buffer[written + 2] = UInt8(truncatingIfNeeded: quad)
                    written += 3
                    index += 4
                }
                // A tail of 2 or 3 characters makes 1 or 2 bytes.
                var bitCount = 0
                while valid, index < count {
                    let sextet = table[Int(input[index])]
                    if sextet & 0xC0 != 0 { valid = false; break }
                    accumulator = (accumulator << 6) | UInt32(sextet)
                    bitCount += 6
                    if bitCount >= 8 {
                        bitCount -= 8
                        buffer[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount))
                        written += 1
                        accumulator &= (1 << UInt32(bitCount)) - 1
                    }
                    index += 1
                }
                initializedCount = written
            }
        }
        guard valid else { return .failure(firstInvalidByte(input, count: count, table: table)) }
        // Leftover bits must be zero: otherwise two texts map to one value.
        guard accumulator == 0 else { return .failure(.nonCanonical) }
        return .success(output)
    }

    /// The error for the first byte outside the alphabet among the first
    /// `count` (slow path, only after decoding failed).
    private static func firstInvalidByte(_ input: UnsafeBufferPointer<UInt8>, count: Int, table: [UInt8]) -> Base64Error
    {
        for offset in 0..<count where table[Int(input[offset])] & 0xC0 != 0 {
            return input[offset] == UInt8(ascii: "=")
                ? .invalidPadding(offset: offset) : .invalidCharacter(offset: offset)
        }
        return .invalidCharacter(offset: count)
    }

    /// For a text of impossible length: a stray character explains it
    /// better than the length does (padding counts as stray only where
    /// there is none: in base64url).
    private static func lengthError(_ input: UnsafeBufferPointer<UInt8>, table: [UInt8], padded: Bool) -> Base64Error {
        for offset in 0..<input.count where table[Int(input[offset])] & 0xC0 != 0 {
            if input[offset] != UInt8(ascii: "=") { return .invalidCharacter(offset: offset) }
            if !padded { return .invalidPadding(offset: offset) }
        }
        return .invalidLength(input.count)
    }

    // MARK: Encoding.

    private static func encode(_ bytes: some Collection<UInt8>, alphabet: [UInt8], padded: Bool) -> [UInt8] {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index < input.count {
            let remaining = input.count - index
            let first = UInt32(input[index])
            let second = remaining > 1 ? UInt32(input[index + 1]) : 0
            let third = remaining > 2 ? UInt32(input[index + 2]) : 0
            let triple = first << 16 | second << 8 | third
            output.append(alphabet[Int((triple >> 18) & 63)])
            output.append(alphabet[Int((triple >> 12) & 63)])
            if remaining > 1 {
                output.append(alphabet[Int((triple >> 6) & 63)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
            if remaining > 2 {
                output.append(alphabet[Int(triple & 63)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
            index += 3
        }
        return output
    }
}
