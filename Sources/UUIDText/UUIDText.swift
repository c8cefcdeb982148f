import Foundation

/// UUIDs as text the way the services and PostgreSQL write them: 36 bytes,
/// 8-4-4-4-12 hex digits separated by hyphens. `parse` takes either case
/// and nothing else (no braces, no `urn:uuid:`, no whitespace); `lowercased`
/// writes the canonical lower-case form.
///
/// Foundation's `UUID(uuidString:)` and `uuidString` do the same through
/// `sscanf` and `sprintf` (about 0.6 and 0.4 µs a call here, against
/// 0.08 and 0.06 µs for these byte loops), on every user id a request
/// names, every uuid column read, every uuid parameter sent and every id
/// a service answers with.
public enum UUIDText {
    /// The length of the text form.
    public static let byteCount = 36

    /// The UUID `text` spells, or nil when it is not exactly the 36-byte form.
    /// A `String` (what every caller has) is read from its contiguous UTF-8
    /// here, in this module: the generic form below, called from another
    /// module, reaches the bytes through witness-table calls (under the
    /// balance bench, 2.7 % of PointsService's CPU went to parsing ids
    /// that way, 1.5 % this way).
    public static func parse(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// The same for any other text (a `Substring`, say).
    public static func parse(_ text: some StringProtocol) -> UUID? {
        if let parsed = text.utf8.withContiguousStorageIfAvailable({ parse(bytes: $0) }) { return parsed }
        return parse(bytes: Array(text.utf8))
    }

    /// The canonical lower-case text of `uuid` (`uuid.uuidString.lowercased()`).
    public static func lowercased(_ uuid: UUID) -> String {
        String(unsafeUninitializedCapacity: byteCount) { text in
            writeLowercased(uuid, into: text, at: 0)
            return byteCount
        }
    }

    /// Writes the lower-case text of `uuid` into `text[offset..<offset + byteCount]`.
    public static func writeLowercased(_ uuid: UUID, into text: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        precondition(offset >= 0 && text.count - offset >= byteCount, "no room for a UUID's text")
        withUnsafeBytes(of: uuid.uuid) { raw in
            var at = offset
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[at] = UInt8(ascii: "-")
                    at += 1
                }
                text[at] = hexDigit(byte >> 4)
                text[at + 1] = hexDigit(byte & 0x0F)
                at += 2
            }
        }
    }

    private static func parse(bytes: some Collection<UInt8>) -> UUID? {
        guard bytes.count == byteCount else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let complete = withUnsafeMutableBytes(of: &value) { out -> Bool in
            var written = 0
            var high: UInt8?
            for (index, byte) in bytes.enumerated() {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard byte == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard let nibble = nibble(byte) else { return false }
                if let first = high {
                    out[written] = first << 4 | nibble
                    written += 1
                    high = nil
                } else {
                    high = nibble
                }
            }
            return written == 16
        }
        return complete ? UUID(uuid: value) : nil
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
