extension PostgresPool {
    /// How the pool connects and its limits; every limit is named here.
    public struct Configuration: Sendable {
        /// A libpq connection string or URL, e.g. "postgresql://iap@127.0.0.1:5432/points".
        public var connectionString: String
        /// Connections open at once, idle or leased.
        public var maxConnections: Int
        /// Callers waiting for a connection; one more fails with `poolExhausted`.
        public var maxWaiters: Int
        /// How long a caller waits for a connection before `timeout`.
        public var acquireTimeoutMilliseconds: Int
        /// libpq's connect_timeout (whole seconds, at least 2 per libpq).
        public var connectTimeoutSeconds: Int
        /// Server-side statement_timeout for every statement of the session.
        public var statementTimeoutMilliseconds: Int
        /// Distinct statements prepared per connection; more run unprepared.
        public var maxPreparedStatementsPerConnection: Int
        /// Shown in pg_stat_activity.
        public var applicationName: String
        /// The session's search_path (schema list), nil for the server default.
        /// Lets tests and tools isolate themselves in their own schema.
        public var searchPath: String?

        public init(
            connectionString: String,
            maxConnections: Int = 8,
            maxWaiters: Int = 1_000,
            acquireTimeoutMilliseconds: Int = 5_000,
            connectTimeoutSeconds: Int = 5,
            statementTimeoutMilliseconds: Int = 30_000,
            maxPreparedStatementsPerConnection: Int = 256,
            applicationName: String = "iap-credits",
            searchPath: String? = nil
        ) {
            precondition(maxConnections > 0 && maxWaiters >= 0 && acquireTimeoutMilliseconds > 0)
            self.connectionString = connectionString
            self.maxConnections = maxConnections
            self.maxWaiters = maxWaiters
            self.acquireTimeoutMilliseconds = acquireTimeoutMilliseconds
            self.connectTimeoutSeconds = connectTimeoutSeconds
            self.statementTimeoutMilliseconds = statementTimeoutMilliseconds
            self.maxPreparedStatementsPerConnection = maxPreparedStatementsPerConnection
            self.applicationName = applicationName
            self.searchPath = searchPath
        }

        /// Keyword/value pairs for PQconnectdbParams; the session is pinned to
        /// UTC and ISO dates so the text decoders can rely on the format. The
        /// connection string's own `options` come first and are kept.
        var libpqParameters: [(String, String)] {
            var options = ConnectionStringOptions.options(in: connectionString).map { $0 + " " } ?? ""
            options += "-c statement_timeout=\(statementTimeoutMilliseconds) -c TimeZone=UTC -c DateStyle=ISO,YMD -c client_min_messages=warning"
            if let searchPath { options += " -c search_path=\(searchPath)" }
            return [
                ("dbname", connectionString),
                ("connect_timeout", String(max(2, connectTimeoutSeconds))),
                ("application_name", applicationName),
                ("client_encoding", "UTF8"),
                ("options", options),
            ]
        }
    }
}
