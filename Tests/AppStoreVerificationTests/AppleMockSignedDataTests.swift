import Foundation
import XCTest
@testable import AppStoreVerification

/// Every row of Fixtures/README-mock.md (Apple's own test vectors).
final class AppleMockSignedDataTests: XCTestCase {
    private func verifier(
        environments: Set<AppStoreEnvironment> = [.sandbox], appAppleId: Int64? = 1234, bundleId: String = "com.example"
    ) throws -> SignedDataVerifier {
        let configuration = VerifierConfiguration(
            bundleId: bundleId, appAppleId: appAppleId, allowedEnvironments: environments,
            onlineChecks: false, trustedRoots: [try FixtureSupport.fixtureData("testCA.der")])
        return try SignedDataVerifier(configuration: configuration)
    }

    func testTransactionInfoIsValid() throws {
        let transaction = try verifier().verifyTransaction(try FixtureSupport.fixtureText("transactionInfo"))
        XCTAssertEqual(transaction.bundleId, "com.example")
        XCTAssertEqual(transaction.environment, .sandbox)
        XCTAssertEqual(transaction.signedDate?.millisecondsSince1970, 1_672_956_154_000)
    }

    func testRenewalInfoIsValid() throws {
        let renewal = try verifier().verifyRenewalInfo(try FixtureSupport.fixtureText("renewalInfo"))
        XCTAssertEqual(renewal.environment, .sandbox)
    }

    func testNotificationIsValidInSandbox() throws {
        let notification = try verifier().verifyNotification(try FixtureSupport.fixtureText("testNotification"))
        XCTAssertEqual(notification.notificationType, .test)
        XCTAssertEqual(notification.notificationUUID, "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        XCTAssertEqual(notification.data?.appAppleId, 1234)
    }

    func testNotificationAsProductionIsWrongEnvironment() throws {
        let verifier = try verifier(environments: [.production])
        let jws = try FixtureSupport.fixtureText("testNotification")
        assertFailure(.wrongEnvironment) { () throws(VerificationFailure) in try verifier.verifyNotification(jws) }
        XCTAssertEqual(VerificationFailure.wrongEnvironment.appleStatus, .invalidEnvironment)
    }

    func testNotificationWithOtherAppAppleIdIsWrongAppIdentifier() throws {
        let verifier = try verifier(environments: [.production], appAppleId: 1235)
        let jws = try FixtureSupport.fixtureText("testNotification")
        assertFailure(.wrongAppAppleId) { () throws(VerificationFailure) in try verifier.verifyNotification(jws) }
        XCTAssertEqual(VerificationFailure.wrongAppAppleId.appleStatus, .invalidAppIdentifier)
    }

    func testWrongBundleIdNotificationIsWrongAppIdentifier() throws {
        let verifier = try verifier()
        let jws = try FixtureSupport.fixtureText("wrongBundleId")
        assertFailure(.wrongBundle) { () throws(VerificationFailure) in try verifier.verifyNotification(jws) }
        XCTAssertEqual(VerificationFailure.wrongBundle.appleStatus, .invalidAppIdentifier)
    }

    func testMissingX5CIsRefused() throws {
        let verifier = try verifier()
        let jws = try FixtureSupport.fixtureText("missingX5CHeaderClaim")
        assertFailure(.missingCertificateChain) { () throws(VerificationFailure) in try verifier.verifyNotification(jws)
        }
    }

    func testThreeAndFourDotSeparatedLettersAreMalformed() throws {
        let verifier = try verifier()
        assertFailureCode("malformed") { () throws(VerificationFailure) in try verifier.verifyNotification("a.b.c") }
        assertFailureCode("malformed") { () throws(VerificationFailure) in try verifier.verifyNotification("a.b.c.d") }
        assertFailureCode("malformed") { () throws(VerificationFailure) in try verifier.verifyTransaction("a.b.c") }
    }

    func testTransactionWithOtherBundleIsWrongBundle() throws {
        let verifier = try verifier(bundleId: "com.example.other")
        let jws = try FixtureSupport.fixtureText("transactionInfo")
        assertFailure(.wrongBundle) { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
    }

    func testEmbeddedRootIsNotTrusted() throws {
        // Trusting the Apple production root instead: the mock chain must fail.
        let configuration = VerifierConfiguration(
            bundleId: "com.example", appAppleId: nil, allowedEnvironments: [.sandbox],
            trustedRoots: [try FixtureSupport.appleRootDER()])
        let verifier = try SignedDataVerifier(configuration: configuration)
        let jws = try FixtureSupport.fixtureText("transactionInfo")
        assertFailureCode("bad_chain") { () throws(VerificationFailure) in try verifier.verifyTransaction(jws) }
    }
}
