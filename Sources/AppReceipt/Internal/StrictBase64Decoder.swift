/// Strict standard base64 (RFC 4648 section 4): `A-Z a-z 0-9 + /`, padded
/// with `=` to a multiple of 4 characters, zero trailing bits, nothing else
/// (no whitespace, no line breaks, no URL alphabet), so each receipt has
/// exactly one accepted text. This is how StoreKit apps send the receipt
/// (`Data.base64EncodedString()` with no options).
///
/// AppStoreVerification has the same rules behind OpenSSL; this copy keeps
/// the module free of C and of other modules.
enum StrictBase64Decoder {
    /// The value of each byte as a base64 digit; 0xFF outside the alphabet.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }()

    /// The decoded bytes, or nil when `text` is not strict padded base64.
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var paddingCount = 0
        while paddingCount < 2, paddingCount < text.count, text[text.count - 1 - paddingCount] == UInt8(ascii: "=") {
            paddingCount += 1
        }
        let digitCount = text.count - paddingCount
        var output: [UInt8] = []
        output.reserveCapacity(digitCount * 3 / 4)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for index in 0..<digitCount {
            let sextet = sextets[Int(text[index])]
            guard sextet != 0xFF else { return nil }
            accumulator = (accumulator << 6) | UInt32(sextet)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // One digit alone cannot make a byte; leftover bits must be zero, or
        // two texts would decode to the same bytes.
        guard digitCount % 4 != 1, accumulator == 0 else { return nil }
        return output
    }
}
