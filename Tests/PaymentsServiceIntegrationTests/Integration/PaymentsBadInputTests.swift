import AppStoreVerification
import Contracts
import Foundation
import XCTest

/// Bad input through the real service: every verifier failure mode, size
/// and encoding limits, and strict-JSON refusals each give a typed error
/// (with the verifier's code in the `jws-failure` trailer) and write nothing
/// in either database.
final class PaymentsBadInputTests: XCTestCase {
    /// Special chains whose roots the service trusts, so each fails for its own reason.
    static let wrongKey: LocalTestingCertificateAuthority = {
        var options = LocalTestingCertificateAuthority.Options()
        options.signWithWrongKey = true
        return try! LocalTestingCertificateAuthority(options: options)
    }()
    static let expiredLeaf: LocalTestingCertificateAuthority = {
        let now = Int64(Date().timeIntervalSince1970)
        var options = LocalTestingCertificateAuthority.Options(nowSeconds: now)
        options.leafValidFromSeconds = now - 10 * 86_400
        options.leafValidUntilSeconds = now - 86_400
        return try! LocalTestingCertificateAuthority(options: options)
    }()
    static let leafWithoutOID: LocalTestingCertificateAuthority = {
        var options = LocalTestingCertificateAuthority.Options()
        options.leafOID = .omitted
        return try! LocalTestingCertificateAuthority(options: options)
    }()
    static let intermediateWithoutOID: LocalTestingCertificateAuthority = {
        var options = LocalTestingCertificateAuthority.Options()
        options.intermediateOID = .omitted
        return try! LocalTestingCertificateAuthority(options: options)
    }()

    static let shared = SharedCluster {
        try await PaymentsCluster.start(extraRoots: [wrongKey, expiredLeaf, leafWithoutOID, intermediateWithoutOID])
    }

    override class func tearDown() {
        shared.shutdownBlocking()
        super.tearDown()
    }

    /// Submits `signed` for a fresh user and transaction; expects
    /// TRANSACTION_INVALID with `jwsFailure` (any code when nil) and no writes.
    private func expectInvalid(
        _ jwsFailure: String?, file: StaticString = #filePath, line: UInt = #line,
        signed: (PaymentsCluster, String) throws -> String
    ) async throws {
        let cluster = try await Self.shared.cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        let jws = try signed(cluster, transactionId)
        let error = await expectRPCError(.invalidArgument, reason: "TRANSACTION_INVALID", file: file, line: line) {
            _ = try await cluster.verify(
                try cluster.verifyRequest(
                    user: user, productCode: "starter_pack", transactionId: transactionId, signed: jws))
        }
        let failure = error?.metadata[stringValues: "jws-failure"].first
        if let jwsFailure {
            XCTAssertEqual(failure, jwsFailure, file: file, line: line)
        } else {
            XCTAssertFalse((failure ?? "").isEmpty, "jws-failure trailer set", file: file, line: line)
        }
        XCTAssertFalse(error?.message.contains(jws) ?? false, "the JWS is never echoed", file: file, line: line)
        try await cluster.assertNothingWritten(transactionId, user: user, file: file, line: line)
    }

    private static func payload(
        _ transactionId: String, environment: String = "Sandbox", bundleId: String = PaymentsCluster.bundleId
    ) -> String {
        PaymentsCluster.transactionPayload(
            transactionId: transactionId, productCode: "starter_pack", environment: environment, bundleId: bundleId)
    }

    func testUntrustedRootIsABadChain() async throws {
        let stranger = try LocalTestingCertificateAuthority()
        try await expectInvalid("bad_chain") { _, id in try stranger.sign(payloadJSON: Self.payload(id)) }
    }

    func testSignatureByAnotherKeyIsABadSignature() async throws {
        try await expectInvalid("bad_signature") { _, id in try Self.wrongKey.sign(payloadJSON: Self.payload(id)) }
    }

    func testWrongBundleAndWrongEnvironment() async throws {
        try await expectInvalid("wrong_bundle") { cluster, id in
            try cluster.authority.sign(payloadJSON: Self.payload(id, bundleId: "com.example.other"))
        }
        try await expectInvalid("wrong_environment") { cluster, id in
            try cluster.authority.sign(payloadJSON: Self.payload(id, environment: "Production"))
        }
    }

    func testAlgorithmNoneAndAChainOfTwo() async throws {
        try await expectInvalid("unsupported_algorithm") { cluster, id in
            let chain = cluster.authority.certificateChainBase64.map { "\"\($0)\"" }.joined(separator: ",")
            return try cluster.authority.sign(
                headerJSON: "{\"alg\":\"none\",\"x5c\":[\(chain)]}", payloadJSON: Self.payload(id))
        }
        try await expectInvalid("wrong_chain_length") { cluster, id in
            let chain = cluster.authority.certificateChainBase64.prefix(2).map { "\"\($0)\"" }.joined(separator: ",")
            return try cluster.authority.sign(
                headerJSON: "{\"alg\":\"ES256\",\"x5c\":[\(chain)]}", payloadJSON: Self.payload(id))
        }
    }

    func testExpiredLeafAndMissingAppleOIDs() async throws {
        try await expectInvalid("expired") { _, id in try Self.expiredLeaf.sign(payloadJSON: Self.payload(id)) }
        try await expectInvalid("wrong_oid_leaf") { _, id in try Self.leafWithoutOID.sign(payloadJSON: Self.payload(id))
        }
        try await expectInvalid("wrong_oid_intermediate") { _, id in
            try Self.intermediateWithoutOID.sign(payloadJSON: Self.payload(id))
        }
    }

    func testTruncatedJWS() async throws {
        try await expectInvalid("bad_signature") { cluster, id in
            String(try cluster.authority.sign(payloadJSON: Self.payload(id)).dropLast(10))
        }
        try await expectInvalid("malformed") { cluster, id in
            let parts = try cluster.authority.sign(payloadJSON: Self.payload(id)).split(separator: ".")
            return parts.prefix(2).joined(separator: ".")
        }
    }

    func testNumbersInStringsAndDuplicateKeysInTheSignedPayload() async throws {
        try await expectInvalid("invalid_payload") { cluster, id in
            let text = Self.payload(id)
            var object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
            object["purchaseDate"] = "\(object["purchaseDate"]!)"
            return try cluster.authority.sign(payloadJSON: PaymentsCluster.json(object))
        }
        try await expectInvalid("invalid_payload") { cluster, id in
            // The same key twice: a parser keeping the last value would see another transaction.
            let text = Self.payload(id)
            let duplicated = "{\"transactionId\":\"\(PaymentsCluster.randomTransactionId())\"," + text.dropFirst()
            return try cluster.authority.sign(payloadJSON: duplicated)
        }
    }

    func testOversizedJWSIsAValidationFailure() async throws {
        let cluster = try await Self.shared.cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        let signed = try cluster.signedTransaction(transactionId, productCode: "starter_pack")
        let oversized = signed + String(repeating: "A", count: 64 * 1024 + 1 - signed.utf8.count)
        XCTAssertEqual(oversized.utf8.count, 64 * 1024 + 1)
        let error = await expectRPCError(.invalidArgument, reason: "VALIDATION_FAILED") {
            _ = try await cluster.verify(
                try cluster.verifyRequest(
                    user: user, productCode: "starter_pack", transactionId: transactionId, signed: oversized))
        }
        XCTAssertTrue(error?.message.contains("signed_transaction_info") ?? false, "\(String(describing: error))")
        try await cluster.assertNothingWritten(transactionId, user: user)
    }

    func testNonUTF8BytesInARequestStringAreInvalidArgument() async throws {
        let cluster = try await Self.shared.cluster()
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        var bytes: [UInt8] = []
        func field(_ number: UInt8, _ value: [UInt8]) {
            bytes += [number << 3 | 2, UInt8(value.count)] + value
        }
        field(1, Array(user.uuidString.lowercased().utf8))
        field(2, Array(PaymentsCluster.randomEmailHash().utf8))
        field(3, [0x73, 0x74, 0xC3, 0x28, 0xFF])  // "st" then invalid UTF-8
        field(5, Array(transactionId.utf8))
        let error = await expectRPCError(.invalidArgument, reason: "VALIDATION_FAILED") {
            _ = try await cluster.rpc().unaryRaw(
                PaymentsMethods.verifyTransaction.descriptor, request: bytes, timeout: .seconds(30))
        }
        XCTAssertNotNil(error)
        try await cluster.assertNothingWritten(transactionId, user: user)
    }

    func testBadNotificationsAreRefusedAndNotRecorded() async throws {
        let cluster = try await Self.shared.cluster()
        let uuid = UUID()
        let payload = PaymentsCluster.json([
            "notificationType": "TEST", "notificationUUID": uuid.uuidString.lowercased(), "version": "2.0",
            "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
            "data": ["bundleId": PaymentsCluster.bundleId, "environment": "Sandbox", "appAppleId": 1234]
                as [String: Any],
        ])
        let forged = try Self.wrongKey.sign(payloadJSON: payload)
        let error = await expectRPCError(.invalidArgument, reason: "TRANSACTION_INVALID") {
            _ = try await cluster.notify(forged)
        }
        XCTAssertEqual(error?.metadata[stringValues: "jws-failure"].first, "bad_signature")
        await expectRPCError(.invalidArgument, reason: "VALIDATION_FAILED") { _ = try await cluster.notify("") }
        let recorded = try await cluster.paymentsDatabase.withConnection {
            try await $0.query(
                "select count(*) as n from apple_notifications where notification_uuid = $1::uuid", [.uuid(uuid)]
            ).first!.int64("n")
        }
        XCTAssertEqual(recorded, 0)
    }
}
