import CLibPQ
import Foundation

/// Owns one `PGconn` and frees it in `close()`/`deinit`. Confined to the
/// worker thread of its `PostgresConnection`: every method blocks and must
/// only be called from there.
final class LibPQConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    private var preparedStatementNames: [String: String] = [:]
    private let maxPreparedStatements: Int

    private init(handle: OpaquePointer, maxPreparedStatements: Int) {
        self.handle = handle
        self.maxPreparedStatements = maxPreparedStatements
    }

    deinit { close() }

    /// Opens a connection; `parameters` are libpq keyword/value pairs where a
    /// "dbname" holding a URL is expanded (later keywords override it).
    static func connect(parameters: [(String, String)], maxPreparedStatements: Int) -> Result<LibPQConnection, PostgresError> {
        let handle = withCStringArray(parameters.map(\.0)) { keywords in
            withCStringArray(parameters.map(\.1)) { values in
                PQconnectdbParams(keywords, values, 1)
            }
        }
        guard let handle else {
            return .failure(PostgresError(code: .connectionFailed, message: "libpq could not allocate a connection", isConnectionLoss: true))
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = lastMessage(handle)
            PQfinish(handle)
            return .failure(PostgresError(code: .connectionFailed, message: message, isConnectionLoss: true))
        }
        return .success(LibPQConnection(handle: handle, maxPreparedStatements: maxPreparedStatements))
    }

    /// True once libpq reports the connection unusable (or after `close()`).
    var isBroken: Bool {
        guard let handle else { return true }
        return PQstatus(handle) != CONNECTION_OK
    }

    func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        preparedStatementNames.removeAll()
    }

    /// One statement with `$n` parameters (text format). The statement is
    /// prepared once per connection and reused; past the cache limit it runs unnamed.
    func query(_ sql: String, _ parameters: [String?]) -> Result<PostgresRows, PostgresError> {
        guard let handle else { return .failure(Self.closedError()) }
        let count = Int32(parameters.count)
        if let name = preparedStatementNames[sql] {
            return execute(prepared: name, handle: handle, parameters: parameters)
        }
        if preparedStatementNames.count < maxPreparedStatements {
            let name = "pc_\(preparedStatementNames.count + 1)"
            let prepared = consume(PQprepare(handle, name, sql, count, nil), handle: handle)
            if case .failure(let error) = prepared { return .failure(error) }
            preparedStatementNames[sql] = name
            return execute(prepared: name, handle: handle, parameters: parameters)
        }
        let result = withCStringArray(parameters) { values in
            PQexecParams(handle, sql, count, nil, values, nil, nil, 0)
        }
        return consume(result, handle: handle)
    }

    /// The simple query protocol: no parameters, several statements allowed
    /// (the rows are those of the last statement). For DDL and BEGIN/COMMIT.
    func execute(_ sql: String) -> Result<PostgresRows, PostgresError> {
        guard let handle else { return .failure(Self.closedError()) }
        return consume(PQexec(handle, sql), handle: handle)
    }

    private func execute(prepared name: String, handle: OpaquePointer, parameters: [String?]) -> Result<PostgresRows, PostgresError> {
        let result = withCStringArray(parameters) { values in
            PQexecPrepared(handle, name, Int32(parameters.count), values, nil, nil, 0)
        }
        return consume(result, handle: handle)
    }

    /// Copies a result into Swift values and clears it on every path.
    private func consume(_ result: OpaquePointer?, handle: OpaquePointer) -> Result<PostgresRows, PostgresError> {
        guard let result else {
            return .failure(PostgresError(code: .queryFailed, message: Self.lastMessage(handle), isConnectionLoss: isBroken))
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY else {
            return .failure(error(from: result, handle: handle))
        }
        let columnCount = PQnfields(result)
        let rowCount = PQntuples(result)
        var columns: [String] = []
        columns.reserveCapacity(Int(columnCount))
        for column in 0..<columnCount {
            columns.append(PQfname(result, column).map { String(cString: $0) } ?? "")
        }
        var cells: [[String?]] = []
        cells.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) == 1 {
                    values.append(nil)
                } else {
                    values.append(PQgetvalue(result, row, column).map { String(cString: $0) } ?? "")
                }
            }
            cells.append(values)
        }
        let commandTag = PQcmdStatus(result).map { String(cString: $0) } ?? ""
        let affected = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        return .success(PostgresRows(columns: columns, cells: cells, commandTag: commandTag, affectedRowCount: affected))
    }

    private func error(from result: OpaquePointer, handle: OpaquePointer) -> PostgresError {
        let sqlState = PQresultErrorField(result, CLibPQ_diagSQLState()).map { String(cString: $0) }
        var message = PQresultErrorField(result, CLibPQ_diagMessagePrimary()).map { String(cString: $0) } ?? ""
        if message.isEmpty { message = Self.lastMessage(handle) }
        let lost = isBroken || Self.isConnectionLossState(sqlState)
        return PostgresError(code: .queryFailed, sqlState: sqlState, message: message, isConnectionLoss: lost)
    }

    /// Connection exceptions (class 08) and server shutdown/termination (57P0x).
    private static func isConnectionLossState(_ sqlState: String?) -> Bool {
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || sqlState == "57P01" || sqlState == "57P02" || sqlState == "57P03"
    }

    private static func lastMessage(_ handle: OpaquePointer) -> String {
        let text = PQerrorMessage(handle).map { String(cString: $0) } ?? ""
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func closedError() -> PostgresError {
        PostgresError(code: .queryFailed, message: "connection is closed", isConnectionLoss: true)
    }
}

/// Lends `strings` as a C array of C strings; the pointers live only inside `body`.
private func withCStringArray<Result>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result) -> Result {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { string in string.map { strdup($0) } ?? nil }
    defer { for copy in copies { free(copy) } }
    var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
    pointers.append(nil)
    return pointers.withUnsafeBufferPointer { buffer in body(buffer.baseAddress!) }
}
