/// One versioned schema change. Once applied its text must never change:
/// the migrator compares checksums and refuses a drifted migration.
public struct PostgresMigration: Sendable {
    public let version: Int
    public let name: String
    /// One or more SQL statements, run with the simple query protocol.
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}
