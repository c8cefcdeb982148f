import CLibPQ

/// Reads the `options` an operator put in a connection string (URL
/// `?options=...` or `options='...'`), so the pool's own session settings are
/// added to them instead of replacing them.
enum ConnectionStringOptions {
    /// The `options` value, or nil when absent or the string does not parse
    /// (connecting then reports the parse error).
    static func options(in connectionString: String) -> String? {
        guard let parsed = PQconninfoParse(connectionString, nil) else { return nil }
        defer { PQconninfoFree(parsed) }
        var entry = parsed
        while let keyword = entry.pointee.keyword {
            if String(cString: keyword) == "options", let value = entry.pointee.val {
                let text = String(cString: value)
                return text.isEmpty ? nil : text
            }
            entry += 1
        }
        return nil
    }
}
