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

    /// What is wrong with `ids`, written one after another just now (in
    /// their order), as version 7 UUIDs: not of version 7, not carrying
    /// a time within a minute of `nowMilliseconds`, or not increasing.
    public static func problems(ofIdsWrittenInOrder ids: [String], nowMilliseconds: Int64) -> [String] {
        var problems: [String] = []
        for id in ids {
            guard let milliseconds = milliseconds(id) else {
                problems.append("not a version 7 UUID: \(id)")
                continue
            }
            if abs(milliseconds - nowMilliseconds) >= 60_000 { problems.append("not the time it was written: \(id)") }
        }
        if ids != ids.sorted() { problems.append("later rows do not have greater ids: \(ids)") }
        return problems
    }
}
