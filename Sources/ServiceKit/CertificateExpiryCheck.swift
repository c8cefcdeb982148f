import Foundation
import Logging
import Metrics
import RPCRuntime

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
    public static func check(_ configurations: [TLSConfiguration?], metrics: CertificateExpiryMetrics?, logger: Logger,
                             nowUnixSeconds: Int64 = Int64(Date().timeIntervalSince1970)) throws(Failure) {
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
            let expires = Date(timeIntervalSince1970: TimeInterval(expiry)).ISO8601Format()
            guard left > 0 else {
                throw Failure(description: "a certificate in \(path) expired at \(expires): renew it (docs/OPERATIONS.md, certificates)")
            }
            if left < warningSeconds {
                logger.warning("TLS certificate expires soon", ["path": path, "expires_at": expires, "days_left": String(left / 86_400)])
            }
        }
    }
}
