import HTTPServer
import RPCRuntime
import ServiceKit

/// Everything `Gateway` reads from flags and the environment, checked at
/// start-up (flags win over variables, which win over defaults; `--help`
/// lists all of them).
public struct GatewaySettings: Sendable {
    public var listen: HostAndPort
    /// `ADMIN_LISTEN_ADDR`: GET /metrics, /livez, /readyz; nil when `off`.
    public var adminListen: HostAndPort?
    public var pointsTargets: [HostAndPort]
    public var paymentsTargets: [HostAndPort]
    public var logLevel: LogLevel
    public var connectionsMax: Int
    public var shutdownGraceMilliseconds: Int64
    /// `INTERNAL_AUTH`: mutual TLS towards the services (the default), or
    /// cleartext to loopback addresses only.
    public var internalAuth: InternalAuthMode
    /// TLS towards PointsService: the internal CA, PointsService's name and
    /// the gateway's client certificate; nil means cleartext h2c.
    public var pointsBackendTLS: TLSConfiguration?
    /// The same towards PaymentsService (its own name).
    public var paymentsBackendTLS: TLSConfiguration?
    /// TLS on the public port (certificate chain and key); nil means
    /// plaintext HTTP/1.1 and h2c.
    public var tls: TLSConfiguration?

    /// Every option, for `CommandLineOptions` and `--help`.
    public static let specs: [OptionSpec] = [
        OptionSpec(flag: "--listen", env: "LISTEN_ADDR", default: "127.0.0.1:8080",
                   help: "host:port serving HTTP/1.1 and h2c (prior knowledge), or with --tls-cert HTTPS (ALPN h2, http/1.1); port 0 picks one"),
        AdminListener.option(default: "127.0.0.1:9180"),
        OptionSpec(flag: StandardOptions.tlsCertificate.flag, env: StandardOptions.tlsCertificate.environmentVariable,
                   help: "PEM certificate chain: serve TLS only on --listen (ALPN h2 or http/1.1; plaintext clients are refused)"),
        OptionSpec(flag: StandardOptions.tlsKey.flag, env: StandardOptions.tlsKey.environmentVariable,
                   help: StandardOptions.tlsKey.help),
        OptionSpec(flag: "--points-addr", env: "POINTS_ADDR", default: "127.0.0.1:50052",
                   help: "PointsService addresses, comma-separated host:port (round-robin)"),
        OptionSpec(flag: "--payments-addr", env: "PAYMENTS_ADDR", default: "127.0.0.1:50051",
                   help: "PaymentsService addresses, comma-separated host:port (round-robin)"),
        OptionSpec(flag: nil, env: "JWT_HS256_SECRET", help: "HS256 shared secret (at least 32 bytes)", isSecret: true),
        OptionSpec(flag: nil, env: "JWT_ES256_PUBLIC_KEY", help: "path of a PEM P-256 public key for ES256 tokens"),
        OptionSpec(flag: nil, env: "JWT_ISSUER", help: "required `iss` of bearer tokens"),
        OptionSpec(flag: nil, env: "JWT_AUDIENCE", help: "required `aud` of bearer tokens"),
        OptionSpec(flag: nil, env: "EMAIL_HASH_SECRET",
                   help: "HMAC key of the email hash (at least 32 bytes); keep it stable, starter-pack eligibility is keyed by it", isSecret: true),
        OptionSpec(flag: "--log-level", env: "LOG_LEVEL", default: "info",
                   help: "debug, info, notice, warning, error or critical"),
        OptionSpec(flag: "--max-connections", env: "MAX_CONNECTIONS", default: String(HTTPServerLimits.connectionsMax),
                   help: "open client connections kept (HTTP/1.1 and HTTP/2)"),
        OptionSpec(flag: "--shutdown-grace-ms", env: "SHUTDOWN_GRACE_MS", default: String(GatewayLimits.shutdownGraceMilliseconds),
                   help: "time in-flight requests get to finish on SIGTERM"),
        StandardOptions.internalAuth,
        OptionSpec(flag: "--backend-tls-ca", env: "BACKEND_TLS_CA_FILE",
                   help: "PEM CA bundle (the internal CA): call the services over TLS (ALPN h2) verified against it; required with INTERNAL_AUTH=mtls"),
        OptionSpec(flag: "--backend-tls-cert", env: "BACKEND_TLS_CERT",
                   help: "PEM certificate chain the gateway presents to the services (its identity, GATEWAY_IDENTITY there); required with INTERNAL_AUTH=mtls"),
        OptionSpec(flag: "--backend-tls-key", env: "BACKEND_TLS_KEY", help: "PEM private key for --backend-tls-cert (never logged)"),
        StandardOptions.pointsTLSServerName, StandardOptions.paymentsTLSServerName,
        OptionSpec(flag: "--sub", env: nil, help: "mint-token: the user id (UUID) of the token"),
        OptionSpec(flag: "--email", env: nil, help: "mint-token: the email claim of the token"),
        OptionSpec(flag: "--ttl", env: nil, default: "3600", help: "mint-token: lifetime in seconds"),
    ]

    /// Parses the server settings (the JWT and email-hash settings are read
    /// by `authentication(environment:readFile:)`).
    public init(options: CommandLineOptions) throws {
        listen = try HostAndPort(parsing: options.required("--listen"))
        adminListen = try AdminListener.address(options)
        pointsTargets = try HostAndPort.parseList(options.required("--points-addr"))
        paymentsTargets = try HostAndPort.parseList(options.required("--payments-addr"))
        logLevel = try Self.parseLogLevel(options.required("--log-level"))
        guard let connections = Int(try options.required("--max-connections")), connections > 0 else {
            throw CommandLineError("--max-connections / MAX_CONNECTIONS must be a positive integer")
        }
        connectionsMax = connections
        guard let grace = Int64(try options.required("--shutdown-grace-ms")), grace >= 0 else {
            throw CommandLineError("--shutdown-grace-ms / SHUTDOWN_GRACE_MS must be a non-negative integer")
        }
        shutdownGraceMilliseconds = grace
        let certificate = options.value("--tls-cert").flatMap { $0.isEmpty ? nil : $0 }
        let key = options.value("--tls-key").flatMap { $0.isEmpty ? nil : $0 }
        switch (certificate, key) {
        case (let certificate?, let key?):
            tls = .server(certificateChainPath: certificate, privateKeyPath: key)
        case (nil, nil):
            tls = nil
        default:
            throw CommandLineError("--tls-cert / TLS_CERT and --tls-key / TLS_KEY go together")
        }
        internalAuth = try InternalAuth.mode(options)
        (pointsBackendTLS, paymentsBackendTLS) = try Self.backendTLS(
            options, mode: internalAuth, targets: pointsTargets + paymentsTargets)
    }

    /// TLS towards each service. Mutual TLS needs the internal CA and the
    /// gateway's certificate and key; off is cleartext to loopback only
    /// (with a CA given, TLS that checks the services' names but presents
    /// a certificate only when one is given).
    static func backendTLS(
        _ options: CommandLineOptions, mode: InternalAuthMode, targets: [HostAndPort]
    ) throws -> (points: TLSConfiguration?, payments: TLSConfiguration?) {
        let ca = options.value("--backend-tls-ca").flatMap { $0.isEmpty ? nil : $0 }
        let certificate = options.value("--backend-tls-cert").flatMap { $0.isEmpty ? nil : $0 }
        let key = options.value("--backend-tls-key").flatMap { $0.isEmpty ? nil : $0 }
        guard (certificate == nil) == (key == nil) else {
            throw CommandLineError("--backend-tls-cert / BACKEND_TLS_CERT and --backend-tls-key / BACKEND_TLS_KEY go together")
        }
        switch mode {
        case .mutualTLS:
            guard ca != nil, certificate != nil else {
                throw CommandLineError("INTERNAL_AUTH=mtls (the default) needs --backend-tls-ca / BACKEND_TLS_CA_FILE (the internal CA) "
                    + "and --backend-tls-cert / BACKEND_TLS_CERT, --backend-tls-key / BACKEND_TLS_KEY (the gateway's certificate); "
                    + "INTERNAL_AUTH=off is for a loopback-only run")
            }
        case .off:
            try InternalAuth.requireLoopback(targets)
            guard ca != nil else { return (nil, nil) }
        }
        func upstream(_ serverNameSetting: String) throws -> TLSConfiguration {
            try InternalAuth.upstream(options, caSetting: "--backend-tls-ca", serverNameSetting: serverNameSetting,
                                      certificateChainPath: certificate, privateKeyPath: key)
        }
        return (try upstream("POINTS_TLS_SERVER_NAME"), try upstream("PAYMENTS_TLS_SERVER_NAME"))
    }

    static func parseLogLevel(_ text: String) throws -> LogLevel {
        let levels: [String: LogLevel] = [
            "debug": .debug, "info": .info, "notice": .notice, "warning": .warning, "error": .error, "critical": .critical,
        ]
        guard let level = levels[text.lowercased()] else {
            throw CommandLineError("--log-level / LOG_LEVEL must be one of debug, info, notice, warning, error, critical")
        }
        return level
    }

    /// The token verifier and the email identity (JWT_*, EMAIL_HASH_SECRET).
    public static func authentication(
        environment: [String: String], readFile: (String) throws -> [UInt8]
    ) throws -> (verifier: JWTVerifier, emailIdentity: EmailIdentity) {
        let configuration = try JWTVerifierConfiguration.fromEnvironment(environment, readFile: readFile)
        guard let secret = environment["EMAIL_HASH_SECRET"], !secret.isEmpty else {
            throw JWTConfigurationError.missingVariable("EMAIL_HASH_SECRET")
        }
        return (JWTVerifier(configuration: configuration), try EmailIdentity(hashKey: Array(secret.utf8)))
    }
}
