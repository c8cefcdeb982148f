/// Reads a version 7 UUID (RFC 9562) in its text form: the Unix time in
/// milliseconds of its first 48 bits, or nil when the text is not a UUID
/// of version 7 and variant 10 (the ids `uuid_v7()` gives new rows).
public enum VersionSevenUUID {
    public static func milliseconds(_ text: String) -> Int64? {
        let hex = Array(text.lowercased().filter { $0 != "-" })
        guard text.count == 36, hex.count == 32, hex.allSatisfy(\.isHexDigit) else { return nil }
        guard hex[12] == "7", "89ab".contains(hex[16]) else { return nil }
        return Int64(String(hex[0..<12]), radix: 16)
    }
}
