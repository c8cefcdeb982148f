import Foundation

/// One PostgreSQL session, leased from a `PostgresPool`. Statements are sent
/// without blocking and their answers read by one shared socket reactor
/// thread (or the pool's `socketEvents`), so callers await without blocking
/// their thread.
/// Use it from one task at a time (a second concurrent statement fails with
/// `connectionBusy`).
public final class PostgresConnection: @unchecked Sendable {
    private let connection: LibPQConnection
    // `brokenLock` guards `broken`, set after each call from libpq's status.
    private let brokenLock = NSLock()
    private var broken = false

    private init(connection: LibPQConnection) {
        self.connection = connection
    }

    deinit {
        connection.close()
    }

    static func connect(configuration: PostgresPool.Configuration) async throws(PostgresError) -> PostgresConnection {
        let parameters = configuration.libpqParameters
        let limit = configuration.preparedStatementsPerConnectionMax
        let connection = try await LibPQConnection.connect(
            parameters: parameters, maxPreparedStatements: limit, socketEvents: configuration.socketEvents,
            noticeHandler: configuration.noticeHandler
        ).get()
        return PostgresConnection(connection: connection)
    }

    /// True once the connection is lost; the pool then discards it.
    public var isBroken: Bool {
        brokenLock.withLock { broken }
    }

    /// Runs one statement with `$1...$n` parameters; prepared once per connection.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) async throws(PostgresError) -> PostgresRows {
        let connection = self.connection
        let texts = parameters.map(\.wireText)
        // libpq takes C strings: a NUL byte would silently cut the value short.
        // (The statement text is checked by LibPQConnection once, before it is first prepared.)
        if let position = texts.firstIndex(where: { $0.map(NULByteScan.containsNUL) == true }) {
            throw PostgresError(code: .invalidParameter, message: "parameter $\(position + 1) contains a NUL byte")
        }
        do {
            return try await connection.query(sql, texts).get()
        } catch {
            throw tracked(error)
        }
    }

    /// Runs parameterless SQL with the simple protocol (several statements allowed).
    @discardableResult
    public func execute(_ sql: String) async throws(PostgresError) -> PostgresRows {
        let connection = self.connection
        if NULByteScan.containsNUL(sql) { throw LibPQConnection.nulInStatementError() }
        do {
            return try await connection.execute(sql).get()
        } catch {
            throw tracked(error)
        }
    }

    private func tracked(_ error: PostgresError) -> PostgresError {
        if error.isConnectionLoss { markBroken() }
        return error
    }

    func markBroken() {
        brokenLock.withLock { broken = true }
    }
}
