import Logging
import RPCRuntime

/// Readers of the settings every process shares: addresses and the log level.
extension SettingsCollector {
    /// One `HOST:PORT`, or a problem saying so and why.
    public mutating func address(_ setting: String, because reason: String) -> HostAndPort? {
        guard let text = required(setting, because: reason) else { return nil }
        guard let address = try? HostAndPort(parsing: text) else {
            report(
                SettingProblem(
                    name(setting), "must be HOST:PORT (or [IPv6]:PORT) with a port in 0...65535", because: reason))
            return nil
        }
        return address
    }

    /// A comma-separated list of `HOST:PORT` (the clients balance over it).
    public mutating func addresses(_ setting: String, because reason: String) -> [HostAndPort]? {
        guard let text = required(setting, because: reason) else { return nil }
        guard let addresses = try? HostAndPort.parseList(text) else {
            report(SettingProblem(name(setting), "must be a comma-separated list of HOST:PORT", because: reason))
            return nil
        }
        return addresses
    }

    /// `LOG_LEVEL` (`--log-level`): `critical` only where the process accepts it.
    public mutating func logLevel(allowingCritical: Bool = false) -> LogLevel? {
        let reason = "it is the least severe kind of log line written"
        if allowingCritical {
            return choice(
                "--log-level",
                [
                    "debug": .debug, "info": .info, "notice": .notice, "warning": .warning, "error": .error,
                    "critical": .critical,
                ], because: reason)
        }
        return choice(
            "--log-level", ["debug": .debug, "info": .info, "notice": .notice, "warning": .warning, "error": .error],
            because: reason)
    }
}
