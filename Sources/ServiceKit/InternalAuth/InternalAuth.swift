import Logging
import RPCCore
import RPCRuntime

/// Reads the internal-authentication settings (`INTERNAL_AUTH`, `TLS_CERT`,
/// `TLS_KEY`, `TLS_CLIENT_CA`, an upstream's `*_TLS_CA` and
/// `*_TLS_SERVER_NAME`) into TLS configurations, refusing combinations
/// that would leave money-moving calls open. One service certificate
/// serves both directions: it is what the service presents to its callers
/// and, as its client identity, to the services it calls. Each reading
/// reports every problem it finds to a `SettingsCollector`; the throwing
/// forms throw them all as one `SettingsError`.
public enum InternalAuth {
    /// Why a service needs the key of its certificate.
    static let keyReason =
        "under INTERNAL_AUTH=mtls (the default) it is the private key of this service's certificate, "
        + "which proves its identity to callers and to the services it calls"

    /// Why a service needs its own certificate (one sentence for both
    /// directions, so a service that serves and calls reports it once).
    static let identityReason =
        "under INTERNAL_AUTH=mtls (the default) it is this service's certificate, served to its callers "
        + "and presented to the services it calls; INTERNAL_AUTH=off is for a loopback-only run"

    /// `INTERNAL_AUTH` from `options`.
    public static func mode(_ options: CommandLineOptions) throws(SettingsError) -> InternalAuthMode {
        var settings = SettingsCollector(options)
        let mode = mode(&settings)
        try settings.finish()
        return mode ?? .mutualTLS
    }

    public static func mode(_ settings: inout SettingsCollector) -> InternalAuthMode? {
        let text = settings.value("--internal-auth") ?? InternalAuthMode.mutualTLS.rawValue
        return settings.read { () throws(SettingProblem) in try InternalAuthMode(parsing: text) }
    }

    /// The server side: mutual TLS with this service's certificate and the
    /// client CA (all three settings required), or, with `INTERNAL_AUTH=off`,
    /// the existing optional TLS without client certificates and only on a
    /// loopback `listen` address.
    public static func serverTLS(_ options: CommandLineOptions, listen: HostAndPort) throws(SettingsError)
        -> TLSConfiguration?
    {
        var settings = SettingsCollector(options)
        let tls = serverTLS(&settings, listen: listen)
        try settings.finish()
        return tls
    }

    /// The same, reporting to `settings`; `listen` is nil when the address
    /// itself was wrong (its loopback rule is then not checked).
    public static func serverTLS(_ settings: inout SettingsCollector, listen: HostAndPort?) -> TLSConfiguration? {
        let clientCA = settings.value("--tls-client-ca")
        guard let mode = mode(&settings) else { return nil }
        switch mode {
        case .mutualTLS:
            let identity = requiredIdentity(&settings)
            if clientCA == nil {
                settings.report(
                    .missing(
                        "TLS_CLIENT_CA",
                        because: "under INTERNAL_AUTH=mtls (the default) callers' certificates "
                            + "must chain to the internal CA it names"))
            }
            guard let identity, let clientCA else { return nil }
            return .server(
                certificateChainPath: identity.chain, privateKeyPath: identity.key,
                clientCertificateTrustRootsPath: clientCA)
        case .off:
            if let listen, !listen.isLoopback {
                settings.report(
                    SettingProblem(
                        "INTERNAL_AUTH", "must be mtls to listen on \(listen)",
                        because:
                            "INTERNAL_AUTH=off serves without caller authentication and is allowed on a loopback address (127.0.0.1, ::1) only"
                    ))
            }
            if clientCA != nil {
                settings.report(
                    SettingProblem(
                        "TLS_CLIENT_CA", "must be unset when INTERNAL_AUTH=off",
                        because:
                            "off authenticates nobody, so a client CA would promise a check that never happens"))
            }
            guard let identity = optionalIdentity(&settings) else { return nil }
            return identity.map { .server(certificateChainPath: $0.chain, privateKeyPath: $0.key) }
        }
    }

    /// The client side towards an upstream service at `targets`: mutual TLS
    /// verifying the upstream against `caSetting` and `serverNameSetting`
    /// and presenting this service's certificate; with `INTERNAL_AUTH=off`,
    /// only to loopback targets, cleartext (or, when `caSetting` is set,
    /// TLS that checks the upstream's name and presents a certificate only
    /// if one is configured).
    public static func upstreamTLS(
        _ options: CommandLineOptions, targets: [HostAndPort], caSetting: String, serverNameSetting: String
    ) throws(SettingsError) -> TLSConfiguration? {
        var settings = SettingsCollector(options)
        let tls = upstreamTLS(&settings, targets: targets, caSetting: caSetting, serverNameSetting: serverNameSetting)
        try settings.finish()
        return tls
    }

    /// The same, reporting to `settings`; `targets` is nil when the address
    /// list itself was wrong.
    public static func upstreamTLS(
        _ settings: inout SettingsCollector, targets: [HostAndPort]?, caSetting: String, serverNameSetting: String
    ) -> TLSConfiguration? {
        guard let mode = mode(&settings) else { return nil }
        switch mode {
        case .mutualTLS:
            let identity = requiredIdentity(&settings)
            let upstream = upstream(
                &settings, caSetting: caSetting, serverNameSetting: serverNameSetting,
                certificateChainPath: identity?.chain, privateKeyPath: identity?.key)
            return identity == nil ? nil : upstream
        case .off:
            if let targets { requireLoopback(&settings, targets) }
            guard settings.value(caSetting) != nil, let identity = optionalIdentity(&settings) else { return nil }
            return upstream(
                &settings, caSetting: caSetting, serverNameSetting: serverNameSetting,
                certificateChainPath: identity?.chain, privateKeyPath: identity?.key)
        }
    }

    /// TLS towards one upstream: its CA and name from the given settings
    /// (both required), presenting the given certificate if any.
    public static func upstream(
        _ settings: inout SettingsCollector, caSetting: String, serverNameSetting: String,
        certificateChainPath: String?, privateKeyPath: String?
    ) -> TLSConfiguration? {
        let ca = settings.required(
            caSetting, because: "the certificate of the service called must chain to the internal CA it names")
        let nameText = settings.required(
            serverNameSetting, because: "the service called must present a certificate carrying this name")
        let nameSetting = settings.name(serverNameSetting)
        var serverName: String?
        if let nameText {
            serverName = settings.read { () throws(SettingProblem) in
                try CallerPolicy.identity(nameText, setting: nameSetting)
            }
        }
        guard let ca, let serverName else { return nil }
        return .client(
            trustRootsPath: ca, serverName: serverName, certificateChainPath: certificateChainPath,
            privateKeyPath: privateKeyPath)
    }

    /// Refuses cleartext calls to anything but loopback addresses.
    public static func requireLoopback(_ settings: inout SettingsCollector, _ targets: [HostAndPort]) {
        for remote in targets where !remote.isLoopback {
            settings.report(
                SettingProblem(
                    "INTERNAL_AUTH", "must be mtls to call \(remote)",
                    because:
                        "INTERNAL_AUTH=off calls without authentication and is allowed towards loopback addresses only")
            )
        }
    }

    /// Installs `policy` on `router` under mutual TLS; with `INTERNAL_AUTH=off`
    /// installs nothing. Either way says so in the log, once, at start-up.
    public static func authorize(_ router: inout Router, policy: CallerPolicy, mode: InternalAuthMode, logger: Logger) {
        switch mode {
        case .mutualTLS:
            router.intercept(with: CallerAuthorization(policy: policy, logger: logger))
            logger.notice(
                "internal authentication: mutual TLS, callers authorised per method", ["internal_auth": mode.rawValue])
        case .off:
            logger.warning("INTERNAL_AUTH=off: callers are not authenticated; loopback only, never in production")
        }
    }

    /// This service's certificate and key, both required (mutual TLS).
    static func requiredIdentity(_ settings: inout SettingsCollector) -> (chain: String, key: String)? {
        let chain = settings.required("--tls-cert", because: identityReason)
        let key = settings.required("--tls-key", because: keyReason)
        guard let chain, let key else { return nil }
        return (chain, key)
    }

    /// This service's certificate and key when given: both or neither. The
    /// outer nil is a problem reported; the inner nil means none given.
    static func optionalIdentity(_ settings: inout SettingsCollector) -> (chain: String, key: String)?? {
        switch (settings.value("--tls-cert"), settings.value("--tls-key")) {
        case (let chain?, let key?): return .some((chain, key))
        case (nil, nil): return .some(nil)
        case (_?, nil):
            settings.report(
                SettingProblem(
                    "TLS_KEY", "must be set when TLS_CERT is", because: "a certificate is served with its private key"))
            return nil
        case (nil, _?):
            settings.report(
                SettingProblem(
                    "TLS_CERT", "must be set when TLS_KEY is",
                    because: "a private key is of no use without its certificate"))
            return nil
        }
    }
}
