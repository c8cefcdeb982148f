import CryptoPrimitives
import Foundation
import XCTest
@testable import AppStoreVerification

/// Every row of Fixtures/README-real.md (data really signed by Apple).
final class AppleRealSignedDataTests: XCTestCase {
    private func verifier(bundleId: String, nowSeconds: Int64? = nil) throws -> SignedDataVerifier {
        let configuration = VerifierConfiguration(
            bundleId: bundleId, appAppleId: nil, allowedEnvironments: [.sandbox],
            trustedRoots: [try FixtureSupport.appleRootDER()])
        if let nowSeconds {
            return try SignedDataVerifier(configuration: configuration, ocspFetcher: nil, nowSeconds: { nowSeconds })
        }
        return try SignedDataVerifier(configuration: configuration)
    }

    func testConsumableTransactionDecodes() throws {
        let transaction = try verifier(bundleId: "com.goodheartapp")
            .verifyTransaction(try FixtureSupport.fixtureText("tx_sandbox_consumable.jws"))
        XCTAssertEqual(transaction.transactionId, "2000000847061981")
        XCTAssertEqual(transaction.productId, "gh_super_good_ticket_1")
        XCTAssertEqual(transaction.type, .consumable)
        XCTAssertEqual(transaction.environment, .sandbox)
        XCTAssertEqual(transaction.price, 230_000)
        XCTAssertEqual(transaction.currency, "JPY")
        XCTAssertEqual(transaction.purchaseDate?.millisecondsSince1970, 1_738_645_560_000)
        XCTAssertEqual(transaction.signedDate?.millisecondsSince1970, 1_739_161_772_561)
    }

    func testTestNotificationDecodes() throws {
        let notification = try verifier(bundleId: "com.loki-project.loki-messenger")
            .verifyNotification(try FixtureSupport.fixtureText("notification_test_sandbox.jws"))
        XCTAssertEqual(notification.notificationType, .test)
        XCTAssertEqual(notification.notificationUUID, "592751ef-c1b8-47fc-929e-d62dee66df4c")
        XCTAssertEqual(notification.data?.environment, .sandbox)
        XCTAssertEqual(notification.version, "2.0")
        XCTAssertEqual(notification.signedDate?.millisecondsSince1970, 1_757_035_472_686)
    }

    func testOtherBundleIsWrongBundle() throws {
        let jws = try FixtureSupport.fixtureText("tx_sandbox_consumable.jws")
        let verifier = try verifier(bundleId: "com.example")
        assertFailure(.wrongBundle) { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
        let notification = try FixtureSupport.fixtureText("notification_test_sandbox.jws")
        assertFailure(.wrongBundle) { () throws(VerificationFailure) in try verifier.verifyNotification(notification) }
    }

    /// Flipping any single bit of the signature (r or s, low-S or high-S) fails.
    func testEverySignatureBitFlipIsBadSignature() throws {
        let cases = [
            ("tx_sandbox_consumable.jws", "com.goodheartapp", SignedDataVerifier.PayloadKind.transaction),
            ("notification_test_sandbox.jws", "com.loki-project.loki-messenger", .notification),
        ]
        for (file, bundleId, kind) in cases {
            let jws = try FixtureSupport.fixtureText(file)
            let verifier = try verifier(bundleId: bundleId)
            XCTAssertNoThrow(try verifier.verifyAndDecodeJSON(jws, kind: kind))
            let parts = jws.split(separator: ".").map(String.init)
            let signature = try StrictBase64.decodeURL(parts[2].utf8)
            for bit in stride(from: 0, to: signature.count * 8, by: 1) {
                var flipped = signature
                flipped[bit / 8] ^= UInt8(1 << (bit % 8))
                let tampered = parts[0] + "." + parts[1] + "." + StrictBase64.encodeURL(flipped)
                assertFailure(.badSignature) { () throws(VerificationFailure) in
                    try verifier.verifyAndDecodeJSON(tampered, kind: kind)
                }
            }
        }
    }

    /// The leaf expired in 2025: at signedDate it is valid, checked at a later
    /// date it is not (what a verifier using "now" would see).
    func testLeafIsValidAtSignedDateButNotAfterExpiry() throws {
        let jws = try FixtureSupport.fixtureText("tx_sandbox_consumable.jws")
        XCTAssertNoThrow(try verifier(bundleId: "com.goodheartapp").verifyTransaction(jws))
        let parts = jws.split(separator: ".").map(String.init)
        let payload = String(decoding: try StrictBase64.decodeURL(parts[1].utf8), as: UTF8.self)
        XCTAssertTrue(payload.contains("\"signedDate\":1739161772561"))
        // Same chain, judged at 2026-01-01 by the offline path's fallback: a
        // payload without signedDate uses "now".
        let verifier = try verifier(bundleId: "com.goodheartapp", nowSeconds: 1_767_225_600)
        let chain = try XCTUnwrap(verifier.configuration.trustedRoots.first)
        XCTAssertFalse(chain.isEmpty)
        assertFailure(.expired) { () throws(VerificationFailure) in
            try verifier.verifyTransaction(parts[0] + "." + StrictBase64.encodeURL(Array("{}".utf8)) + "." + parts[2])
        }
    }

    func testProductionRootFingerprint() throws {
        let digest = SHA256.hash(try FixtureSupport.appleRootDER())
        let hex = digest.map { String(format: "%02X", $0) }.joined()
        XCTAssertEqual(hex, "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179")
    }
}
