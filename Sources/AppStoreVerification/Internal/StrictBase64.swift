/// Strict base64 decoders: base64url without padding for JWS parts (RFC 7515)
/// and standard padded base64 for `x5c` entries. Any stray character, wrong
/// padding or non-zero trailing bits makes the input invalid (returns nil),
/// so each byte string has exactly one accepted encoding.
enum StrictBase64 {
    /// Decodes unpadded base64url (`A-Z a-z 0-9 - _`).
    static func decodeURL<Bytes: Collection>(_ text: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        decode(text, urlAlphabet: true, padded: false)
    }

    /// Decodes padded standard base64 (`A-Z a-z 0-9 + /`, `=` padding).
    static func decodeStandard<Bytes: Collection>(_ text: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        decode(text, urlAlphabet: false, padded: true)
    }

    /// Encodes as unpadded base64url.
    static func encodeURL(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encode(bytes, urlAlphabet: true, padded: false), as: UTF8.self)
    }

    /// Encodes as padded standard base64.
    static func encodeStandard(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encode(bytes, urlAlphabet: false, padded: true), as: UTF8.self)
    }

    private static func value(of character: UInt8, urlAlphabet: Bool) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-") where urlAlphabet: return 62
        case UInt8(ascii: "_") where urlAlphabet: return 63
        case UInt8(ascii: "+") where !urlAlphabet: return 62
        case UInt8(ascii: "/") where !urlAlphabet: return 63
        default: return nil
        }
    }

    private static func decode<Bytes: Collection>(
        _ text: Bytes, urlAlphabet: Bool, padded: Bool
    ) -> [UInt8]? where Bytes.Element == UInt8 {
        var characters = Array(text)
        if padded {
            guard characters.count % 4 == 0 else { return nil }
            var paddingCount = 0
            while paddingCount < 2, characters.last == UInt8(ascii: "=") {
                characters.removeLast()
                paddingCount += 1
            }
        }
        guard characters.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for character in characters {
            guard let sextet = value(of: character, urlAlphabet: urlAlphabet) else { return nil }
            accumulator = (accumulator << 6) | UInt32(sextet)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // Leftover bits must be zero: otherwise two encodings map to one value.
        guard accumulator == 0 else { return nil }
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
