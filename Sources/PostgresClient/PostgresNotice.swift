/// A WARNING, NOTICE or other non-error message the server sent on a
/// connection. The pool's sessions ask for warnings and above
/// (`client_min_messages`), so NOTICEs come only from a session that sets
/// it lower. Handed to `PostgresPool.Configuration.noticeHandler`.
public struct PostgresNotice: Sendable, Equatable {
    /// The server's severity, not localized: `WARNING`, `NOTICE`, `DEBUG`,
    /// `INFO` or `LOG`.
    public var severity: String
    /// The SQLSTATE code (e.g. `42P07`), when the server sent one.
    public var sqlState: String?
    /// The primary message, as the server wrote it.
    public var message: String

    public init(severity: String, sqlState: String?, message: String) {
        self.severity = severity
        self.sqlState = sqlState
        self.message = message
    }

    /// True for `WARNING`, the one severity an operator should see by default.
    public var isWarning: Bool { severity == "WARNING" }
}
