/// `INTERNAL_AUTH`: how the services authenticate each other.
public enum InternalAuthMode: String, Sendable, CaseIterable {
    /// The default: every internal connection is mutual TLS against the
    /// internal CA, and each method admits only the callers its
    /// `CallerPolicy` names.
    case mutualTLS = "mtls"
    /// No caller authentication, cleartext h2c: allowed only when the
    /// service listens on, and calls, loopback addresses (a private run on
    /// one machine, tests of service logic).
    case off

    public init(parsing text: String) throws(SettingProblem) {
        guard let mode = InternalAuthMode(rawValue: text.lowercased()) else {
            throw SettingProblem(
                "INTERNAL_AUTH", "must be mtls (the default) or off",
                because:
                    "mtls authenticates every internal caller by its certificate; off is cleartext for a loopback-only run"
            )
        }
        self = mode
    }
}
