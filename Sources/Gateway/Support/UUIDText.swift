/// Canonical UUID text (8-4-4-4-12 hex digits), checked without Foundation.
public enum UUIDText {
    /// The lower-cased UUID, or nil when `text` is not in canonical form.
    public static func normalized(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return nil }
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard hexValue(byte) != nil else { return nil }
            }
        }
        return text.lowercasedASCII
    }
}
