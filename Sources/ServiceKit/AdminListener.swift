import AdminServer
import Foundation
import Logging
import Metrics
import RPCRuntime

/// The admin listener's operator contract, the same for the three
/// processes: `ADMIN_LISTEN_ADDR` / `--admin-listen` (`off` disables it,
/// port 0 picks a free one), one log line, and the line scripts and tests
/// wait for on stdout: "<Name> admin listening on HOST:PORT" (printed
/// before the main listener's).
public enum AdminListener {
    /// The value that turns the admin listener off.
    public static let offValue = "off"

    /// The option, with the process's default address.
    public static func option(default address: String) -> OptionSpec {
        OptionSpec(
            flag: "--admin-listen", env: "ADMIN_LISTEN_ADDR", default: address,
            help:
                "HOST:PORT of the admin listener (GET /metrics, /livez, /readyz; no authentication: keep it private); port 0 picks one, off disables it."
        )
    }

    /// The address, `.some(nil)` when the setting is `off`, nil when a
    /// problem was reported to `settings`.
    public static func address(_ settings: inout SettingsCollector) -> HostAndPort?? {
        let reason = "Prometheus scrapes /metrics and the orchestrator probes /livez and /readyz there"
        guard let text = settings.required("--admin-listen", because: reason) else { return nil }
        if text.trimmingCharacters(in: .whitespaces).lowercased() == offValue { return .some(nil) }
        guard let address = try? HostAndPort(parsing: text) else {
            settings.report(
                SettingProblem(
                    settings.name("--admin-listen"), "must be HOST:PORT (port 0 picks one) or off", because: reason))
            return nil
        }
        return .some(address)
    }

    /// Starts the admin listener at `listen` (nothing when nil), logs and
    /// announces its bound port; the caller shuts it down after the main
    /// listener has drained.
    public static func start(
        name: String, listen: HostAndPort?, registry: MetricsRegistry, logger: Logger,
        readiness: @escaping @Sendable () -> AdminReadiness
    ) async throws -> AdminServer? {
        guard let listen else {
            logger.notice("admin listener off")
            return nil
        }
        let server = try AdminServer(listen: listen, registry: registry, readiness: readiness)
        let port = try await server.start()
        logger.notice("admin listening", ["address": "\(listen.host):\(port)"])
        FileHandle.standardOutput.write(Data("\(name) admin listening on \(listen.host):\(port)\n".utf8))
        return server
    }

    /// /readyz for a service: its health monitor's view (every dependency
    /// healthy, not shutting down), dependencies named in the detail.
    public static func readiness(of monitor: HealthMonitor) -> AdminReadiness {
        let dependencies = monitor.dependencies.sorted { $0.key < $1.key }
        let detail = dependencies.map { "\($0.key)=\($0.value.isHealthy ? "up" : "down")" }.joined(separator: " ")
        return AdminReadiness(isReady: monitor.isServing, detail: detail)
    }
}
