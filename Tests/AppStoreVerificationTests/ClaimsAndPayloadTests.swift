import Foundation
import XCTest
@testable import AppStoreVerification

/// Notification shapes, environments, app transactions, renewal info and configuration rules.
final class ClaimsAndPayloadTests: XCTestCase {
    private typealias PKI = TestPKI

    private func notificationJSON(type: String, subtype: String? = nil, shape: String) -> String {
        let subtypeMember = subtype.map { ",\"subtype\":\"\($0)\"" } ?? ""
        return
            "{\"notificationType\":\"\(type)\"\(subtypeMember),\"notificationUUID\":\"0b9f4e0c-6d7a-4e3c-9a58-3c8d0e2b7f11\","
            + "\"version\":\"2.0\",\"signedDate\":\(PKI.nowMilliseconds),\(shape)}"
    }

    private func dataShape(
        environment: String = "Sandbox", bundleId: String = PKI.bundleId, appAppleId: Int64 = PKI.appAppleId
    ) -> String {
        "\"data\":{\"appAppleId\":\(appAppleId),\"bundleId\":\"\(bundleId)\",\"bundleVersion\":\"1.0\","
            + "\"environment\":\"\(environment)\",\"signedTransactionInfo\":\"x.y.z\",\"status\":1,"
            + "\"consumptionRequestReason\":\"UNINTENDED_PURCHASE\"}"
    }

    func testDataShapeDecodes() throws {
        let authority = try PKI.authority()
        let jws = try authority.sign(payloadJSON: notificationJSON(type: "REFUND", shape: dataShape()))
        let notification = try PKI.verifier(trusting: authority).verifyNotification(jws)
        XCTAssertEqual(notification.notificationType, .refund)
        XCTAssertNil(notification.subtype)
        XCTAssertEqual(notification.data?.signedTransactionInfo, "x.y.z")
        XCTAssertEqual(notification.data?.status, 1)
        XCTAssertEqual(notification.data?.consumptionRequestReason, "UNINTENDED_PURCHASE")
        XCTAssertEqual(notification.version, "2.0")
    }

    func testSummaryShapeDecodesAndIsChecked() throws {
        let authority = try PKI.authority()
        let summary =
            "\"summary\":{\"environment\":\"Production\",\"appAppleId\":\(PKI.appAppleId),\"bundleId\":\"\(PKI.bundleId)\","
            + "\"productId\":\"sub.monthly\",\"requestIdentifier\":\"r-1\",\"storefrontCountryCodes\":[\"USA\",\"CAN\"],"
            + "\"succeededCount\":5,\"failedCount\":2}"
        let jws = try authority.sign(
            payloadJSON: notificationJSON(type: "RENEWAL_EXTENSION", subtype: "SUMMARY", shape: summary))
        let notification = try PKI.verifier(trusting: authority).verifyNotification(jws)
        XCTAssertEqual(notification.subtype, .summary)
        XCTAssertEqual(notification.summary?.storefrontCountryCodes ?? [], ["USA", "CAN"])
        XCTAssertEqual(notification.summary?.succeededCount, 5)
        let sandboxOnly = try PKI.verifier(trusting: authority, environments: [.sandbox])
        assertFailure(.wrongEnvironment) { () throws(VerificationFailure) in try sandboxOnly.verifyNotification(jws) }
    }

    func testExternalPurchaseTokenShapeTakesEnvironmentFromIdPrefix() throws {
        let authority = try PKI.authority()
        func token(_ id: String) -> String {
            "\"externalPurchaseToken\":{\"externalPurchaseId\":\"\(id)\",\"tokenCreationDate\":1780000000000,"
                + "\"appAppleId\":\(PKI.appAppleId),\"bundleId\":\"\(PKI.bundleId)\"}"
        }
        let sandbox = try authority.sign(
            payloadJSON: notificationJSON(
                type: "EXTERNAL_PURCHASE_TOKEN", subtype: "UNREPORTED",
                shape: token("SANDBOX_b2158121-7af9-49d4-9561-1f588205523e")))
        let production = try authority.sign(
            payloadJSON: notificationJSON(
                type: "EXTERNAL_PURCHASE_TOKEN", subtype: "UNREPORTED",
                shape: token("b2158121-7af9-49d4-9561-1f588205523e")))
        let sandboxOnly = try PKI.verifier(trusting: authority, environments: [.sandbox])
        let productionOnly = try PKI.verifier(trusting: authority, environments: [.production])
        let decoded = try sandboxOnly.verifyNotification(sandbox)
        XCTAssertEqual(decoded.notificationType, .externalPurchaseToken)
        XCTAssertEqual(decoded.subtype, .unreported)
        XCTAssertEqual(decoded.externalPurchaseToken?.tokenCreationDate?.millisecondsSince1970, 1_780_000_000_000)
        XCTAssertNoThrow(try productionOnly.verifyNotification(production))
        assertFailure(.wrongEnvironment) { () throws(VerificationFailure) in
            try sandboxOnly.verifyNotification(production)
        }
        assertFailure(.wrongEnvironment) { () throws(VerificationFailure) in
            try productionOnly.verifyNotification(sandbox)
        }
    }

    func testAppDataShapeDecodes() throws {
        let authority = try PKI.authority()
        let appData =
            "\"appData\":{\"appAppleId\":\(PKI.appAppleId),\"bundleId\":\"\(PKI.bundleId)\",\"environment\":\"Sandbox\","
            + "\"signedAppTransactionInfo\":\"a.b.c\"}"
        let jws = try authority.sign(payloadJSON: notificationJSON(type: "RESCIND_CONSENT", shape: appData))
        let notification = try PKI.verifier(trusting: authority).verifyNotification(jws)
        XCTAssertEqual(notification.notificationType, .rescindConsent)
        XCTAssertEqual(notification.appData?.signedAppTransactionInfo, "a.b.c")
    }

    func testNotificationWithoutAnyShapeIsWrongBundle() throws {
        let authority = try PKI.authority()
        let jws = try authority.sign(
            payloadJSON: "{\"notificationType\":\"TEST\",\"signedDate\":\(PKI.nowMilliseconds)}")
        let verifier = try PKI.verifier(trusting: authority)
        assertFailure(.wrongBundle) { () throws(VerificationFailure) in try verifier.verifyNotification(jws) }
    }

    func testUnknownNotificationTypeAndSubtypeAreKept() throws {
        let authority = try PKI.authority()
        let jws = try authority.sign(
            payloadJSON: notificationJSON(type: "BRAND_NEW_TYPE", subtype: "NEW_SUBTYPE", shape: dataShape()))
        let notification = try PKI.verifier(trusting: authority).verifyNotification(jws)
        XCTAssertEqual(notification.notificationType?.rawValue, "BRAND_NEW_TYPE")
        XCTAssertEqual(notification.notificationType?.isKnown, false)
        XCTAssertEqual(notification.subtype?.rawValue, "NEW_SUBTYPE")
        XCTAssertTrue(NotificationType.refund.isKnown)
        XCTAssertEqual(Set(NotificationType.knownValues.map(\.rawValue)).count, NotificationType.knownValues.count)
        XCTAssertEqual(
            Set(NotificationSubtype.knownValues.map(\.rawValue)).count, NotificationSubtype.knownValues.count)
    }

    func testProductionNotificationRequiresMatchingAppAppleId() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority)
        let good = try authority.sign(
            payloadJSON: notificationJSON(type: "TEST", shape: dataShape(environment: "Production")))
        XCTAssertNoThrow(try verifier.verifyNotification(good))
        let wrongId = try authority.sign(
            payloadJSON: notificationJSON(
                type: "TEST", shape: dataShape(environment: "Production", appAppleId: 1)))
        assertFailure(.wrongAppAppleId) { () throws(VerificationFailure) in try verifier.verifyNotification(wrongId) }
        // Sandbox does not check appAppleId (as Apple's library).
        let sandboxOtherId = try authority.sign(
            payloadJSON: notificationJSON(type: "TEST", shape: dataShape(appAppleId: 1)))
        XCTAssertNoThrow(try verifier.verifyNotification(sandboxOtherId))
        let wrongBundle = try authority.sign(
            payloadJSON: notificationJSON(type: "TEST", shape: dataShape(bundleId: "com.other")))
        assertFailure(.wrongBundle) { () throws(VerificationFailure) in try verifier.verifyNotification(wrongBundle) }
    }

    func testTransactionEnvironments() throws {
        let authority = try PKI.authority()
        let sandboxOnly = try PKI.verifier(trusting: authority, environments: [.sandbox])
        for environment in ["Production", "Xcode", "LocalTesting", "Staging", "sandbox"] {
            let jws = try authority.sign(payloadJSON: PKI.transactionJSON(environment: environment))
            assertFailure(.wrongEnvironment) { () throws(VerificationFailure) in try sandboxOnly.verifyTransaction(jws)
            }
        }
        let noEnvironment = try authority.sign(
            payloadJSON: "{\"bundleId\":\"\(PKI.bundleId)\",\"signedDate\":\(PKI.nowMilliseconds)}")
        assertFailure(.wrongEnvironment) { () throws(VerificationFailure) in
            try sandboxOnly.verifyTransaction(noEnvironment)
        }
    }

    func testLocalTestingEnvironmentsNeedLocalTestingModeAndAreStillVerified() throws {
        let authority = try PKI.authority()
        let configuration = VerifierConfiguration(
            bundleId: PKI.bundleId, appAppleId: nil, allowedEnvironments: [.xcode, .localTesting],
            trustedRoots: [authority.rootDER])
        XCTAssertThrowsError(try SignedDataVerifier(configuration: configuration)) { error in
            XCTAssertEqual(error as? ConfigurationError, .localEnvironmentWithoutLocalTestingMode)
        }
        let verifier = try PKI.verifier(
            trusting: authority, environments: [.xcode, .localTesting], localTestingMode: true)
        let xcode = try authority.sign(payloadJSON: PKI.transactionJSON(environment: "Xcode"))
        XCTAssertEqual(try verifier.verifyTransaction(xcode).environment, .xcode)
        let sandbox = try authority.sign(payloadJSON: PKI.transactionJSON(environment: "Sandbox"))
        assertFailure(.wrongEnvironment) { () throws(VerificationFailure) in try verifier.verifyTransaction(sandbox) }
        // Unlike Apple's library, local environments are still signature-checked.
        let forged = try PKI.authority().sign(payloadJSON: PKI.transactionJSON(environment: "LocalTesting"))
        assertFailureCode("bad_chain") { () throws(VerificationFailure) in try verifier.verifyTransaction(forged) }
    }

    func testConfigurationRules() throws {
        let authority = try PKI.authority()
        func make(_ environments: Set<AppStoreEnvironment>, appAppleId: Int64?, roots: [Data]) -> ConfigurationError? {
            let configuration = VerifierConfiguration(
                bundleId: PKI.bundleId, appAppleId: appAppleId, allowedEnvironments: environments, trustedRoots: roots)
            do {
                _ = try SignedDataVerifier(configuration: configuration)
                return nil
            } catch {
                return error
            }
        }
        XCTAssertEqual(make([.production], appAppleId: nil, roots: [authority.rootDER]), .missingAppAppleId)
        XCTAssertEqual(make([.sandbox], appAppleId: nil, roots: []), .noTrustedRoots)
        XCTAssertEqual(make([], appAppleId: nil, roots: [authority.rootDER]), .noAllowedEnvironments)
        XCTAssertEqual(make([.sandbox], appAppleId: nil, roots: [Data([1, 2, 3])]), .invalidTrustedRoot(index: 0))
        // The store, and the good root it took, are freed (LeakSanitizer sees them otherwise).
        XCTAssertEqual(
            make([.sandbox], appAppleId: nil, roots: [authority.rootDER, Data([1, 2, 3])]),
            .invalidTrustedRoot(index: 1))
        XCTAssertNil(make([.sandbox], appAppleId: nil, roots: [authority.rootDER]))
    }

    func testLoadRootsReadsDERAndPEM() throws {
        let authority = try PKI.authority()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jws-roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pem = directory.appendingPathComponent("local.pem")
        try Data(authority.rootPEM.utf8).write(to: pem)
        let der = directory.appendingPathComponent("apple.cer")
        try FileManager.default.copyItem(
            at: FixtureSupport.repositoryRoot.appendingPathComponent("config/AppleRootCA-G3.cer"), to: der)
        let roots = try VerifierConfiguration.loadRoots(paths: [pem.path, der.path])
        XCTAssertEqual(roots, [authority.rootDER, try FixtureSupport.appleRootDER()])
        let garbage = directory.appendingPathComponent("bad.pem")
        try Data("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8).write(to: garbage)
        XCTAssertThrowsError(try VerifierConfiguration.loadRoots(paths: [garbage.path]))
        XCTAssertThrowsError(
            try VerifierConfiguration.loadRoots(paths: [directory.appendingPathComponent("missing").path]))
    }

    func testAppTransactionUsesReceiptTypeAndReceiptCreationDate() throws {
        let authority = try PKI.authority {
            $0.leafValidFromSeconds = PKI.nowSeconds - 1_000
            $0.leafValidUntilSeconds = PKI.nowSeconds + 1_000
        }
        let verifier = try PKI.verifier(trusting: authority)
        func appTransaction(receiptType: String, appAppleId: Int64, createdSeconds: Int64) -> String {
            "{\"receiptType\":\"\(receiptType)\",\"appAppleId\":\(appAppleId),\"bundleId\":\"\(PKI.bundleId)\","
                + "\"applicationVersion\":\"3\",\"receiptCreationDate\":\(createdSeconds * 1000),"
                + "\"originalPurchaseDate\":1700000000000,\"originalApplicationVersion\":\"1\","
                + "\"deviceVerificationNonce\":\"48c8b92d-ce0d-4229-bedf-e61b4f9cfc92\",\"originalPlatform\":\"iOS\"}"
        }
        let good = try authority.sign(
            payloadJSON: appTransaction(
                receiptType: "Production", appAppleId: PKI.appAppleId, createdSeconds: PKI.nowSeconds))
        let decoded = try verifier.verifyAppTransaction(good)
        XCTAssertEqual(decoded.receiptType, .production)
        XCTAssertEqual(decoded.originalPlatform, "iOS")
        let wrongId = try authority.sign(
            payloadJSON: appTransaction(receiptType: "Production", appAppleId: 5, createdSeconds: PKI.nowSeconds))
        assertFailure(.wrongAppAppleId) { () throws(VerificationFailure) in try verifier.verifyAppTransaction(wrongId) }
        let outside = try authority.sign(
            payloadJSON: appTransaction(receiptType: "Sandbox", appAppleId: 5, createdSeconds: PKI.nowSeconds + 5_000))
        assertFailure(.expired) { () throws(VerificationFailure) in try verifier.verifyAppTransaction(outside) }
    }

    func testRenewalInfoChecksEnvironmentOnly() throws {
        let authority = try PKI.authority()
        let verifier = try PKI.verifier(trusting: authority, environments: [.sandbox])
        let renewal =
            "{\"originalTransactionId\":\"1\",\"autoRenewProductId\":\"sub\",\"productId\":\"sub\",\"autoRenewStatus\":1,"
            + "\"renewalPrice\":4990,\"currency\":\"USD\",\"eligibleWinBackOfferIds\":[\"wb1\"],\"environment\":\"Sandbox\","
            + "\"signedDate\":\(PKI.nowMilliseconds),\"renewalDate\":1781000000000}"
        let decoded = try verifier.verifyRenewalInfo(authority.sign(payloadJSON: renewal))
        XCTAssertEqual(decoded.autoRenewStatus, 1)
        XCTAssertEqual(decoded.renewalPrice, 4990)
        XCTAssertEqual(decoded.eligibleWinBackOfferIds ?? [], ["wb1"])
        let production = try authority.sign(
            payloadJSON: renewal.replacingOccurrences(of: "Sandbox", with: "Production"))
        assertFailure(.wrongEnvironment) { () throws(VerificationFailure) in try verifier.verifyRenewalInfo(production)
        }
    }

    func testFailureCodesAreStableAndOnlyNetworkIsRetryable() {
        let failures: [VerificationFailure] = [
            .malformed(reason: ""), .unsupportedAlgorithm("x"), .missingCertificateChain, .wrongChainLength(count: 2),
            .badCertificate(reason: ""), .badChain(reason: ""), .wrongOID(.leaf), .wrongOID(.intermediate), .expired,
            .badSignature, .wrongBundle, .wrongEnvironment, .wrongAppAppleId, .payloadTooLarge(lengthBytes: 1),
            .invalidPayload(reason: ""), .retryable(reason: ""), .onlineCheckRequired,
        ]
        XCTAssertEqual(Set(failures.map(\.code)).count, failures.count)
        XCTAssertEqual(failures.filter(\.isRetryable), [.retryable(reason: "")])
        XCTAssertEqual(VerificationFailure.wrongOID(.intermediate).code, "wrong_oid_intermediate")
    }
}
