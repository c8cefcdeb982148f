import AppStoreServerAPI
import CryptoPrimitives
import Foundation
import XCTest

/// Throwaway App Store Connect-style keys for tests.
enum TestKeys {
    /// A fresh P-256 key as PKCS#8 PEM (what a .p8 holds), or another curve.
    static func pkcs8PEM(curve: String = "P-256") -> [UInt8] {
        let curve = ECCurve(rawValue: curve)!
        return Array(try! ECPrivateKey(generating: curve).pkcs8PEM().utf8)
    }

    /// A temporary folder for one test's files.
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("asapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes a .p8 and returns its path and bytes.
    static func writeP8(in directory: URL, name: String = "AuthKey_TESTKEY123.p8", curve: String = "P-256") throws -> (
        path: String, pem: [UInt8]
    ) {
        let pem = pkcs8PEM(curve: curve)
        let path = directory.appendingPathComponent(name).path
        try Data(pem).write(to: URL(fileURLWithPath: path))
        return (path, pem)
    }

    static let keyID = "TESTKEY123"
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    static let bundleID = "com.example.credits"

    static func credentials() throws -> AppStoreAPICredentials {
        AppStoreAPICredentials(
            keyID: keyID, issuerID: issuerID, bundleID: bundleID,
            signingKey: try ES256SigningKey(pkcs8PEM: pkcs8PEM()))
    }
}
