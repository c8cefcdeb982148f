import Foundation
import Logging
import Metrics
import RPCRuntime
import ServiceKit
import TestSupport
import UTCTime
import XCTest

/// The start-up check of TLS certificate files: each file's earliest expiry
/// exported, a warning under 14 days, an expired one refused.
final class CertificateExpiryCheckTests: XCTestCase {
    private var pki: InternalTestPKI!

    override func setUp() async throws {
        pki = try await InternalTestPKI.makeOffPool(["points"])
    }

    override func tearDown() {
        pki?.remove()
    }

    private var now: Int64 { Int64(Date().timeIntervalSince1970) }

    func testTheEarliestExpiryOfAFileIsRead() throws {
        let leaf = try TLSCertificateFile.earliestExpiryUnixSeconds(path: pki.certificatePath("points"))
        let ca = try TLSCertificateFile.earliestExpiryUnixSeconds(path: pki.caPath)
        // internal-pki.sh: 90 days for a service, ten years for the CA (a day's slack either way).
        XCTAssertEqual(Double(leaf - now), 90 * 86_400, accuracy: 86_400)
        XCTAssertEqual(Double(ca - now), 3_650 * 86_400, accuracy: 86_400)
        let bundle = pki.directory + "/bundle.pem"
        let text =
            try String(contentsOfFile: pki.caPath, encoding: .utf8)
            + String(contentsOfFile: pki.certificatePath("points"), encoding: .utf8)
        try text.write(toFile: bundle, atomically: true, encoding: .utf8)
        XCTAssertEqual(
            try TLSCertificateFile.earliestExpiryUnixSeconds(path: bundle), leaf, "the first to expire ends the bundle")
        XCTAssertThrowsError(
            try TLSCertificateFile.earliestExpiryUnixSeconds(path: pki.keyPath("points")), "a key is no certificate")
        XCTAssertThrowsError(try TLSCertificateFile.earliestExpiryUnixSeconds(path: pki.directory + "/missing.pem"))
    }

    func testEachFileIsExportedOnceAndOneExpiringSoonIsAWarning() throws {
        let registry = MetricsRegistry()
        let metrics = try CertificateExpiryMetrics(registry: registry)
        let sink = MemorySink()
        let server = TLSConfiguration.server(
            certificateChainPath: pki.certificatePath("points"), privateKeyPath: pki.keyPath("points"),
            clientCertificateTrustRootsPath: pki.caPath)
        let upstream = TLSConfiguration.client(trustRootsPath: pki.caPath, serverName: "points")
        try CertificateExpiryCheck.check(
            [server, nil, upstream], metrics: metrics, logger: Logger(service: "t", sink: sink))
        let leaf = try TLSCertificateFile.earliestExpiryUnixSeconds(path: pki.certificatePath("points"))
        XCTAssertEqual(metrics.expiry.labels(pki.certificatePath("points")).value, Double(leaf))
        XCTAssertEqual(
            registry.render().split(separator: "\n").filter {
                $0.hasPrefix("iap_tls_certificate_expiry_timestamp_seconds{")
            }.count, 2,
            "the CA file is one series though two configurations load it")
        XCTAssertEqual(sink.allLines, [], "90 days left: nothing to say")
        try CertificateExpiryCheck.check(
            [server], metrics: metrics, logger: Logger(service: "t", sink: sink), nowUnixSeconds: leaf - 3 * 86_400)
        XCTAssertEqual(sink.allLines.count, 1)
        XCTAssertTrue(
            sink.allLines.first?.contains("expires soon") == true
                && sink.allLines.first?.contains(#""days_left":"3""#) == true,
            "\(sink.allLines)")
        // The expiry as every timestamp the system writes (UTCTime's RFC 3339,
        // milliseconds included), not Foundation's ISO 8601 style, whose
        // Calendar and TimeZone load ICU's time-zone data at every start.
        let expiresAt = UTCDateTime(unixMilliseconds: leaf * 1000).rfc3339
        XCTAssertTrue(sink.allLines.first?.contains(#""expires_at":"\#(expiresAt)""#) == true, "\(sink.allLines)")
    }

    func testAnExpiredCertificateStopsTheStart() throws {
        let server = TLSConfiguration.server(
            certificateChainPath: pki.certificatePath("points"), privateKeyPath: pki.keyPath("points"))
        let leaf = try TLSCertificateFile.earliestExpiryUnixSeconds(path: pki.certificatePath("points"))
        XCTAssertThrowsError(
            try CertificateExpiryCheck.check(
                [server], metrics: nil, logger: Logger(service: "t", sink: MemorySink()),
                nowUnixSeconds: leaf)
        ) { error in
            XCTAssertTrue(
                "\(error)".contains("expired") && "\(error)".contains(self.pki.certificatePath("points")), "\(error)")
        }
        XCTAssertThrowsError(
            try CertificateExpiryCheck.check(
                [.client(trustRootsPath: pki.keyPath("points"), serverName: "x")], metrics: nil,
                logger: Logger(service: "t", sink: MemorySink())), "an unreadable CA file")
    }
}
