/// Byte classes of the ASCII rules. A UTF-8 byte of a non-ASCII scalar is
/// at least 0x80, so it never falls in any of these classes.
enum ASCIIByte {
    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    static func isLowerLetter(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }
    static func isUpperLetter(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
    static func isLowerHexDigit(_ byte: UInt8) -> Bool { isDigit(byte) || (byte >= 0x61 && byte <= 0x66) }
    static func isHexDigit(_ byte: UInt8) -> Bool { isLowerHexDigit(byte) || (byte >= 0x41 && byte <= 0x46) }
    /// Printable and not a space: `!` through `~`.
    static func isVisible(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }
}
