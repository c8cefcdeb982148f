import ServiceKit
import XCTest
@testable import Gateway

final class GatewaySettingsTests: XCTestCase {
    private func options(_ arguments: [String], _ environment: [String: String] = [:]) throws -> CommandLineOptions {
        try CommandLineOptions(specs: GatewaySettings.specs, arguments: arguments, environment: environment)
    }

    /// The gateway's certificate towards the services and the internal CA.
    private let backendCertificates = [
        "BACKEND_TLS_CA_FILE": "/c/ca.pem", "BACKEND_TLS_CERT": "/c/gateway.pem", "BACKEND_TLS_KEY": "/c/gateway.key",
    ]

    func testDefaultsEnvironmentAndFlags() throws {
        var settings = try GatewaySettings(options: options([], backendCertificates))
        XCTAssertEqual(settings.listen.description, "127.0.0.1:8080")
        XCTAssertEqual(settings.pointsTargets.map(\.description), ["127.0.0.1:50052"])
        XCTAssertEqual(settings.paymentsTargets.map(\.description), ["127.0.0.1:50051"])
        XCTAssertEqual(settings.connectionsMax, 10_000)
        XCTAssertEqual(settings.internalAuth, .mutualTLS)
        settings = try GatewaySettings(
            options: options(
                ["--listen", "0.0.0.0:9000"],
                backendCertificates.merging([
                    "LISTEN_ADDR": "127.0.0.1:1", "POINTS_ADDR": "a:1, b:2", "LOG_LEVEL": "DEBUG",
                ]) { $1 }))
        XCTAssertEqual(settings.listen.description, "0.0.0.0:9000")
        XCTAssertEqual(settings.pointsTargets.map(\.description), ["a:1", "b:2"])
        XCTAssertEqual(settings.logLevel, .debug)
    }

    func testBadValuesAreRefused() throws {
        let off = ["INTERNAL_AUTH": "off"]
        XCTAssertNoThrow(try GatewaySettings(options: options([], off)))
        XCTAssertThrowsError(try GatewaySettings(options: options(["--listen", "nowhere"], off)))
        XCTAssertThrowsError(try GatewaySettings(options: options(["--log-level", "loud"], off)))
        XCTAssertThrowsError(try GatewaySettings(options: options(["--max-connections", "0"], off)))
        XCTAssertThrowsError(try options(["--unknown", "1"]))
    }

    func testTheServicesAreCalledOverMutualTLSUnlessExplicitlyOffOnLoopback() throws {
        let settings = try GatewaySettings(options: options([], backendCertificates))
        XCTAssertEqual(
            settings.pointsBackendTLS,
            .client(
                trustRootsPath: "/c/ca.pem", serverName: "points",
                certificateChainPath: "/c/gateway.pem", privateKeyPath: "/c/gateway.key"))
        XCTAssertEqual(
            settings.paymentsBackendTLS,
            .client(
                trustRootsPath: "/c/ca.pem", serverName: "payments",
                certificateChainPath: "/c/gateway.pem", privateKeyPath: "/c/gateway.key"))
        let renamed = try GatewaySettings(
            options: options(
                ["--backend-tls-ca", "/f/ca.pem"],
                backendCertificates.merging(
                    ["POINTS_TLS_SERVER_NAME": "points.internal", "PAYMENTS_TLS_SERVER_NAME": "payments.internal"]) {
                        $1
                    }))
        XCTAssertEqual(renamed.pointsBackendTLS?.serverName, "points.internal")
        XCTAssertEqual(renamed.paymentsBackendTLS?.serverName, "payments.internal")
        XCTAssertEqual(renamed.paymentsBackendTLS?.trustRootsPath, "/f/ca.pem")
        for missing in backendCertificates.keys {
            var partial = backendCertificates
            partial[missing] = nil
            XCTAssertThrowsError(try GatewaySettings(options: options([], partial)), missing) { error in
                XCTAssertTrue("\(error)".contains(missing), "\(error)")
            }
        }
        let off = try GatewaySettings(options: options([], ["INTERNAL_AUTH": "off"]))
        XCTAssertEqual(off.internalAuth, .off)
        XCTAssertNil(off.pointsBackendTLS)
        XCTAssertNil(off.paymentsBackendTLS)
        XCTAssertThrowsError(
            try GatewaySettings(options: options([], ["INTERNAL_AUTH": "off", "PAYMENTS_ADDR": "payments:50051"]))
        ) { error in
            XCTAssertTrue("\(error)".contains("INTERNAL_AUTH=off") && "\(error)".contains("payments:50051"), "\(error)")
        }
        // Off with a CA: TLS that checks the names, without a client certificate.
        let verifiedOnly = try GatewaySettings(
            options: options([], ["INTERNAL_AUTH": "off", "BACKEND_TLS_CA_FILE": "/c/ca.pem"]))
        XCTAssertEqual(verifiedOnly.pointsBackendTLS, .client(trustRootsPath: "/c/ca.pem", serverName: "points"))
    }

    func testHelpListsEveryVariableAndHidesSecrets() throws {
        let help = try options([], ["JWT_HS256_SECRET": "s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t"])
            .helpText(program: "Gateway", summary: "x")
        for name in [
            "LISTEN_ADDR", "POINTS_ADDR", "PAYMENTS_ADDR", "JWT_HS256_SECRET", "JWT_ES256_PUBLIC_KEY", "JWT_ISSUER",
            "JWT_AUDIENCE", "EMAIL_HASH_SECRET", "LOG_LEVEL", "BACKEND_TLS_CA_FILE", "BACKEND_TLS_CERT",
            "BACKEND_TLS_KEY",
            "INTERNAL_AUTH", "POINTS_TLS_SERVER_NAME", "PAYMENTS_TLS_SERVER_NAME",
        ] {
            XCTAssertTrue(help.contains(name), name)
        }
        XCTAssertFalse(help.contains("s3cr3t"))
    }

    func testAuthenticationNeedsTheEmailHashSecret() throws {
        let environment = [
            "JWT_ISSUER": "i", "JWT_AUDIENCE": "a", "JWT_HS256_SECRET": String(repeating: "k", count: 32),
        ]
        XCTAssertThrowsError(try GatewaySettings.authentication(environment: environment, readFile: { _ in [] }))
        var complete = environment
        complete["EMAIL_HASH_SECRET"] = String(repeating: "e", count: 32)
        XCTAssertNoThrow(try GatewaySettings.authentication(environment: complete, readFile: { _ in [] }))
    }

    func testMintTokenVerifies() throws {
        let environment = [
            "JWT_ISSUER": "i", "JWT_AUDIENCE": "a", "JWT_HS256_SECRET": String(repeating: "k", count: 32),
        ]
        let token = try GatewayCommandLine.mintToken(
            options: options([
                "mint-token", "--sub", "3F2504E0-4F89-41D3-9A0C-0305E82C3301", "--email", "a@b.c", "--ttl", "60",
            ]),
            environment: environment, nowSeconds: 1_000)
        let keys = try JWTKeySet(hs256Secret: Array(String(repeating: "k", count: 32).utf8), es256PublicKeyPEM: nil)
        let verifier = JWTVerifier(configuration: JWTVerifierConfiguration(keys: keys, issuer: "i", audience: "a"))
        XCTAssertEqual(
            try verifier.verify(token: token, nowSeconds: 1_010).userId, "3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        XCTAssertThrowsError(try verifier.verify(token: token, nowSeconds: 1_000 + 60 + 31))
        XCTAssertThrowsError(
            try GatewayCommandLine.mintToken(
                options: options(["mint-token", "--sub", "nope", "--email", "a@b.c"]), environment: environment,
                nowSeconds: 0))
    }

    func testMintTokenReportsEveryProblemAtOnce() throws {
        do {
            _ = try GatewayCommandLine.mintToken(
                options: options(["mint-token", "--sub", "nope", "--ttl", "0"]),
                environment: ["JWT_HS256_SECRET": "short"], nowSeconds: 0)
            XCTFail("expected problems")
        } catch let error as SettingsError {
            XCTAssertEqual(
                error.problems.map(\.setting),
                ["JWT_HS256_SECRET", "JWT_ISSUER", "JWT_AUDIENCE", "--sub", "--email", "--ttl"],
                error.description)
            XCTAssertFalse(error.description.contains("short"), "no secret value")
            XCTAssertTrue(
                error.report(program: "Gateway mint-token").hasPrefix(
                    "Gateway mint-token: JWT_HS256_SECRET must be at least 32 bytes: "))
        } catch {
            XCTFail("unexpected \(error)")
        }
    }

    func testEmailNormalisationMatchesPointsServiceRule() {
        // The one normalisation (FieldRules.EmailNormalization): trim, Unicode NFC, lower-case.
        XCTAssertEqual(EmailIdentity.normalized("\u{00A0}\t Alice@Example.COM\r\n\u{2028}"), "alice@example.com")
        XCTAssertEqual(EmailIdentity.normalized(" \u{301}a@b.c"), "\u{301}a@b.c")
    }
}
