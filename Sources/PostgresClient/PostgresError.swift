/// An error from the PostgreSQL client: what went wrong (`code`), the
/// server's SQLSTATE when the server answered, and whether the connection
/// was lost (a retry on a fresh connection may succeed; but a write lost
/// during COMMIT, `commitOutcomeUnknown`, may already have been applied).
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure; a struct of constants so kinds can grow.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        private init(_ name: String) { self.name = name }

        /// Could not open a connection (server down, bad address, auth).
        public static let connectionFailed = Code("connectionFailed")
        /// The server rejected a statement; see `sqlState`.
        public static let queryFailed = Code("queryFailed")
        /// The wait queue of the pool is full.
        public static let poolExhausted = Code("poolExhausted")
        /// No connection became free within the acquire timeout.
        public static let timeout = Code("timeout")
        /// The task waiting for a connection was cancelled.
        public static let cancelled = Code("cancelled")
        /// A statement was started on a connection while another one was
        /// still running on it (a connection serves one task at a time).
        public static let connectionBusy = Code("connectionBusy")
        /// The pool was shut down.
        public static let poolClosed = Code("poolClosed")
        /// A statement or parameter cannot be sent (e.g. it contains a NUL byte).
        public static let invalidParameter = Code("invalidParameter")
        /// A column was missing or its text could not be decoded.
        public static let decodingFailed = Code("decodingFailed")
        /// The connection was lost during COMMIT: the transaction may or may
        /// not have been applied. Only a write that is idempotent (an event
        /// id, a state guard) may be sent again; read back what happened.
        public static let commitOutcomeUnknown = Code("commitOutcomeUnknown")
        /// COMMIT found the transaction already aborted (it was rolled back).
        public static let transactionAborted = Code("transactionAborted")
        /// A migration already applied has different text now.
        public static let migrationChecksumMismatch = Code("migrationChecksumMismatch")
        /// A statement prepared on this connection before a schema change
        /// altered the types it returns, run inside a transaction block:
        /// PostgreSQL refused it (SQLSTATE 0A000) and aborted the
        /// transaction. The statement is prepared afresh on its next use,
        /// so the transaction can simply run again. (Outside a transaction
        /// block the connection runs it again itself.)
        public static let staleStatement = Code("staleStatement")

        public var description: String { name }
    }

    public let code: Code
    /// The five-character SQLSTATE, e.g. "23505" (unique_violation), when known.
    public let sqlState: String?
    public let message: String
    /// True when the connection is gone; it is discarded, never reused.
    public let isConnectionLoss: Bool

    public init(code: Code, sqlState: String? = nil, message: String, isConnectionLoss: Bool = false) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.isConnectionLoss = isConnectionLoss
    }

    /// unique_violation: another row holds the same unique key.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// serialization_failure or deadlock_detected: the transaction may be retried.
    public var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }

    public var description: String {
        var text = "PostgresError(\(code)"
        if let sqlState { text += ", sqlState: \(sqlState)" }
        if isConnectionLoss { text += ", connection lost" }
        return text + "): \(message)"
    }
}
