import Foundation
import UUIDText

/// A statement parameter, sent to the server as text (the server infers or
/// casts the type, e.g. `$1::uuid`).
public enum PostgresValue: Sendable, Hashable {
    case null
    case text(String)
    case int64(Int64)
    case bool(Bool)
    case uuid(UUID)
    /// JSON document text; cast with `$n::jsonb` in the statement.
    case json(String)

    /// The text form sent over the wire, nil for SQL NULL.
    var wireText: String? {
        switch self {
        case .null: return nil
        case .text(let value): return value
        case .int64(let value): return String(value)
        case .bool(let value): return value ? "t" : "f"
        case .uuid(let value): return UUIDText.lowercased(value)
        case .json(let value): return value
        }
    }
}
