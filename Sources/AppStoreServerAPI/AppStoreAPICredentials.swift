import CryptoPrimitives
import Foundation

/// Who signs the JWTs: the In-App Purchase key from App Store Connect (its
/// id and the .p8 key), the team's issuer id, and the app's bundle id (the
/// `bid` claim). Descriptions show the ids but never the key.
public struct AppStoreAPICredentials: Sendable, CustomStringConvertible {
    /// The key id (`kid`), e.g. "2X9R4HXF34".
    public var keyID: String
    /// The issuer id (`iss`), a UUID from App Store Connect's Keys page.
    public var issuerID: String
    /// The app's bundle id (`bid`).
    public var bundleID: String
    /// The private key of the .p8.
    public var signingKey: ES256SigningKey

    public init(keyID: String, issuerID: String, bundleID: String, signingKey: ES256SigningKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.signingKey = signingKey
    }

    /// Reads the .p8 at `keyPath`. Errors name `keyPathSetting` (the
    /// variable it came from) and say what is wrong, never what the file holds.
    public static func load(
        keyPath: String, keyID: String, issuerID: String, bundleID: String,
        keyPathSetting: String = "APPLE_API_KEY_PATH"
    ) throws(AppStoreServerAPIConfigurationError) -> AppStoreAPICredentials {
        guard !keyPath.isEmpty else { throw .init(setting: keyPathSetting, reason: "is empty") }
        let attributes = try? FileManager.default.attributesOfItem(atPath: keyPath)
        guard let size = (attributes?[.size] as? NSNumber)?.intValue,
            let data = FileManager.default.contents(atPath: keyPath)
        else {
            throw .init(setting: keyPathSetting, reason: "cannot read the key file \(keyPath)")
        }
        guard size <= CryptoLimits.privateKeyPEMBytesMax else {
            throw .init(setting: keyPathSetting, reason: "\(keyPath) is \(size) bytes, too large for a .p8 key")
        }
        let key: ES256SigningKey
        do {
            key = try ES256SigningKey(pkcs8PEM: Array(data))
        } catch {
            throw .init(setting: keyPathSetting, reason: "\(keyPath) is \(error)")
        }
        let credentials = AppStoreAPICredentials(keyID: keyID, issuerID: issuerID, bundleID: bundleID, signingKey: key)
        try credentials.validate()
        return credentials
    }

    /// The ids must be non-empty printable ASCII without spaces (they go
    /// into the JWT as they are).
    func validate() throws(AppStoreServerAPIConfigurationError) {
        for (name, value) in [
            ("APPLE_API_KEY_ID", keyID), ("APPLE_API_ISSUER_ID", issuerID), ("APPLE_BUNDLE_ID", bundleID),
        ] {
            guard !value.isEmpty, value.utf8.count <= 255, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw .init(setting: name, reason: "must be 1-255 printable ASCII characters without spaces")
            }
        }
    }

    public var description: String {
        "AppStoreAPICredentials(keyID: \(keyID), issuerID: \(issuerID), bundleID: \(bundleID), key: redacted)"
    }
}
