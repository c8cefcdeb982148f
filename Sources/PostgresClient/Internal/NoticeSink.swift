import CLibPQ

/// The context of one connection's libpq notice receiver: turns the
/// `PGresult` libpq hands over (and frees itself afterwards) into a
/// `PostgresNotice` for the configured handler. Owned by its
/// `LibPQConnection`, which outlives every call (libpq calls the receiver
/// only while the handle exists).
final class NoticeSink: Sendable {
    private let handler: @Sendable (PostgresNotice) -> Void

    init(_ handler: @escaping @Sendable (PostgresNotice) -> Void) {
        self.handler = handler
    }

    /// `PQnoticeReceiver`: `context` is an unretained `NoticeSink`.
    static let receive: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Void = { context, result in
        guard let context, let result else { return }
        let sink = Unmanaged<NoticeSink>.fromOpaque(context).takeUnretainedValue()
        func field(_ code: Int32) -> String? { PQresultErrorField(result, code).map { String(cString: $0) } }
        sink.handler(
            PostgresNotice(
                severity: field(CLibPQ_diagSeverityNonlocalized()) ?? "NOTICE",
                sqlState: field(CLibPQ_diagSQLState()),
                message: field(CLibPQ_diagMessagePrimary()) ?? ""))
    }
}
