import HTTPServer
import Logging
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
    /// `MAX_CONCURRENT_REQUESTS`, `NOTIFICATION_RATE_LIMIT_PER_SECOND`, `NOTIFICATION_RATE_LIMIT_BURST`.
    public var admission: AdmissionLimits
    public var shutdownGrace: Duration
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
        OptionSpec(
            flag: "--listen", env: "LISTEN_ADDR", default: "127.0.0.1:8080",
            help:
                "host:port serving HTTP/1.1 and h2c (prior knowledge), or with --tls-cert HTTPS (ALPN h2, http/1.1); port 0 picks one"
        ),
        AdminListener.option(default: "127.0.0.1:9180"),
        OptionSpec(
            flag: StandardOptions.tlsCertificate.flag, env: StandardOptions.tlsCertificate.environmentVariable,
            help:
                "PEM certificate chain: serve TLS only on --listen (ALPN h2 or http/1.1; plaintext clients are refused)"
        ),
        OptionSpec(
            flag: StandardOptions.tlsKey.flag, env: StandardOptions.tlsKey.environmentVariable,
            help: StandardOptions.tlsKey.help),
        OptionSpec(
            flag: "--points-addr", env: "POINTS_ADDR", default: "127.0.0.1:50052",
            help: "PointsService addresses, comma-separated host:port (round-robin)"),
        OptionSpec(
            flag: "--payments-addr", env: "PAYMENTS_ADDR", default: "127.0.0.1:50051",
            help: "PaymentsService addresses, comma-separated host:port (round-robin)"),
        OptionSpec(flag: nil, env: "JWT_HS256_SECRET", help: "HS256 shared secret (at least 32 bytes)", isSecret: true),
        OptionSpec(
            flag: nil, env: "JWT_ES256_PUBLIC_KEY",
            help:
                "path of a PEM bundle of P-256 public keys for ES256 tokens (up to 4, tried in turn: the issuer's current and next key)"
        ),
        OptionSpec(flag: nil, env: "JWT_ISSUER", help: "required `iss` of bearer tokens"),
        OptionSpec(flag: nil, env: "JWT_AUDIENCE", help: "required `aud` of bearer tokens"),
        OptionSpec(
            flag: nil, env: "EMAIL_HASH_SECRET",
            help:
                "HMAC key of the email hash (at least 32 bytes); keep it stable, starter-pack eligibility is keyed by it",
            isSecret: true),
        OptionSpec(
            flag: "--log-level", env: "LOG_LEVEL", default: "info",
            help: "debug, info, notice, warning, error or critical"),
        OptionSpec(
            flag: "--max-connections", env: "MAX_CONNECTIONS", default: String(HTTPServerLimits.connectionsMax),
            help: "open client connections kept (HTTP/1.1 and HTTP/2)"),
        OptionSpec(
            flag: "--max-concurrent-requests", env: "MAX_CONCURRENT_REQUESTS",
            default: String(GatewayLimits.concurrentRequestsMax),
            help: "requests handled at once (health probes excepted); beyond it, 503 with Retry-After"),
        OptionSpec(
            flag: "--notification-rate-limit-per-second", env: "NOTIFICATION_RATE_LIMIT_PER_SECOND",
            default: String(GatewayLimits.notificationRatePerSecond),
            help:
                "Apple notifications accepted per second per client address (the TCP peer: behind a load balancer, the balancer's); beyond it, 429"
        ),
        OptionSpec(
            flag: "--notification-rate-limit-burst", env: "NOTIFICATION_RATE_LIMIT_BURST",
            default: String(GatewayLimits.notificationRateBurst),
            help: "notifications one client address may send at once before the per-second rate applies"),
        OptionSpec(
            flag: "--shutdown-grace-ms", env: "SHUTDOWN_GRACE_MS",
            default: String(GatewayLimits.shutdownGrace.components.seconds * 1_000),
            help: "time in-flight requests get to finish on SIGTERM"),
        StandardOptions.internalAuth,
        OptionSpec(
            flag: "--backend-tls-ca", env: "BACKEND_TLS_CA_FILE",
            help:
                "PEM CA bundle (the internal CA): call the services over TLS (ALPN h2) verified against it; required with INTERNAL_AUTH=mtls"
        ),
        OptionSpec(
            flag: "--backend-tls-cert", env: "BACKEND_TLS_CERT",
            help:
                "PEM certificate chain the gateway presents to the services (its identity, GATEWAY_IDENTITY there); required with INTERNAL_AUTH=mtls"
        ),
        OptionSpec(
            flag: "--backend-tls-key", env: "BACKEND_TLS_KEY",
            help: "PEM private key for --backend-tls-cert (never logged)"),
        StandardOptions.pointsTLSServerName, StandardOptions.paymentsTLSServerName,
        OptionSpec(flag: "--sub", env: nil, help: "mint-token: the user id (UUID) of the token"),
        OptionSpec(flag: "--email", env: nil, help: "mint-token: the email claim of the token"),
        OptionSpec(flag: "--ttl", env: nil, default: "3600", help: "mint-token: lifetime in seconds"),
    ]

    private init(
        listen: HostAndPort, adminListen: HostAndPort?, pointsTargets: [HostAndPort], paymentsTargets: [HostAndPort],
        logLevel: LogLevel,
        connectionsMax: Int, admission: AdmissionLimits,
        shutdownGrace: Duration, internalAuth: InternalAuthMode, pointsBackendTLS: TLSConfiguration?,
        paymentsBackendTLS: TLSConfiguration?, tls: TLSConfiguration?
    ) {
        self.listen = listen
        self.adminListen = adminListen
        self.pointsTargets = pointsTargets
        self.paymentsTargets = paymentsTargets
        self.logLevel = logLevel
        self.connectionsMax = connectionsMax
        self.admission = admission
        self.shutdownGrace = shutdownGrace
        self.internalAuth = internalAuth
        self.pointsBackendTLS = pointsBackendTLS
        self.paymentsBackendTLS = paymentsBackendTLS
        self.tls = tls
    }

    /// Parses the server settings (the JWT and email-hash settings are read
    /// by `authentication(environment:readFile:)`).
    public init(options: CommandLineOptions) throws(SettingsError) {
        self = try SettingsCollector.reading(options) { Self.read(&$0) }
    }

    /// Reads every server setting, reporting each problem to `settings`.
    public static func read(_ settings: inout SettingsCollector) -> GatewaySettings? {
        let listen = settings.address("--listen", because: "it is the address the public API is served on")
        let adminListen = AdminListener.address(&settings)
        let points = settings.addresses(
            "--points-addr", because: "the gateway balances reads and spends over these PointsService instances")
        let payments = settings.addresses(
            "--payments-addr", because: "the gateway balances purchases over these PaymentsService instances")
        let logLevel = settings.logLevel(allowingCritical: true)
        let connections = settings.integer(
            "--max-connections", in: 1...1_000_000,
            because: "each open client connection holds a descriptor and buffers, so they are capped")
        let admission = readAdmission(&settings)
        let grace = settings.integer(
            "--shutdown-grace-ms", in: 0...3_600_000, unit: "of milliseconds",
            because: "it is how long in-flight requests may finish after SIGTERM")
        let tls = publicTLS(&settings)
        let mode = InternalAuth.mode(&settings)
        var backend: (points: TLSConfiguration?, payments: TLSConfiguration?)?
        if let mode {
            backend = backendTLS(&settings, mode: mode, targets: (points ?? []) + (payments ?? []))
        }
        guard let listen, let adminListen, let points, let payments, let logLevel, let connections, let admission,
            let grace, let tls, let mode,
            let backend, settings.problems.isEmpty
        else { return nil }
        return GatewaySettings(
            listen: listen, adminListen: adminListen, pointsTargets: points, paymentsTargets: payments,
            logLevel: logLevel, connectionsMax: Int(connections),
            admission: admission,
            shutdownGrace: .milliseconds(grace), internalAuth: mode, pointsBackendTLS: backend.points,
            paymentsBackendTLS: backend.payments,
            tls: tls)
    }

    /// The admission limits (`RequestAdmission`); nil when a problem was reported.
    private static func readAdmission(_ settings: inout SettingsCollector) -> AdmissionLimits? {
        let concurrent = settings.integer(
            "--max-concurrent-requests", in: 1...1_000_000,
            because: "requests beyond it are refused with 503 rather than queued without bound")
        let rate = settings.integer(
            "--notification-rate-limit-per-second", in: 1...1_000_000,
            because: "every notification costs a signature check, so each client address is limited to this rate")
        let burst = settings.integer(
            "--notification-rate-limit-burst", in: 1...1_000_000,
            because: "it is how many notifications one client address may send at once")
        guard let concurrent, let rate, let burst else { return nil }
        return AdmissionLimits(
            concurrentRequestsMax: Int(concurrent),
            notificationRule: TokenBucketTable.Rule(ratePerSecond: rate, burst: burst))
    }

    /// TLS on the public port: certificate and key together, or neither
    /// (`.some(nil)`); nil when a problem was reported.
    private static func publicTLS(_ settings: inout SettingsCollector) -> TLSConfiguration?? {
        switch (settings.value("--tls-cert"), settings.value("--tls-key")) {
        case (let certificate?, let key?): return .some(.server(certificateChainPath: certificate, privateKeyPath: key))
        case (nil, nil): return .some(nil)
        case (_?, nil):
            settings.report(
                SettingProblem(
                    "TLS_KEY", "must be set when TLS_CERT is",
                    because: "the public port serves its certificate with its private key"))
        case (nil, _?):
            settings.report(
                SettingProblem(
                    "TLS_CERT", "must be set when TLS_KEY is",
                    because: "a private key is of no use without its certificate"))
        }
        return nil
    }

    /// TLS towards each service. Mutual TLS needs the internal CA and the
    /// gateway's certificate and key; off is cleartext to loopback only
    /// (with a CA given, TLS that checks the services' names but presents
    /// a certificate only when one is given). Nil when a problem was reported.
    static func backendTLS(
        _ settings: inout SettingsCollector, mode: InternalAuthMode, targets: [HostAndPort]
    ) -> (points: TLSConfiguration?, payments: TLSConfiguration?)? {
        let ca = settings.value("--backend-tls-ca")
        let certificate = settings.value("--backend-tls-cert")
        let key = settings.value("--backend-tls-key")
        let identityReason =
            "under INTERNAL_AUTH=mtls (the default) it is the gateway's identity towards the services "
            + "(GATEWAY_IDENTITY there); INTERNAL_AUTH=off is for a loopback-only run"
        switch mode {
        case .mutualTLS:
            if ca == nil {
                settings.report(
                    .missing(
                        "BACKEND_TLS_CA_FILE",
                        because: "under INTERNAL_AUTH=mtls (the default) the services' certificates "
                            + "must chain to the internal CA it names"))
            }
            if certificate == nil { settings.report(.missing("BACKEND_TLS_CERT", because: identityReason)) }
            if key == nil {
                settings.report(
                    .missing(
                        "BACKEND_TLS_KEY",
                        because: "under INTERNAL_AUTH=mtls (the default) it is the private key "
                            + "of the gateway's certificate, which proves its identity to the services"))
            }
            guard ca != nil, certificate != nil, key != nil else { return nil }
        case .off:
            InternalAuth.requireLoopback(&settings, targets)
            if (certificate == nil) != (key == nil) {
                settings.report(
                    SettingProblem(
                        certificate == nil ? "BACKEND_TLS_CERT" : "BACKEND_TLS_KEY",
                        "must be set when \(certificate == nil ? "BACKEND_TLS_KEY" : "BACKEND_TLS_CERT") is",
                        because: "the gateway's client certificate goes with its private key"))
                return nil
            }
            guard ca != nil else { return (nil, nil) }
        }
        let points = InternalAuth.upstream(
            &settings, caSetting: "--backend-tls-ca", serverNameSetting: "POINTS_TLS_SERVER_NAME",
            certificateChainPath: certificate, privateKeyPath: key)
        let payments = InternalAuth.upstream(
            &settings, caSetting: "--backend-tls-ca", serverNameSetting: "PAYMENTS_TLS_SERVER_NAME",
            certificateChainPath: certificate, privateKeyPath: key)
        guard let points, let payments else { return nil }
        return (points, payments)
    }

    /// The token verifier and the email identity (JWT_*, EMAIL_HASH_SECRET).
    public static func authentication(
        environment: [String: String], readFile: (String) throws -> [UInt8]
    ) throws(SettingsError) -> (verifier: JWTVerifier, emailIdentity: EmailIdentity) {
        let options: CommandLineOptions
        do {
            options = try CommandLineOptions(specs: specs, arguments: [], environment: environment)
        } catch {
            preconditionFailure("no arguments cannot be misunderstood")
        }
        return try SettingsCollector.reading(options) { authentication(&$0, readFile: readFile) }
    }

    /// The same, reporting every problem to `settings`. Never shows a secret's value.
    public static func authentication(
        _ settings: inout SettingsCollector, readFile: (String) throws -> [UInt8]
    ) -> (verifier: JWTVerifier, emailIdentity: EmailIdentity)? {
        let bytesMin = GatewayLimits.hmacSecretBytesMin
        let problemsBefore = settings.problems.count
        let issuer = settings.required("JWT_ISSUER", because: "bearer tokens are accepted only from this issuer (iss)")
        let audience = settings.required(
            "JWT_AUDIENCE", because: "bearer tokens are accepted only for this audience (aud)")
        let secret = settings.value("JWT_HS256_SECRET").map { Array($0.utf8) }
        if let secret, secret.count < bytesMin {
            settings.report(
                SettingProblem(
                    "JWT_HS256_SECRET", "must be at least \(bytesMin) bytes",
                    because: "RFC 7518 section 3.2 requires an HS256 key at least as long as its hash"))
        }
        var publicKey: [UInt8]?
        if let path = settings.value("JWT_ES256_PUBLIC_KEY") {
            do {
                publicKey = try readFile(path)
                if let pem = publicKey, (try? JWTKeySet(hs256Secret: nil, es256PublicKeyPEM: pem)) == nil {
                    settings.report(
                        SettingProblem(
                            "JWT_ES256_PUBLIC_KEY", "must name a PEM EC P-256 public key (\(path) is not one)",
                            because: "ES256 bearer tokens are verified with the public key in it"))
                }
            } catch {
                settings.report(
                    SettingProblem(
                        "JWT_ES256_PUBLIC_KEY", "must name a readable PEM file (\(path) is not)",
                        because: "ES256 bearer tokens are verified with the public key in it"))
            }
        } else if secret == nil {
            settings.report(
                SettingProblem(
                    "JWT_HS256_SECRET", "must be set, or JWT_ES256_PUBLIC_KEY",
                    because: "the gateway cannot verify bearer tokens without a key"))
        }
        let emailSecret = settings.required(
            "EMAIL_HASH_SECRET", because: "it keys the email hash that links starter-pack claims")
        var emailIdentity: EmailIdentity?
        if let emailSecret {
            emailIdentity = try? EmailIdentity(hashKey: Array(emailSecret.utf8))
            if emailIdentity == nil {
                settings.report(
                    SettingProblem(
                        "EMAIL_HASH_SECRET", "must be at least \(bytesMin) bytes",
                        because: "it keys the email hash that links starter-pack claims"))
            }
        }
        guard let issuer, let audience, let emailIdentity, settings.problems.count == problemsBefore else { return nil }
        do {
            let keys = try JWTKeySet(hs256Secret: secret, es256PublicKeyPEM: publicKey)
            return (
                JWTVerifier(configuration: JWTVerifierConfiguration(keys: keys, issuer: issuer, audience: audience)),
                emailIdentity
            )
        } catch {
            settings.report(
                SettingProblem(
                    publicKey != nil ? "JWT_ES256_PUBLIC_KEY" : "JWT_HS256_SECRET", "must be a usable key (\(error))",
                    because: "bearer tokens are verified with it"))
            return nil
        }
    }
}
