/// The bounds of the admin listener: it serves a scraper and two probes,
/// never the public, so it keeps few connections and small requests.
public enum AdminLimits {
    /// Open connections (Prometheus, the kubelet's probes, an operator's curl).
    public static let connectionsMax = 64
    /// A request body (the admin routes take none).
    public static let requestBodyBytesMax = 1024
    /// Time in-flight scrapes get when the process stops.
    public static let shutdownGrace = Duration.seconds(1)
}
