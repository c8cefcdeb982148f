/// `iap_tls_certificate_expiry_timestamp_seconds`: when each TLS
/// certificate file the process loaded expires (set once at start).
public struct CertificateExpiryMetrics: Sendable {
    public let expiry: Gauge

    public init(registry: MetricsRegistry) throws(MetricsRegistrationError) {
        expiry = try registry.makeGauge(IAPMetricNames.tlsCertificateExpiry)
    }

    /// The file at `path` expires at `unixSeconds`.
    public func record(path: String, expiresAtUnixSeconds unixSeconds: Int64) {
        expiry.labels(path).set(Double(unixSeconds))
    }
}
