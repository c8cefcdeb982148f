import RPCRuntime
import ServiceKit

/// The client towards PointsService (the service's saga and `redrive`):
/// `POINTS_ADDR`, and under mutual TLS PointsService's CA and name plus
/// this service's own certificate (`--tls-cert`/`--tls-key`) as its identity.
enum PointsConnection {
    /// Besides `POINTS_ADDR`, `INTERNAL_AUTH`, `--tls-cert` and `--tls-key`.
    static let optionSpecs = [StandardOptions.pointsTLSCA, StandardOptions.pointsTLSServerName]

    static func client(_ options: CommandLineOptions) throws -> RPCClient {
        let targets = try HostAndPort.parseList(options.required("POINTS_ADDR"))
        let tls = try InternalAuth.upstreamTLS(options, targets: targets, caSetting: "POINTS_TLS_CA", serverNameSetting: "POINTS_TLS_SERVER_NAME")
        return try RPCClient(targets: targets, configuration: .init(tls: tls))
    }
}
