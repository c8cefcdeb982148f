@testable import AppStoreServerAPI
import Foundation
import XCTest

/// Operator settings: names, defaults, and clear refusals that never show the key.
final class ConfigurationTests: XCTestCase {
    private func environment(keyPath: String) -> [String: String] {
        [
            "APPLE_API_KEY_PATH": keyPath, "APPLE_API_KEY_ID": TestKeys.keyID,
            "APPLE_API_ISSUER_ID": TestKeys.issuerID, "APPLE_BUNDLE_ID": TestKeys.bundleID,
        ]
    }

    func testFromEnvironmentDefaultsToApplesRecommendedHosts() throws {
        let directory = try TestKeys.directory()
        let (path, _) = try TestKeys.writeP8(in: directory)
        let configuration = try AppStoreServerAPIConfiguration.fromEnvironment(environment(keyPath: path))
        XCTAssertEqual(configuration.productionURL, "https://api.storekit.apple.com")
        XCTAssertEqual(configuration.sandboxURL, "https://api.storekit-sandbox.apple.com")
        XCTAssertNil(configuration.trustRootsPath)
        XCTAssertEqual(configuration.credentials.keyID, TestKeys.keyID)
        XCTAssertEqual(try configuration.baseURL(.production).authority, "api.storekit.apple.com")
        var overridden = environment(keyPath: path)
        overridden["APPLE_API_PRODUCTION_URL"] = "https://localhost:8443/"
        overridden["APPLE_API_SANDBOX_URL"] = "https://[::1]:9443"
        overridden["APPLE_API_CA_PATH"] = "/tmp/ca.pem"
        let custom = try AppStoreServerAPIConfiguration.fromEnvironment(overridden)
        XCTAssertEqual(try custom.baseURL(.production).authority, "localhost:8443")
        XCTAssertEqual(try custom.baseURL(.sandbox).host, "::1")
        XCTAssertEqual(try custom.baseURL(.sandbox).port, 9443)
        XCTAssertEqual(custom.trustRootsPath, "/tmp/ca.pem")
    }

    func testMissingSettingsAreNamed() throws {
        let directory = try TestKeys.directory()
        let (path, _) = try TestKeys.writeP8(in: directory)
        for name in ["APPLE_API_KEY_PATH", "APPLE_API_KEY_ID", "APPLE_API_ISSUER_ID", "APPLE_BUNDLE_ID"] {
            var settings = environment(keyPath: path)
            settings[name] = nil
            XCTAssertThrowsError(try AppStoreServerAPIConfiguration.fromEnvironment(settings)) { error in
                XCTAssertEqual((error as? AppStoreServerAPIConfigurationError)?.setting, name)
                XCTAssertTrue("\(error)".hasPrefix("\(name): "), "\(error)")
            }
        }
    }

    func testBadKeysAreRefusedNamingTheVariableNotTheKey() throws {
        let directory = try TestKeys.directory()
        let sec1 = directory.appendingPathComponent("sec1.p8").path
        let p384 = try TestKeys.writeP8(in: directory, name: "p384.p8", curve: "P-384")
        try Data("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY-----\n".utf8).write(
            to: URL(fileURLWithPath: sec1))
        let garbage = directory.appendingPathComponent("garbage.p8").path
        try Data("not a key at all".utf8).write(to: URL(fileURLWithPath: garbage))
        let huge = directory.appendingPathComponent("huge.p8").path
        try Data(repeating: 0x41, count: 100_000).write(to: URL(fileURLWithPath: huge))
        let cases: [(String, String)] = [
            (directory.appendingPathComponent("missing.p8").path, "cannot read"),
            (sec1, "not a PKCS#8 private key"),
            (p384.path, "not an EC key on P-256"),
            (garbage, "not a PEM private key"),
            (huge, "too large"),
        ]
        for (path, expected) in cases {
            XCTAssertThrowsError(try AppStoreServerAPIConfiguration.fromEnvironment(environment(keyPath: path))) {
                error in
                let text = "\(error)"
                XCTAssertTrue(text.hasPrefix("APPLE_API_KEY_PATH: "), text)
                XCTAssertTrue(text.contains(expected), text)
                XCTAssertFalse(text.contains("MHcCAQEEIB"), text)
                XCTAssertFalse(text.contains("AAAAAAAA"), text)
            }
        }
        // The P-384 key's body never shows up in the refusal either.
        let body = String(decoding: p384.pem, as: UTF8.self).split(separator: "\n")[1]
        XCTAssertThrowsError(try AppStoreServerAPIConfiguration.fromEnvironment(environment(keyPath: p384.path))) {
            error in
            XCTAssertFalse("\(error)".contains(body))
        }
    }

    func testBadIdsAndURLsAreRefused() throws {
        let directory = try TestKeys.directory()
        let (path, _) = try TestKeys.writeP8(in: directory)
        var settings = environment(keyPath: path)
        settings["APPLE_API_KEY_ID"] = "has space"
        XCTAssertThrowsError(try AppStoreServerAPIConfiguration.fromEnvironment(settings)) { error in
            XCTAssertEqual((error as? AppStoreServerAPIConfigurationError)?.setting, "APPLE_API_KEY_ID")
        }
        for url in [
            "http://api.storekit.apple.com", "https://", "https://host/path", "https://host:0", "https://host:x",
            "https://user@host",
        ] {
            var settings = environment(keyPath: path)
            settings["APPLE_API_SANDBOX_URL"] = url
            XCTAssertThrowsError(try AppStoreServerAPIConfiguration.fromEnvironment(settings), url) { error in
                XCTAssertEqual((error as? AppStoreServerAPIConfigurationError)?.setting, "APPLE_API_SANDBOX_URL", url)
            }
        }
    }

    func testLimitsAreValidated() throws {
        var configuration = AppStoreServerAPIConfiguration(credentials: try TestKeys.credentials())
        configuration.limits.tokenLifetimeSeconds = 3601
        XCTAssertThrowsError(try configuration.validate())
        configuration.limits = .default
        configuration.limits.pagesMax = 0
        XCTAssertThrowsError(try configuration.validate())
        configuration.limits = .default
        XCTAssertNoThrow(try configuration.validate())
    }

    func testCredentialsDescriptionHidesTheKey() throws {
        let credentials = try TestKeys.credentials()
        XCTAssertTrue("\(credentials)".contains("key: redacted"))
        XCTAssertFalse("\(credentials)".contains("PRIVATE"))
    }
}
