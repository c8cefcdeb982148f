import AppStoreVerification
import Foundation
import XCTest

/// The local testing CA survives export and import (what `Demo init-ca`
/// writes and `Demo run` reads): same root, and a JWS signed by the
/// restored CA verifies against the original root.
final class CertificateAuthorityPersistenceTests: XCTestCase {
    func testExportedCASignsForTheSameRootAfterImport() async throws {
        let original = try LocalTestingCertificateAuthority()
        let restored = try LocalTestingCertificateAuthority(importingPEM: try original.exportPEM())
        XCTAssertEqual(restored.rootDER, original.rootDER)
        XCTAssertEqual(restored.certificateChainBase64, original.certificateChainBase64)
        let verifier = try SignedDataVerifier(
            configuration: VerifierConfiguration(
                bundleId: "com.meeyao.qianwen", appAppleId: nil, allowedEnvironments: [.sandbox],
                localTestingMode: false,
                onlineChecks: false, trustedRoots: [original.rootDER]))
        let nowMilliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        let payload =
            "{\"transactionId\":\"2000000000000123\",\"originalTransactionId\":\"2000000000000123\","
            + "\"bundleId\":\"com.meeyao.qianwen\",\"productId\":\"com.meeyao.qianwen.starter_pack\",\"purchaseDate\":\(nowMilliseconds - 1000),"
            + "\"quantity\":1,\"type\":\"Consumable\",\"inAppOwnershipType\":\"PURCHASED\",\"environment\":\"Sandbox\",\"signedDate\":\(nowMilliseconds)}"
        let transaction = try await verifier.verifyTransaction(try restored.sign(payloadJSON: payload))
        XCTAssertEqual(transaction.transactionId, "2000000000000123")
    }

    func testImportRefusesIncompleteText() throws {
        let original = try LocalTestingCertificateAuthority()
        let certificatesOnly = try original.exportPEM().components(separatedBy: "-----BEGIN EC PRIVATE KEY-----")[0]
        XCTAssertThrowsError(try LocalTestingCertificateAuthority(importingPEM: certificatesOnly)) { error in
            XCTAssertEqual(error as? LocalTestingCertificateAuthorityError, .importFailed)
        }
        XCTAssertThrowsError(try LocalTestingCertificateAuthority(importingPEM: "not a pem"))
    }
}
