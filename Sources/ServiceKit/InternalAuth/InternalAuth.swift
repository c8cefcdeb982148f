import RPCCore
import RPCRuntime

/// Reads the internal-authentication settings (`INTERNAL_AUTH`, `TLS_CERT`,
/// `TLS_KEY`, `TLS_CLIENT_CA`, an upstream's `*_TLS_CA` and
/// `*_TLS_SERVER_NAME`) into TLS configurations, refusing combinations
/// that would leave money-moving calls open. One service certificate
/// serves both directions: it is what the service presents to its callers
/// and, as its client identity, to the services it calls.
public enum InternalAuth {
    /// `INTERNAL_AUTH` from `options`.
    public static func mode(_ options: CommandLineOptions) throws -> InternalAuthMode {
        try InternalAuthMode(parsing: options.required("--internal-auth"))
    }

    /// The server side: mutual TLS with this service's certificate and the
    /// client CA (all three settings required), or, with `INTERNAL_AUTH=off`,
    /// the existing optional TLS without client certificates and only on a
    /// loopback `listen` address.
    public static func serverTLS(_ options: CommandLineOptions, listen: HostAndPort) throws -> TLSConfiguration? {
        let clientCA = nonEmpty(options.value("--tls-client-ca"))
        switch try mode(options) {
        case .mutualTLS:
            guard let identity = try identity(options) else {
                throw CommandLineError("INTERNAL_AUTH=mtls (the default) needs --tls-cert / TLS_CERT and --tls-key / TLS_KEY "
                    + "(this service's certificate) and --tls-client-ca / TLS_CLIENT_CA (the internal CA); "
                    + "INTERNAL_AUTH=off is for a loopback-only run")
            }
            guard let clientCA else {
                throw CommandLineError("INTERNAL_AUTH=mtls (the default) needs --tls-client-ca / TLS_CLIENT_CA: the CA callers' certificates must chain to")
            }
            return .server(certificateChainPath: identity.chain, privateKeyPath: identity.key, clientCertificateTrustRootsPath: clientCA)
        case .off:
            guard listen.isLoopback else {
                throw CommandLineError("INTERNAL_AUTH=off serves without caller authentication and is refused on \(listen): "
                    + "listen on a loopback address (127.0.0.1, ::1) or use INTERNAL_AUTH=mtls")
            }
            guard clientCA == nil else {
                throw CommandLineError("--tls-client-ca / TLS_CLIENT_CA is set but INTERNAL_AUTH=off authenticates nobody: unset one of them")
            }
            return try identity(options).map { .server(certificateChainPath: $0.chain, privateKeyPath: $0.key) }
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
    ) throws -> TLSConfiguration? {
        switch try mode(options) {
        case .mutualTLS:
            guard let identity = try identity(options) else {
                throw CommandLineError("INTERNAL_AUTH=mtls (the default) needs --tls-cert / TLS_CERT and --tls-key / TLS_KEY: "
                    + "the certificate this service presents to the services it calls")
            }
            return try upstream(options, caSetting: caSetting, serverNameSetting: serverNameSetting,
                                certificateChainPath: identity.chain, privateKeyPath: identity.key)
        case .off:
            try requireLoopback(targets)
            guard nonEmpty(options.value(caSetting)) != nil else { return nil }
            let identity = try identity(options)
            return try upstream(options, caSetting: caSetting, serverNameSetting: serverNameSetting,
                                certificateChainPath: identity?.chain, privateKeyPath: identity?.key)
        }
    }

    /// TLS towards one upstream: its CA and name from the given settings
    /// (both required), presenting the given certificate if any.
    public static func upstream(
        _ options: CommandLineOptions, caSetting: String, serverNameSetting: String, certificateChainPath: String?, privateKeyPath: String?
    ) throws -> TLSConfiguration {
        .client(trustRootsPath: try options.required(caSetting), serverName: try CallerPolicy.identity(options.required(serverNameSetting), setting: serverNameSetting),
                certificateChainPath: certificateChainPath, privateKeyPath: privateKeyPath)
    }

    /// Refuses cleartext calls to anything but loopback addresses.
    public static func requireLoopback(_ targets: [HostAndPort]) throws {
        if let remote = targets.first(where: { !$0.isLoopback }) {
            throw CommandLineError("INTERNAL_AUTH=off calls without authentication and is refused towards \(remote): "
                + "use loopback addresses or INTERNAL_AUTH=mtls")
        }
    }

    /// Installs `policy` on `router` under mutual TLS; with `INTERNAL_AUTH=off`
    /// installs nothing. Either way says so in the log, once, at start-up.
    public static func authorize(_ router: inout Router, policy: CallerPolicy, mode: InternalAuthMode, logger: Logger) {
        switch mode {
        case .mutualTLS:
            router.intercept(with: CallerAuthorization(policy: policy, logger: logger))
            logger.notice("internal authentication: mutual TLS, callers authorised per method", ["internal_auth": mode.rawValue])
        case .off:
            logger.warning("INTERNAL_AUTH=off: callers are not authenticated; loopback only, never in production")
        }
    }

    /// This service's certificate and key (`--tls-cert`, `--tls-key`); both or neither.
    static func identity(_ options: CommandLineOptions) throws -> (chain: String, key: String)? {
        switch (nonEmpty(options.value("--tls-cert")), nonEmpty(options.value("--tls-key"))) {
        case (let chain?, let key?): return (chain, key)
        case (nil, nil): return nil
        default: throw CommandLineError("--tls-cert / TLS_CERT and --tls-key / TLS_KEY go together")
        }
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
