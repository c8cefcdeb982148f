import RPCRuntime
import ServiceKit

/// The client towards PointsService (the service's saga and `redrive`):
/// `POINTS_ADDR`, and under mutual TLS PointsService's CA and name plus
/// this service's own certificate (`--tls-cert`/`--tls-key`) as its identity.
enum PointsConnection {
    /// Besides `POINTS_ADDR`, `INTERNAL_AUTH`, `--tls-cert` and `--tls-key`.
    static let optionSpecs = [StandardOptions.pointsTLSCA, StandardOptions.pointsTLSServerName]

    /// Where PointsService is and how to reach it.
    struct Settings: Sendable {
        var targets: [HostAndPort]
        var tls: TLSConfiguration?
    }

    static func client(_ options: CommandLineOptions) throws -> RPCClient {
        return try client(SettingsCollector.reading(options) { Self.read(&$0) })
    }

    static func client(_ settings: Settings) throws -> RPCClient {
        try RPCClient(targets: settings.targets, configuration: .init(tls: settings.tls))
    }

    /// Reads `POINTS_ADDR` and the TLS towards it, reporting each problem to `settings`.
    static func read(_ settings: inout SettingsCollector) -> Settings? {
        let targets = settings.addresses(
            "POINTS_ADDR", because: "PaymentsService credits purchases through the PointsService instances listed")
        let tls = InternalAuth.upstreamTLS(
            &settings, targets: targets, caSetting: "POINTS_TLS_CA", serverNameSetting: "POINTS_TLS_SERVER_NAME")
        guard let targets else { return nil }
        return Settings(targets: targets, tls: tls)
    }
}
