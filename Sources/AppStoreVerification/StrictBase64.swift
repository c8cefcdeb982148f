/// Strict base64 decoders: base64url without padding for JWS parts (RFC 7515)
/// and standard padded base64 for `x5c` entries. Any stray character, wrong
/// padding or non-zero trailing bits makes the input invalid (returns nil),
/// so each byte string has exactly one accepted encoding. Public so the App
/// Store Server API client builds its JWTs with the same code.
public enum StrictBase64 {
    /// Decodes unpadded base64url (`A-Z a-z 0-9 - _`).
    public static func decodeURL<Bytes: Collection>(_ text: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        decode(text, urlAlphabet: true, padded: false)
    }

    /// Decodes padded standard base64 (`A-Z a-z 0-9 + /`, `=` padding).
    public static func decodeStandard<Bytes: Collection>(_ text: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        decode(text, urlAlphabet: false, padded: true)
    }

    /// Encodes as unpadded base64url.
    public static func encodeURL(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encode(bytes, urlAlphabet: true, padded: false), as: UTF8.self)
    }

    /// Encodes as padded standard base64.
    public static func encodeStandard(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encode(bytes, urlAlphabet: false, padded: true), as: UTF8.self)
    }

    /// Sextet value of each byte, 0xFF for bytes outside the alphabet.
    private static let standardTable = makeTable(value62: UInt8(ascii: "+"), value63: UInt8(ascii: "/"))
    private static let urlTable = makeTable(value62: UInt8(ascii: "-"), value63: UInt8(ascii: "_"))

    private static func makeTable(value62 character62: UInt8, value63 character63: UInt8) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        table[Int(character62)] = 62
        table[Int(character63)] = 63
        return table
    }

    private static func decode<Bytes: Collection>(
        _ text: Bytes, urlAlphabet: Bool, padded: Bool
    ) -> [UInt8]? where Bytes.Element == UInt8 {
        // Contiguous inputs (arrays, slices, native strings) decode in place.
        if let result = text.withContiguousStorageIfAvailable({ buffer in
            decode(buffer, urlAlphabet: urlAlphabet, padded: padded)
        }) {
            return result
        }
        return Array(text).withUnsafeBufferPointer { decode($0, urlAlphabet: urlAlphabet, padded: padded) }
    }

    private static func decode(_ input: UnsafeBufferPointer<UInt8>, urlAlphabet: Bool, padded: Bool) -> [UInt8]? {
        var count = input.count
        if padded {
            guard count % 4 == 0 else { return nil }
            var paddingCount = 0
            while paddingCount < 2, count > 0, input[count - 1] == UInt8(ascii: "=") {
                count -= 1
                paddingCount += 1
            }
        }
        guard count % 4 != 1 else { return nil }
        let outputCount = count * 3 / 4
        let table = urlAlphabet ? urlTable : standardTable
        var valid = true
        var accumulator: UInt32 = 0
        let output = table.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initializedCount in
                var written = 0
                var index = 0
                // Four characters -> three bytes; `bad` collects the 0xFF marker of any stray byte.
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
                if valid, index < count {
                    // A tail of 2 or 3 characters: 1 or 2 bytes, leftover bits must be zero.
                    var bitCount = 0
                    while index < count {
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
                }
                initializedCount = written
            }
        }
        // Leftover bits must be zero: otherwise two encodings map to one value.
        guard valid, accumulator == 0, output.count == outputCount else { return nil }
        return output
    }

    private static func encode(_ bytes: some Collection<UInt8>, urlAlphabet: Bool, padded: Bool) -> [UInt8] {
        let alphabet = Array(
            (urlAlphabet
                ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/").utf8)
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
            if remaining > 1 { output.append(alphabet[Int((triple >> 6) & 63)]) } else if padded { output.append(UInt8(ascii: "=")) }
            if remaining > 2 { output.append(alphabet[Int(triple & 63)]) } else if padded { output.append(UInt8(ascii: "=")) }
            index += 3
        }
        return output
    }
}
