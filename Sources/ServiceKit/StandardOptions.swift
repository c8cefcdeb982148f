import Logging

/// The operator settings every service shares, so flags, variables and
/// defaults are spelled once (see docs/OPERATIONS in README and compose/).
public enum StandardOptions {
    public static func listen(default address: String) -> OptionSpec {
        OptionSpec(
            flag: "--listen", env: "LISTEN_ADDR", default: address,
            help: "HOST:PORT to listen on (port 0 picks a free port).")
    }

    public static let databaseURL = OptionSpec(
        flag: nil, env: "DATABASE_URL", help: "libpq connection string of this service's own database.", isSecret: true)
    public static let databaseMaxConnections = OptionSpec(
        flag: nil, env: "DATABASE_MAX_CONNECTIONS", default: "16", help: "Size of the database connection pool.")
    public static let logLevel = OptionSpec(
        flag: "--log-level", env: "LOG_LEVEL", default: "info", help: "debug, info, notice, warning or error.")
    public static let tlsCertificate = OptionSpec(
        flag: "--tls-cert", env: "TLS_CERT",
        help:
            "PEM certificate chain of this service: served to callers over TLS (ALPN h2) and presented as its client identity to the services it calls."
    )
    public static let tlsKey = OptionSpec(
        flag: "--tls-key", env: "TLS_KEY", help: "PEM private key for --tls-cert (never logged).")
    public static let pointsAddresses = OptionSpec(
        flag: nil, env: "POINTS_ADDR", default: "127.0.0.1:50052",
        help: "Comma-separated HOST:PORT list of PointsService instances.")
    public static let paymentsAddresses = OptionSpec(
        flag: nil, env: "PAYMENTS_ADDR", default: "127.0.0.1:50051",
        help: "Comma-separated HOST:PORT list of PaymentsService instances.")

    /// Parses `LOG_LEVEL`.
    public static func logLevel(_ text: String) throws -> LogLevel {
        switch text.lowercased() {
        case "debug": return .debug
        case "info": return .info
        case "notice": return .notice
        case "warning": return .warning
        case "error": return .error
        default: throw CommandLineError("LOG_LEVEL must be debug, info, notice, warning or error")
        }
    }
}
