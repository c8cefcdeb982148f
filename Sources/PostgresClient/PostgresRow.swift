import Foundation
import UUIDText

/// One row; typed accessors decode PostgreSQL's text format and throw
/// `decodingFailed` on a missing column, NULL, or malformed text.
public struct PostgresRow: Sendable {
    let values: [String?]
    let columnIndex: [String: Int]

    /// The raw text of a column, nil for SQL NULL.
    public func optionalString(_ column: String) throws(PostgresError) -> String? {
        guard let position = columnIndex[column] else {
            throw PostgresError(code: .decodingFailed, message: "no column \(column)")
        }
        return values[position]
    }

    public func isNull(_ column: String) throws(PostgresError) -> Bool {
        try optionalString(column) == nil
    }

    public func string(_ column: String) throws(PostgresError) -> String {
        guard let text = try optionalString(column) else {
            throw PostgresError(code: .decodingFailed, message: "column \(column) is NULL")
        }
        return text
    }

    public func int64(_ column: String) throws(PostgresError) -> Int64 {
        let text = try string(column)
        guard let value = Int64(text) else { throw Self.malformed(column, "bigint") }
        return value
    }

    public func optionalInt64(_ column: String) throws(PostgresError) -> Int64? {
        guard let text = try optionalString(column) else { return nil }
        guard let value = Int64(text) else { throw Self.malformed(column, "bigint") }
        return value
    }

    public func bool(_ column: String) throws(PostgresError) -> Bool {
        switch try string(column) {
        case "t": return true
        case "f": return false
        default: throw Self.malformed(column, "boolean")
        }
    }

    public func uuid(_ column: String) throws(PostgresError) -> UUID {
        guard let value = UUIDText.parse(try string(column)) else { throw Self.malformed(column, "uuid") }
        return value
    }

    /// A `timestamptz` column; the session runs with TimeZone=UTC and ISO dates.
    public func date(_ column: String) throws(PostgresError) -> Date {
        guard let value = PostgresTimestamp.parse(try string(column)) else {
            throw Self.malformed(column, "timestamptz")
        }
        return value
    }

    /// A json/jsonb column as its text.
    public func json(_ column: String) throws(PostgresError) -> String { try string(column) }

    private static func malformed(_ column: String, _ type: String) -> PostgresError {
        PostgresError(code: .decodingFailed, message: "column \(column) is not a valid \(type)")
    }
}
