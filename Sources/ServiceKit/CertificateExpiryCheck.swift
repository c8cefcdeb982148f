import Logging
import Metrics
import RPCRuntime
import UTCTime

/// The start-up check of the TLS certificate files a process loads: an
/// expired one stops the start (every handshake with it would fail, and a
/// crash loop is louder than a process that serves nothing), one expiring
/// within `warningSeconds` is logged at warning level, and each file's
/// expiry is exported (`CertificateExpiryMetrics`) for the alerts that
/// watch it. Certificates are read once at start: a renewed file is used,
/// and counted, after a restart.
public enum CertificateExpiryCheck {
    /// Warn when a certificate has less than this left.
    public static let warningSeconds: Int64 = 14 * 86_400

    /// A certificate file that cannot be used.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Checks every certificate file of `configurations` (nil entries:
    /// no TLS there), each path once.
    public static func check(
        _ configurations: [TLSConfiguration?], metrics: CertificateExpiryMetrics?, logger: Logger,
        nowUnixSeconds: Int64 = UTCDateTime.now().unixMilliseconds / 1000
    ) throws(Failure) {
        var seen = Set<String>()
        for path in configurations.compactMap({ $0 }).flatMap(\.certificateFilePaths) where seen.insert(path).inserted {
            let expiry: Int64
            do {
                expiry = try TLSCertificateFile.earliestExpiryUnixSeconds(path: path)
            } catch {
                throw Failure(description: "cannot read the certificates in \(path): \(error)")
            }
            metrics?.record(path: path, expiresAtUnixSeconds: expiry)
            let left = expiry - nowUnixSeconds
            // UTCTime, not Foundation's ISO 8601 style: that one builds a
            // Calendar and a TimeZone, which load ICU's time-zone data and
            // code into every process at start (1.2-1.9 MiB of idle RSS,
            // docs/PERFORMANCE.md "Session 22").
            let expires = UTCDateTime(unixMilliseconds: expiry * 1000).rfc3339
            guard left > 0 else {
                throw Failure(
                    description:
                        "a certificate in \(path) expired at \(expires): renew it (docs/OPERATIONS.md, certificates)")
            }
            if left < warningSeconds {
                logger.warning(
                    "TLS certificate expires soon",
                    ["path": path, "expires_at": expires, "days_left": String(left / 86_400)])
            }
        }
    }
}
