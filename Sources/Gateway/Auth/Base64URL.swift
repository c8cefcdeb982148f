/// Strict base64url without padding (RFC 7515 §2 / RFC 4648 §5): only the
/// URL-safe alphabet, no "=", no whitespace, and non-canonical encodings
/// (stray bits in the last character) refused, so one byte string has
/// exactly one accepted text.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// True for the 64 characters of the base64url alphabet.
    public static func isAlphabetByte(_ byte: UInt8) -> Bool { sextet(byte) != nil }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }

    /// Encodes without padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            output.append(alphabet[Int(first >> 2)])
            output.append(alphabet[Int((first & 0x03) << 4 | (second ?? 0) >> 4)])
            guard let second else { break }
            output.append(alphabet[Int((second & 0x0F) << 2 | (third ?? 0) >> 6)])
            guard let third else { break }
            output.append(alphabet[Int(third & 0x3F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes strictly; nil for anything but canonical unpadded base64url.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        if text.count % 4 == 1 { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for byte in text {
            guard let value = sextet(byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // Leftover bits must be zero in a canonical encoding.
        guard accumulator == 0 else { return nil }
        return output
    }
}
