import Logging
import RPCRuntime
import ServiceKit
import ServiceKitDatabase

/// Everything `PointsService serve` reads from flags and the environment,
/// read in one place before anything connects: every missing or wrong value
/// is reported (`ServiceRunner.settings` prints them and exits 2).
struct PointsSettings: Sendable {
    var logLevel: LogLevel
    var database: ServiceDatabase.Settings
    var catalog: PackageCatalog
    /// What only `serve` needs (nil for `migrate`, which neither listens nor authenticates).
    var serving: Serving?

    /// The server's address, internal authentication and caller policy.
    struct Serving: Sendable {
        var listen: HostAndPort
        /// The admin listener (/metrics, /livez, /readyz); nil when off.
        var adminListen: HostAndPort?
        var internalAuth: InternalAuthMode
        /// Mutual TLS with the caller CA, or (off, loopback) optional TLS.
        var tls: TLSConfiguration?
        var callerPolicy: CallerPolicy
    }

    static let packagesFile = OptionSpec(
        flag: nil, env: "PACKAGES_FILE", default: "config/packages.json", help: "The package catalog (JSON).")

    /// Every option, in the order `--help` lists them (and problems are reported).
    static let specs: [OptionSpec] =
        [
            StandardOptions.listen(default: "127.0.0.1:50052"), AdminListener.option(default: "127.0.0.1:9182"),
            StandardOptions.databaseURL, StandardOptions.databaseMaxConnections,
            packagesFile, StandardOptions.logLevel, StandardOptions.tlsCertificate, StandardOptions.tlsKey,
        ] + PointsCallerPolicy.optionSpecs

    /// Reads every setting `serving` needs (the server's too unless it is
    /// false), reporting each problem to `settings`; nil when there was one.
    static func read(_ settings: inout SettingsCollector, serving: Bool = true) -> PointsSettings? {
        let logLevel = settings.logLevel()
        let database = ServiceDatabase.Settings.read(&settings)
        let catalog = readCatalog(&settings)
        let server = serving ? readServing(&settings) : nil
        guard let logLevel, let database, let catalog, !serving || server != nil, settings.problems.isEmpty else {
            return nil
        }
        return PointsSettings(logLevel: logLevel, database: database, catalog: catalog, serving: server)
    }

    private static func readServing(_ settings: inout SettingsCollector) -> Serving? {
        let listen = settings.address("--listen", because: "it is the address PointsService accepts gRPC calls on")
        let adminListen = AdminListener.address(&settings)
        let mode = InternalAuth.mode(&settings)
        let tls = InternalAuth.serverTLS(&settings, listen: listen)
        let policy = PointsCallerPolicy.read(&settings)
        guard let listen, let adminListen, let mode, let policy else { return nil }
        return Serving(listen: listen, adminListen: adminListen, internalAuth: mode, tls: tls, callerPolicy: policy)
    }

    /// `PACKAGES_FILE`, read and checked now: a catalog that cannot be used stops start-up.
    private static func readCatalog(_ settings: inout SettingsCollector) -> PackageCatalog? {
        let reason = "it lists the packages users can buy and the credits each grants"
        guard let path = settings.required("PACKAGES_FILE", because: reason) else { return nil }
        do {
            return try PackageCatalog.load(path: path)
        } catch {
            settings.report(
                SettingProblem(
                    "PACKAGES_FILE", "must name a readable, valid package catalog (\(error.message))", because: reason))
            return nil
        }
    }
}
