import Foundation

/// What a `SignedDataVerifier` accepts: the app, its environments, its trust
/// anchors and whether OCSP (online) checks run.
public struct VerifierConfiguration: Sendable {
    /// The app's bundle id; payloads for other bundles are refused.
    public var bundleId: String
    /// The app's App Store id; required when Production is allowed.
    public var appAppleId: Int64?
    /// Environments accepted in payloads.
    public var allowedEnvironments: Set<AppStoreEnvironment>
    /// Must be true to allow `Xcode`/`LocalTesting`; such data is still fully
    /// verified against `trustedRoots` (a local test root), unlike Apple's library.
    public var localTestingMode: Bool
    /// OCSP for leaf and intermediate, effective date = now. Off: effective date
    /// = the payload's `signedDate`.
    public var onlineChecks: Bool
    /// DER certificates trusted as roots (never the root the JWS carries).
    public var trustedRoots: [Data]

    public init(
        bundleId: String,
        appAppleId: Int64?,
        allowedEnvironments: Set<AppStoreEnvironment>,
        localTestingMode: Bool = false,
        onlineChecks: Bool = false,
        trustedRoots: [Data]
    ) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.allowedEnvironments = allowedEnvironments
        self.localTestingMode = localTestingMode
        self.onlineChecks = onlineChecks
        self.trustedRoots = trustedRoots
    }

    /// Loads root certificates from files, each DER or PEM (one or more
    /// `CERTIFICATE` blocks), and returns them as DER.
    public static func loadRoots(paths: [String]) throws(ConfigurationError) -> [Data] {
        var roots: [Data] = []
        for path in paths {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw .unreadableRootFile(path: path)
            }
            let parsed = try parseRootCertificates(contents, path: path)
            roots.append(contentsOf: parsed)
        }
        return roots
    }

    static func parseRootCertificates(_ contents: Data, path: String) throws(ConfigurationError) -> [Data] {
        let pemBegin = "-----BEGIN CERTIFICATE-----"
        let pemEnd = "-----END CERTIFICATE-----"
        guard let text = String(data: contents, encoding: .utf8), text.contains(pemBegin) else {
            guard X509Certificate(der: contents) != nil else { throw .invalidRootCertificate(path: path) }
            return [contents]
        }
        var result: [Data] = []
        var remaining = Substring(text)
        while let begin = remaining.range(of: pemBegin) {
            guard let end = remaining.range(of: pemEnd, range: begin.upperBound..<remaining.endIndex) else {
                throw .invalidRootCertificate(path: path)
            }
            let body = remaining[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
            guard let der = Data(base64Encoded: String(body)), X509Certificate(der: der) != nil else {
                throw .invalidRootCertificate(path: path)
            }
            result.append(der)
            remaining = remaining[end.upperBound...]
        }
        return result
    }

    /// Refuses configurations Apple's library refuses, plus our local-testing rule.
    func validate() throws(ConfigurationError) {
        if trustedRoots.isEmpty { throw .noTrustedRoots }
        if allowedEnvironments.isEmpty { throw .noAllowedEnvironments }
        if allowedEnvironments.contains(.production) && appAppleId == nil { throw .missingAppAppleId }
        if allowedEnvironments.contains(where: \.isLocal) && !localTestingMode {
            throw .localEnvironmentWithoutLocalTestingMode
        }
    }
}

/// Why a `VerifierConfiguration` cannot be used.
public enum ConfigurationError: Error, Equatable, Sendable {
    case unreadableRootFile(path: String)
    case invalidRootCertificate(path: String)
    case noTrustedRoots
    case noAllowedEnvironments
    /// Production is allowed but no appAppleId is configured (Apple requires one).
    case missingAppAppleId
    /// Xcode/LocalTesting allowed without `localTestingMode`.
    case localEnvironmentWithoutLocalTestingMode
    /// A trusted root could not be parsed or added to the store.
    case invalidTrustedRoot(index: Int)
}

extension ConfigurationError: CustomStringConvertible {
    /// A sentence naming the setting at fault, for an operator reading a
    /// service that refused to start.
    public var description: String {
        switch self {
        case .unreadableRootFile(let path): "APPLE_ROOT_CERTS: cannot read \(path)"
        case .invalidRootCertificate(let path): "APPLE_ROOT_CERTS: \(path) is not a DER or PEM certificate"
        case .noTrustedRoots: "APPLE_ROOT_CERTS names no certificate to trust"
        case .noAllowedEnvironments: "APPLE_ENVIRONMENTS names no environment"
        case .missingAppAppleId:
            "APPLE_APP_APPLE_ID is required when APPLE_ENVIRONMENTS includes Production (Apple signs the app's numeric id into production data)"
        case .localEnvironmentWithoutLocalTestingMode:
            "APPLE_ENVIRONMENTS includes Xcode or LocalTesting, which need APPLE_LOCAL_TESTING=1 (never in production)"
        case .invalidTrustedRoot(let index):
            "APPLE_ROOT_CERTS: certificate #\(index + 1) cannot be used as a trust anchor"
        }
    }
}
