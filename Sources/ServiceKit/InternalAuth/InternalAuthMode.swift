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

    public init(parsing text: String) throws {
        guard let mode = InternalAuthMode(rawValue: text.lowercased()) else {
            throw CommandLineError("INTERNAL_AUTH must be mtls (the default) or off (loopback only)")
        }
        self = mode
    }
}
