import Foundation
import XCTest
@testable import AppStoreVerification

/// Shared helpers for tests on a generated local testing PKI.
enum TestPKI {
    static let bundleId = "com.iap.test"
    static let appAppleId: Int64 = 987_654
    /// A fixed "now" so tests never depend on the wall clock.
    static let nowSeconds: Int64 = 1_780_000_000
    static var nowMilliseconds: Int64 { nowSeconds * 1000 }

    static func authority(_ configure: (inout LocalTestingCertificateAuthority.Options) -> Void = { _ in })
        throws -> LocalTestingCertificateAuthority
    {
        var options = LocalTestingCertificateAuthority.Options(nowSeconds: nowSeconds)
        configure(&options)
        return try LocalTestingCertificateAuthority(options: options)
    }

    static func verifier(
        trusting authority: LocalTestingCertificateAuthority,
        environments: Set<AppStoreEnvironment> = [.sandbox, .production],
        localTestingMode: Bool = false,
        onlineChecks: Bool = false,
        fetcher: (any OCSPFetcher)? = nil,
        clock: @escaping @Sendable () -> Int64 = { nowSeconds }
    ) throws -> SignedDataVerifier {
        let configuration = VerifierConfiguration(
            bundleId: bundleId, appAppleId: appAppleId, allowedEnvironments: environments,
            localTestingMode: localTestingMode, onlineChecks: onlineChecks, trustedRoots: [authority.rootDER])
        return try SignedDataVerifier(configuration: configuration, ocspFetcher: fetcher, nowSeconds: clock)
    }

    static func transactionJSON(
        environment: String = "Sandbox", bundleId: String = bundleId, signedDate: String? = nil, extra: String = ""
    ) -> String {
        let signed = signedDate ?? String(nowMilliseconds)
        return "{\"transactionId\":\"2000000000000001\",\"originalTransactionId\":\"2000000000000001\","
            + "\"bundleId\":\"\(bundleId)\",\"productId\":\"points_100\",\"purchaseDate\":\(nowMilliseconds - 5000),"
            + "\"quantity\":1,\"type\":\"Consumable\",\"inAppOwnershipType\":\"PURCHASED\","
            + "\"environment\":\"\(environment)\",\"signedDate\":\(signed)\(extra)}"
    }

    /// Replaces one of the three JWS parts.
    static func replacingPart(_ jws: String, index: Int, with part: String) -> String {
        var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[index] = part
        return parts.joined(separator: ".")
    }
}
