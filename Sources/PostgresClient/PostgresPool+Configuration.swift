extension PostgresPool {
    /// How the pool connects and its limits; every limit is named here.
    public struct Configuration: Sendable {
        /// A libpq connection string or URL, e.g. "postgresql://iap@127.0.0.1:5432/points".
        public var connectionString: String
        /// Connections open at once, idle or leased.
        public var connectionsMax: Int
        /// Callers waiting for a connection; one more fails with `poolExhausted`.
        public var waitersMax: Int
        /// How long a caller waits for a connection before `timeout`.
        public var acquireTimeout: Duration
        /// libpq's connect_timeout (whole seconds, at least 2 per libpq).
        public var connectTimeoutSeconds: Int
        /// Server-side statement_timeout for every statement of the session
        /// (sent in whole milliseconds, at least one).
        public var statementTimeout: Duration
        /// Distinct statements prepared per connection; more run unprepared.
        public var preparedStatementsPerConnectionMax: Int
        /// Shown in pg_stat_activity.
        public var applicationName: String
        /// The session's search_path (schema list), nil for the server default.
        /// Lets tests and tools isolate themselves in their own schema.
        public var searchPath: String?
        /// Where statements wait for their sockets; nil: the process's
        /// reactor thread (`PostgresSocketEvents`).
        public var socketEvents: (any PostgresSocketEvents)?
        /// Receives the server's notices and warnings on every connection,
        /// on whichever thread is reading that connection's answer (keep it
        /// short and non-blocking); nil: libpq's default, a line on stderr.
        /// A service passes its logger here, so a notice is a JSON log line
        /// like the rest of its stderr. Notices sent while a connection is
        /// being opened come before the handler is set and take libpq's
        /// default.
        public var noticeHandler: (@Sendable (PostgresNotice) -> Void)?

        public init(
            connectionString: String,
            connectionsMax: Int = 8,
            waitersMax: Int = 1_000,
            acquireTimeout: Duration = .seconds(5),
            connectTimeoutSeconds: Int = 5,
            statementTimeout: Duration = .seconds(30),
            preparedStatementsPerConnectionMax: Int = 256,
            applicationName: String = "iap-credits",
            searchPath: String? = nil,
            socketEvents: (any PostgresSocketEvents)? = nil,
            noticeHandler: (@Sendable (PostgresNotice) -> Void)? = nil
        ) {
            precondition(
                connectionsMax > 0 && waitersMax >= 0 && acquireTimeout > .zero && statementTimeout >= .milliseconds(1))
            self.connectionString = connectionString
            self.connectionsMax = connectionsMax
            self.waitersMax = waitersMax
            self.acquireTimeout = acquireTimeout
            self.connectTimeoutSeconds = connectTimeoutSeconds
            self.statementTimeout = statementTimeout
            self.preparedStatementsPerConnectionMax = preparedStatementsPerConnectionMax
            self.applicationName = applicationName
            self.searchPath = searchPath
            self.socketEvents = socketEvents
            self.noticeHandler = noticeHandler
        }

        /// Keyword/value pairs for PQconnectdbParams, read in order (a later
        /// keyword overrides an earlier one; the connection string is expanded
        /// where `dbname` stands). Before it, defaults the connection string
        /// may override: the connect timeout, the application name and the
        /// dead-peer detection (`deadPeerDetection`). After it, what the
        /// decoders rely on: UTF-8, UTC and ISO dates; the connection
        /// string's own `options` come first in `options` and are kept.
        var libpqParameters: [(String, String)] {
            var options = ConnectionStringOptions.options(in: connectionString).map { $0 + " " } ?? ""
            options +=
                "-c statement_timeout=\(Self.wholeMilliseconds(statementTimeout)) -c TimeZone=UTC -c DateStyle=ISO,YMD -c client_min_messages=warning"
            if let searchPath { options += " -c search_path=\(searchPath)" }
            return [
                ("connect_timeout", String(max(2, connectTimeoutSeconds))),
                ("application_name", applicationName),
            ] + Self.deadPeerDetection + [
                ("dbname", connectionString),
                ("client_encoding", "UTF8"),
                ("options", options),
            ]
        }

        /// TCP settings that fail a connection whose server went away without
        /// a reset (its host died, a partition, a dropped NAT entry) within
        /// about a minute: data unacknowledged for 30 s (`tcp_user_timeout`),
        /// or no answer to keepalive probes sent after 30 s idle, every 10 s,
        /// 3 times. Without them a statement waits for TCP to give up
        /// (about 15 minutes with unacknowledged data, 2 hours without),
        /// `statement_timeout` cannot help (the server is gone), and the
        /// pool, its connections hung, never opens one to a new primary.
        static let deadPeerDetection: [(String, String)] = [
            ("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"), ("keepalives_count", "3"),
            ("tcp_user_timeout", "30000"),
        ]

        /// A duration in whole milliseconds (rounded down), as PostgreSQL's settings take it.
        static func wholeMilliseconds(_ duration: Duration) -> Int64 {
            let (seconds, attoseconds) = duration.components
            return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        }
    }
}
