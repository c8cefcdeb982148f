import RPCRuntime
import ServiceKit
import XCTest

/// `INTERNAL_AUTH` and the TLS settings: mutual TLS by default, cleartext
/// only on loopback and only when asked for, every mistake named.
final class InternalAuthTests: XCTestCase {
    private let specs = [
        StandardOptions.internalAuth, StandardOptions.tlsCertificate, StandardOptions.tlsKey,
        StandardOptions.tlsClientCA,
        StandardOptions.pointsTLSCA, StandardOptions.pointsTLSServerName,
    ]
    private let mutual = [
        "TLS_CERT": "/c/payments.pem", "TLS_KEY": "/c/payments.key", "TLS_CLIENT_CA": "/c/ca.pem",
        "POINTS_TLS_CA": "/c/ca.pem",
    ]
    private let loopback = HostAndPort(host: "127.0.0.1", port: 50051)
    private let everywhere = HostAndPort(host: "0.0.0.0", port: 50051)

    private func options(_ environment: [String: String], _ arguments: [String] = []) throws -> CommandLineOptions {
        try CommandLineOptions(specs: specs, arguments: arguments, environment: environment)
    }

    private func assertRefused(
        _ body: @autoclosure () throws -> Any?, naming words: [String], file: StaticString = #filePath,
        line: UInt = #line
    ) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            for word in words {
                XCTAssertTrue("\(error)".contains(word), "\(word) in \(error)", file: file, line: line)
            }
        }
    }

    func testMutualTLSIsTheDefaultAndNeedsAllThreeFiles() throws {
        XCTAssertEqual(try InternalAuth.mode(options([:])), .mutualTLS)
        let server = try InternalAuth.serverTLS(options(mutual), listen: everywhere)
        XCTAssertEqual(
            server,
            .server(
                certificateChainPath: "/c/payments.pem", privateKeyPath: "/c/payments.key",
                clientCertificateTrustRootsPath: "/c/ca.pem"))
        assertRefused(
            try InternalAuth.serverTLS(options([:]), listen: loopback),
            naming: ["TLS_CERT", "TLS_CLIENT_CA", "INTERNAL_AUTH=off"])
        var withoutCA = mutual
        withoutCA["TLS_CLIENT_CA"] = nil
        assertRefused(try InternalAuth.serverTLS(options(withoutCA), listen: loopback), naming: ["TLS_CLIENT_CA"])
        var withoutKey = mutual
        withoutKey["TLS_KEY"] = nil
        assertRefused(try InternalAuth.serverTLS(options(withoutKey), listen: loopback), naming: ["TLS_KEY"])
        let flags = try InternalAuth.serverTLS(
            options([:], ["--tls-cert", "/f/c.pem", "--tls-key", "/f/k.pem", "--tls-client-ca", "/f/ca.pem"]),
            listen: everywhere)
        XCTAssertEqual(flags?.clientCertificateTrustRootsPath, "/f/ca.pem")
    }

    func testUpstreamsAreVerifiedByNameAndSeeOurCertificate() throws {
        let tls = try InternalAuth.upstreamTLS(
            options(mutual), targets: [HostAndPort(host: "points", port: 50052)],
            caSetting: "POINTS_TLS_CA", serverNameSetting: "POINTS_TLS_SERVER_NAME")
        XCTAssertEqual(
            tls,
            .client(
                trustRootsPath: "/c/ca.pem", serverName: "points",
                certificateChainPath: "/c/payments.pem", privateKeyPath: "/c/payments.key"))
        var renamed = mutual
        renamed["POINTS_TLS_SERVER_NAME"] = "Points.Internal"
        XCTAssertEqual(
            try InternalAuth.upstreamTLS(
                options(renamed), targets: [loopback], caSetting: "POINTS_TLS_CA",
                serverNameSetting: "POINTS_TLS_SERVER_NAME")?.serverName, "points.internal")
        var withoutCA = mutual
        withoutCA["POINTS_TLS_CA"] = nil
        assertRefused(
            try InternalAuth.upstreamTLS(
                options(withoutCA), targets: [loopback], caSetting: "POINTS_TLS_CA",
                serverNameSetting: "POINTS_TLS_SERVER_NAME"), naming: ["POINTS_TLS_CA"])
        assertRefused(
            try InternalAuth.upstreamTLS(
                options(["POINTS_TLS_CA": "/c/ca.pem"]), targets: [loopback], caSetting: "POINTS_TLS_CA",
                serverNameSetting: "POINTS_TLS_SERVER_NAME"), naming: ["TLS_CERT", "TLS_KEY"])
    }

    func testOffIsCleartextAndOnlyOnLoopback() throws {
        let off = ["INTERNAL_AUTH": "off"]
        XCTAssertEqual(try InternalAuth.mode(options(off)), .off)
        XCTAssertEqual(try InternalAuth.mode(options(["INTERNAL_AUTH": "OFF"])), .off)
        XCTAssertNil(try InternalAuth.serverTLS(options(off), listen: loopback))
        XCTAssertNil(
            try InternalAuth.upstreamTLS(
                options(off), targets: [loopback, HostAndPort(host: "::1", port: 1)],
                caSetting: "POINTS_TLS_CA", serverNameSetting: "POINTS_TLS_SERVER_NAME"))
        assertRefused(
            try InternalAuth.serverTLS(options(off), listen: everywhere),
            naming: ["INTERNAL_AUTH=off", "0.0.0.0:50051"])
        assertRefused(
            try InternalAuth.serverTLS(options(off), listen: HostAndPort(host: "10.0.0.5", port: 1)),
            naming: ["10.0.0.5"])
        assertRefused(
            try InternalAuth.upstreamTLS(
                options(off), targets: [loopback, HostAndPort(host: "points", port: 50052)],
                caSetting: "POINTS_TLS_CA", serverNameSetting: "POINTS_TLS_SERVER_NAME"),
            naming: ["INTERNAL_AUTH=off", "points:50052"])
        // A client CA with authentication off is a contradiction, not a silent downgrade.
        assertRefused(
            try InternalAuth.serverTLS(options(off.merging(["TLS_CLIENT_CA": "/c/ca.pem"]) { $1 }), listen: loopback),
            naming: ["TLS_CLIENT_CA"])
        // Off still serves TLS without client certificates when given a certificate.
        let tls = try InternalAuth.serverTLS(
            options(off.merging(["TLS_CERT": "/c/a.pem", "TLS_KEY": "/c/a.key"]) { $1 }), listen: loopback)
        XCTAssertEqual(tls, .server(certificateChainPath: "/c/a.pem", privateKeyPath: "/c/a.key"))
        assertRefused(
            try InternalAuth.mode(options(["INTERNAL_AUTH": "none"])), naming: ["INTERNAL_AUTH", "mtls", "off"])
        // Off towards a TLS upstream: its name is still checked; a certificate is presented only when configured.
        let verified = try InternalAuth.upstreamTLS(
            options(off.merging(["POINTS_TLS_CA": "/c/ca.pem"]) { $1 }), targets: [loopback],
            caSetting: "POINTS_TLS_CA", serverNameSetting: "POINTS_TLS_SERVER_NAME")
        XCTAssertEqual(verified, .client(trustRootsPath: "/c/ca.pem", serverName: "points"))
    }

    func testLoopbackAddresses() {
        for host in ["127.0.0.1", "127.255.0.9", "::1", "[::1]", "0:0:0:0:0:0:0:1", "localhost", "LocalHost"] {
            XCTAssertTrue(HostAndPort(host: host, port: 1).isLoopback, host)
        }
        for host in [
            "0.0.0.0", "::", "128.0.0.1", "10.0.0.1", "points", "localhost.evil", "::2", "::ffff:127.0.0.1",
            "1.127.0.0", "",
        ] {
            XCTAssertFalse(HostAndPort(host: host, port: 1).isLoopback, host)
        }
    }

    func testHelpDocumentsEverySetting() throws {
        let help = try options([:]).helpText(program: "X", summary: "x")
        for name in [
            "INTERNAL_AUTH", "--internal-auth", "TLS_CLIENT_CA", "--tls-client-ca", "POINTS_TLS_CA",
            "POINTS_TLS_SERVER_NAME", "[default: mtls]",
        ] {
            XCTAssertTrue(help.contains(name), name)
        }
    }
}
