import CLibPQ
import Foundation
import Synchronization

/// Owns one `PGconn` in non-blocking mode and frees it in `close()`/`deinit`.
/// A statement is sent on the caller's thread; its answer is read by
/// `PostgresSocketReactor`'s thread when the socket is ready, and the caller
/// is resumed with it. One statement at a time: a second caller while one is
/// in flight gets `connectionBusy` (libpq must never be entered by two
/// threads at once). Only opening the connection blocks, on a thread of its own.
final class LibPQConnection: @unchecked Sendable {
    // Touched by one thread at a time: the caller until a round trip is
    // armed, then the reactor until it resumes the caller (the epoll
    // hand-off orders the two).
    private var handle: OpaquePointer?
    /// The statements prepared on this session, by their text.
    private var preparedStatements: [String: PreparedStatement] = [:]
    /// Names handed out so far: a name is never reused, since a forgotten
    /// statement may still exist on the server until it is deallocated.
    private var preparedStatementsNamed = 0
    /// Statements forgotten because the schema changed under one of them,
    /// still prepared on the server: deallocated before the next one is
    /// prepared outside a transaction block.
    private var staleStatementNames: [String] = []
    private var isRegisteredWithReactor = false
    private let maxPreparedStatements: Int
    private let reactor: any PostgresSocketEvents
    private let inFlight = Atomic<Bool>(false)
    /// The notice receiver's context: kept alive as long as the handle
    /// (libpq calls the receiver only while the handle exists).
    private let noticeSink: NoticeSink?

    /// `PGconn` handles allocated and not yet freed, process-wide, counted
    /// from `PQconnectdbParams` to `PQfinish` on every path (tests check
    /// that neither a failed connect nor a closed pool leaks one).
    static var liveHandleCount: Int { liveHandles.withLock { $0 } }
    private static let liveHandles = LockedCounter()

    private init(
        handle: OpaquePointer, maxPreparedStatements: Int, reactor: any PostgresSocketEvents,
        noticeHandler: (@Sendable (PostgresNotice) -> Void)?
    ) {
        self.handle = handle
        self.maxPreparedStatements = maxPreparedStatements
        self.reactor = reactor
        noticeSink = noticeHandler.map(NoticeSink.init)
        if let noticeSink {
            PQsetNoticeReceiver(handle, NoticeSink.receive, Unmanaged.passUnretained(noticeSink).toOpaque())
        }
        // Made on the connect thread, used by whichever thread runs the first
        // statement: that statement's acquiring exchange of `inFlight` pairs
        // with this releasing store, which publishes the fields above in a way
        // ThreadSanitizer sees as well (docs/MEMORY.md, "tsan").
        inFlight.store(false, ordering: .releasing)
    }

    deinit { close() }

    /// Opens a connection on a thread of its own (libpq's connect blocks:
    /// name lookup, TCP, authentication) and switches it to non-blocking mode.
    /// `parameters` are libpq keyword/value pairs where a "dbname" holding a
    /// URL is expanded (later keywords override it).
    /// `socketEvents` nil: the process's `PostgresSocketReactor`.
    static func connect(
        parameters: [(String, String)], maxPreparedStatements: Int,
        socketEvents: (any PostgresSocketEvents)? = nil,
        noticeHandler: (@Sendable (PostgresNotice) -> Void)? = nil
    ) async -> Result<LibPQConnection, PostgresError> {
        let reactor = socketEvents ?? PostgresSocketReactor.shared
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    returning: connectBlocking(
                        parameters: parameters, maxPreparedStatements: maxPreparedStatements,
                        reactor: reactor, noticeHandler: noticeHandler))
            }
            thread.name = "postgres-connect"
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }

    private static func connectBlocking(
        parameters: [(String, String)], maxPreparedStatements: Int, reactor: any PostgresSocketEvents,
        noticeHandler: (@Sendable (PostgresNotice) -> Void)?
    ) -> Result<LibPQConnection, PostgresError> {
        let handle = withCStringArray(parameters.map(\.0)) { keywords in
            withCStringArray(parameters.map(\.1)) { values in
                PQconnectdbParams(keywords, values, 1)
            }
        }
        guard let handle else {
            return .failure(
                PostgresError(
                    code: .connectionFailed, message: "libpq could not allocate a connection", isConnectionLoss: true))
        }
        liveHandles.withLock { $0 += 1 }
        guard PQstatus(handle) == CONNECTION_OK else {
            return .failure(finishFailed(handle, message: lastMessage(handle)))
        }
        guard PQsetnonblocking(handle, 1) == 0 else {
            return .failure(finishFailed(handle, message: "cannot switch to non-blocking mode: \(lastMessage(handle))"))
        }
        return .success(
            LibPQConnection(
                handle: handle, maxPreparedStatements: maxPreparedStatements, reactor: reactor,
                noticeHandler: noticeHandler))
    }

    /// Frees a handle whose connect failed; the error to report.
    private static func finishFailed(_ handle: OpaquePointer, message: String) -> PostgresError {
        PQfinish(handle)
        liveHandles.withLock { $0 -= 1 }
        return PostgresError(code: .connectionFailed, message: message, isConnectionLoss: true)
    }

    /// True once libpq reports the connection unusable (or after `close()`),
    /// or a statement left it in COPY state (`advance`).
    var isBroken: Bool {
        guard let handle, !leftInCopyState else { return true }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// A statement started a COPY, which this client does not speak: the
    /// connection is given up (set on the reactor's thread before the
    /// statement's continuation resumes, read after it).
    private var leftInCopyState = false

    /// Frees the handle (sends libpq's Terminate message; never blocks: the socket is non-blocking).
    func close() {
        guard let handle else { return }
        let fd = PQsocket(handle)
        if isRegisteredWithReactor && fd >= 0 { reactor.forget(fd: fd) }
        PQfinish(handle)
        self.handle = nil
        preparedStatements.removeAll()
        staleStatementNames.removeAll()
        Self.liveHandles.withLock { $0 -= 1 }
    }

    /// One statement with `$n` parameters (text format). The statement is
    /// prepared once per connection (one extra round trip, the first time)
    /// and reused; past the cache limit it runs unnamed.
    func query(_ sql: String, _ parameters: [String?]) async -> Result<PostgresRows, PostgresError> {
        guard inFlight.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return .failure(Self.busyError())
        }
        defer { inFlight.store(false, ordering: .releasing) }
        let count = Int32(parameters.count)
        if let prepared = preparedStatements[sql] {
            // Known text: checked for NUL bytes when it was first prepared.
            let result = await roundTrip(layoutHint: prepared.lastLayout) { handle in
                withCStringArray(parameters) { values in
                    PQsendQueryPrepared(handle, prepared.name, count, values, nil, nil, 0)
                }
            }
            guard case .failure(let error) = result, error.sqlState == Self.featureNotSupported else {
                remember(result, of: sql)
                return result
            }
            // A schema change since it was prepared altered the type of a
            // column it returns (e.g. a column moved to a domain type):
            // PostgreSQL then refuses the stored statement for good ("cached
            // plan must not change result type") before running anything.
            // Forget every statement of this connection, so each is prepared
            // afresh on its next use: a migration that changed one most
            // likely changed others, and each stale one would abort a
            // transaction of its own. Outside a transaction block nothing
            // ran and nothing is held, so this one's next use is now; inside
            // one the transaction is aborted, and the caller's next attempt
            // finds only fresh statements.
            staleStatementNames += preparedStatements.values.map(\.name)
            preparedStatements.removeAll()
            guard isOutsideTransactionBlock else {
                return .failure(PostgresError(code: .staleStatement, sqlState: error.sqlState, message: error.message))
            }
        }
        // libpq takes C strings: a NUL byte would silently cut the text short.
        if NULByteScan.containsNUL(sql) { return .failure(Self.nulInStatementError()) }
        if preparedStatements.count < maxPreparedStatements {
            await deallocateStaleStatements()
            preparedStatementsNamed += 1
            let name = "pc_\(preparedStatementsNamed)"
            let prepared = await roundTrip { handle in PQsendPrepare(handle, name, sql, count, nil) }
            if case .failure(let error) = prepared { return .failure(error) }
            preparedStatements[sql] = PreparedStatement(name: name)
            let result = await roundTrip { handle in
                withCStringArray(parameters) { values in PQsendQueryPrepared(handle, name, count, values, nil, nil, 0) }
            }
            remember(result, of: sql)
            return result
        }
        return await roundTrip { handle in
            withCStringArray(parameters) { values in PQsendQueryParams(handle, sql, count, nil, values, nil, nil, 0) }
        }
    }

    /// Keeps the column layout of a prepared statement's result for its next round trip.
    private func remember(_ result: Result<PostgresRows, PostgresError>, of sql: String) {
        guard case .success(let rows) = result else { return }
        preparedStatements[sql]?.lastLayout = rows.layout
    }

    /// SQLSTATE feature_not_supported, which a stored statement whose result
    /// type changed fails with (the message is localised, the code is not).
    private static let featureNotSupported = "0A000"

    private var isOutsideTransactionBlock: Bool {
        guard let handle else { return false }
        return PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Drops the statements forgotten since a schema change from the server
    /// (one round trip, only after such a change), when no transaction block
    /// is open (DEALLOCATE would fail in an aborted one). A failure is left
    /// for the next statement to report: at worst they stay until the
    /// connection closes.
    private func deallocateStaleStatements() async {
        guard !staleStatementNames.isEmpty, isOutsideTransactionBlock else { return }
        let statements = staleStatementNames.map { "DEALLOCATE \($0)" }.joined(separator: "; ")
        staleStatementNames.removeAll()
        _ = await roundTrip { handle in PQsendQuery(handle, statements) }
    }

    /// The simple query protocol: no parameters, several statements allowed
    /// (the rows are those of the last statement; an error wins, as with
    /// `PQexec`). For DDL and BEGIN/COMMIT.
    func execute(_ sql: String) async -> Result<PostgresRows, PostgresError> {
        guard inFlight.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return .failure(Self.busyError())
        }
        defer { inFlight.store(false, ordering: .releasing) }
        return await roundTrip { handle in PQsendQuery(handle, sql) }
    }

    // MARK: One round trip

    /// Sends with `send` (a `PQsend…` call, 1 on success) on this thread,
    /// then suspends until the reactor has read every result.
    private func roundTrip(layoutHint: ColumnLayout? = nil, _ send: (OpaquePointer) -> Int32) async -> Result<
        PostgresRows, PostgresError
    > {
        guard let handle else { return .failure(Self.closedError()) }
        guard send(handle) == 1 else {
            return .failure(
                PostgresError(code: .queryFailed, message: Self.lastMessage(handle), isConnectionLoss: isBroken))
        }
        let flush = PQflush(handle)
        guard flush >= 0 else { return .failure(lostError(handle)) }
        return await withCheckedContinuation { continuation in
            let pending = PendingRoundTrip(
                connection: self, continuation: continuation, flushPending: flush == 1, layoutHint: layoutHint)
            arm(pending, handle: handle)
        }
    }

    /// Waits (once more) for the socket; resumes `pending` with an error if it cannot.
    private func arm(_ pending: PendingRoundTrip, handle: OpaquePointer) {
        let alreadyRegistered = isRegisteredWithReactor
        // Recorded before arming: once armed, the answer and a re-arming may
        // run on the reactor's thread before `arm` returns. A failed arming
        // armed nothing, so no other thread can be here to race the undo.
        isRegisteredWithReactor = true
        do {
            try reactor.arm(
                fd: PQsocket(handle), writable: pending.flushPending, alreadyRegistered: alreadyRegistered,
                waiter: pending)
        } catch {
            isRegisteredWithReactor = alreadyRegistered
            pending.finish(.failure(error))
        }
    }

    /// On the reactor's thread: sends what is still buffered, reads what
    /// arrived, and either finishes `pending` with its results or re-arms.
    fileprivate func advance(_ pending: PendingRoundTrip) {
        guard let handle else { return pending.finish(.failure(Self.closedError())) }
        if pending.flushPending {
            let flush = PQflush(handle)
            guard flush >= 0 else { return pending.finish(.failure(lostError(handle))) }
            pending.flushPending = flush == 1
        }
        // Nothing to read is not a failure; 0 means the socket failed or closed.
        guard PQconsumeInput(handle) == 1 else { return pending.finish(.failure(lostError(handle))) }
        while PQisBusy(handle) == 0 {
            guard let result = PQgetResult(handle) else {
                return pending.finish(
                    pending.takeKept().map { consume($0, handle: handle, layoutHint: pending.layoutHint) }
                        ?? .failure(
                            PostgresError(
                                code: .queryFailed, message: "the server sent no result", isConnectionLoss: isBroken)))
            }
            let status = PQresultStatus(result)
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
                // libpq hands out a COPY result for ever (PQgetResult never
                // returns NULL in COPY state): reading on would spin this
                // thread, which every statement of the process shares. The
                // connection is lost to us: reported so, the pool drops it.
                PQclear(result)
                leftInCopyState = true
                return pending.finish(
                    .failure(
                        PostgresError(
                            code: .queryFailed, message: "COPY is not supported by this client",
                            isConnectionLoss: true)))
            }
            pending.keep(result)
        }
        arm(pending, handle: handle)
    }

    private func lostError(_ handle: OpaquePointer) -> PostgresError {
        PostgresError(code: .queryFailed, message: Self.lastMessage(handle), isConnectionLoss: true)
    }

    /// Copies a result into Swift values and clears it on every path.
    private func consume(_ result: OpaquePointer?, handle: OpaquePointer, layoutHint: ColumnLayout?) -> Result<
        PostgresRows, PostgresError
    > {
        guard let result else {
            return .failure(
                PostgresError(code: .queryFailed, message: Self.lastMessage(handle), isConnectionLoss: isBroken))
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY else {
            return .failure(error(from: result, handle: handle))
        }
        let layout = ColumnLayout.of(result, reusing: layoutHint)
        let columnCount = Int32(layout.names.count)
        let rowCount = PQntuples(result)
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
        return .success(PostgresRows(layout: layout, cells: cells, commandTag: commandTag, affectedRowCount: affected))
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

    static func nulInStatementError() -> PostgresError {
        PostgresError(code: .invalidParameter, message: "statement text contains a NUL byte")
    }

    private static func busyError() -> PostgresError {
        PostgresError(code: .connectionBusy, message: "a statement is already running on this connection")
    }

    private static func closedError() -> PostgresError {
        PostgresError(code: .queryFailed, message: "connection is closed", isConnectionLoss: true)
    }
}

/// One statement sent on a connection and not yet answered: the suspended
/// caller, whether output is still buffered, and the result kept so far.
/// Owned by the reactor while armed, then by `advance` until `finish`.
private final class PendingRoundTrip: PostgresSocketWaiter {
    private let connection: LibPQConnection
    private let continuation: CheckedContinuation<Result<PostgresRows, PostgresError>, Never>
    var flushPending: Bool
    /// The layout the statement's previous result had, if known (`ColumnLayout`).
    let layoutHint: ColumnLayout?
    /// The `PGresult` to answer with: the last one, unless an error came first. Cleared on every path.
    private var kept: OpaquePointer?
    private var keptIsError = false

    init(
        connection: LibPQConnection, continuation: CheckedContinuation<Result<PostgresRows, PostgresError>, Never>,
        flushPending: Bool,
        layoutHint: ColumnLayout?
    ) {
        self.connection = connection
        self.continuation = continuation
        self.flushPending = flushPending
        self.layoutHint = layoutHint
    }

    deinit { if let kept { PQclear(kept) } }

    override func socketBecameReady(_ events: UInt32) {
        connection.advance(self)
    }

    /// Takes ownership of `result`, keeping it or clearing it by PQexec's rule.
    func keep(_ result: OpaquePointer) {
        let status = PQresultStatus(result)
        let isError = status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE || status == PGRES_NONFATAL_ERROR
        if keptIsError && !isError { return PQclear(result) }
        if let kept { PQclear(kept) }
        kept = result
        keptIsError = isError
    }

    /// Hands the kept result to the caller, who clears it.
    func takeKept() -> OpaquePointer? {
        defer { kept = nil }
        return kept
    }

    func finish(_ result: Result<PostgresRows, PostgresError>) {
        continuation.resume(returning: result)
    }
}

/// Lends `strings` as a C array of C strings; the pointers live only inside `body`.
private func withCStringArray<Result>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result)
    -> Result
{
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { string in string.map { strdup($0) } ?? nil }
    defer { for copy in copies { free(copy) } }
    var pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
    pointers.append(nil)
    return pointers.withUnsafeBufferPointer { buffer in body(buffer.baseAddress!) }
}

/// A statement prepared on one session: its server-side name, and the
/// column layout of its last result, lent to its next round trip
/// (`ColumnLayout`). Read and written by the caller only, never by the reactor.
private struct PreparedStatement {
    let name: String
    var lastLayout: ColumnLayout?
}
