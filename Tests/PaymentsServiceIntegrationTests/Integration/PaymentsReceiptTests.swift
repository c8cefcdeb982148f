import AppStoreVerification
import Contracts
import Foundation
import TestSupport
import XCTest

/// `VerifyReceipt` through the real services: StoreKit 1 receipts signed
/// by OpenSSL under the cluster's Apple-shaped test CA, read locally, their
/// signature checked, each transaction id looked up at the App Store
/// stand-in and credited through the app's verify path on its own.
final class PaymentsReceiptTests: XCTestCase {
    nonisolated(unsafe) static var fixture: AppStoreSyncFixture?
    nonisolated(unsafe) static var signer: SignedTestReceipt?
    static let withoutKey = SharedCluster()

    override class func tearDown() {
        let done = DispatchSemaphore(value: 0)
        Task {
            await fixture?.shutdown()
            done.signal()
        }
        _ = done.wait(timeout: .now() + 60)
        fixture = nil
        signer?.removeFiles()
        signer = nil
        withoutKey.shutdownBlocking()
        super.tearDown()
    }

    private func fixture() async throws -> (AppStoreSyncFixture, SignedTestReceipt) {
        if let fixture = Self.fixture, let signer = Self.signer { return (fixture, signer) }
        let started = try await AppStoreSyncFixture.start()
        Self.fixture = started
        // The cluster trusts its test CA's root for receipts too.
        let signer = try SignedTestReceipt(authority: started.cluster.authority)
        Self.signer = signer
        return (started, signer)
    }

    private func verifyReceipt(_ cluster: PaymentsCluster, user: UUID, _ receiptData: String) async throws
        -> VerifyReceiptResponse
    {
        var request = VerifyReceiptRequest()
        request.userId = user.uuidString.lowercased()
        request.emailHash = PaymentsCluster.randomEmailHash()
        request.emailMasked = "a***@example.com"
        request.receiptData = receiptData
        return try await cluster.rpc().call(PaymentsMethods.verifyReceipt, request, timeout: .seconds(60))
    }

    /// A fresh user and a purchase of theirs without an appAccountToken,
    /// known to the App Store stand-in (Production).
    private func tokenlessPurchase(at fixture: AppStoreSyncFixture) async throws -> (user: UUID, transactionId: String)
    {
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    transactionId, productCode: "popular_pack", token: nil, customer: "c-\(user)")
            ])
        return (user, transactionId)
    }

    /// The whole receipt is refused: RECEIPT_INVALID with `code` in `receipt-failure`.
    private func assertReceiptRefused(
        _ cluster: PaymentsCluster, user: UUID, _ receipt: String, _ code: String,
        file: StaticString = #filePath, line: UInt = #line
    ) async {
        let error = await expectRPCError(.invalidArgument, reason: "RECEIPT_INVALID", file: file, line: line) {
            _ = try await self.verifyReceipt(cluster, user: user, receipt)
        }
        XCTAssertEqual(error?.metadata[stringValues: "receipt-failure"].first, code, file: file, line: line)
    }

    private func result(_ response: VerifyReceiptResponse, _ transactionId: String) -> ReceiptItemResult? {
        response.results.first { $0.transactionId == transactionId }
    }

    /// Nothing of the receipt, a JWS or the key in any log line.
    private func assertLogsClean(
        _ fixture: AppStoreSyncFixture, receipts: [String], file: StaticString = #filePath, line: UInt = #line
    ) {
        let logs = fixture.cluster.paymentsLogs
        fixture.assertNoSecrets(in: logs, file: file, line: line)
        for receipt in receipts where receipt.count > 120 {
            let middle = receipt.dropFirst(receipt.count / 2).prefix(40)
            XCTAssertFalse(logs.contains(middle), "a receipt reached the log", file: file, line: line)
        }
    }

    func testSeveralTransactionsAreCreditedEachOnItsOwnAndAReplayIsAllDuplicate() async throws {
        let (fixture, signer) = try await fixture()
        let cluster = fixture.cluster
        let user = UUID(), other = UUID()
        let token = try await cluster.accountToken(user)
        let otherToken = try await cluster.accountToken(other)
        let mine = PaymentsCluster.randomTransactionId(), noToken = PaymentsCluster.randomTransactionId()
        let unknown = PaymentsCluster.randomTransactionId(), foreign = PaymentsCluster.randomTransactionId()
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(mine, productCode: "popular_pack", token: token, customer: "c-\(user)"),
                AppStoreSyncFixture.transaction(
                    noToken, productCode: "premium_pack", token: nil, customer: "c-\(user)"),
                AppStoreSyncFixture.transaction(
                    foreign, productCode: "popular_pack", token: otherToken, customer: "c-\(other)"),
            ])
        let receipt = try await signer.base64(
            bundleId: PaymentsCluster.bundleId, transactionIds: [mine, unknown, noToken, foreign])

        let first = try await verifyReceipt(cluster, user: user, receipt)
        XCTAssertEqual(
            first.results.map(\.transactionId), [mine, unknown, noToken],
            "in the receipt's order; another account's purchase is left out, nothing said about it")
        XCTAssertEqual(result(first, mine)?.status, .success)
        XCTAssertEqual(result(first, mine)?.creditsAdded, 210)
        XCTAssertEqual(result(first, mine)?.productCode, "popular_pack")
        XCTAssertEqual(result(first, noToken)?.status, .success)
        XCTAssertEqual(result(first, noToken)?.creditsAdded, 415)
        XCTAssertEqual(result(first, unknown)?.status, .failed)
        XCTAssertEqual(result(first, unknown)?.errorGrpcCode, 3)
        XCTAssertEqual(result(first, unknown)?.errorReason, "TRANSACTION_INVALID")
        XCTAssertEqual(result(first, unknown)?.errorDetail, "not_found_at_apple")
        XCTAssertNil(result(first, foreign))
        let audit = cluster.paymentsLogs.split(separator: "\n").filter {
            $0.contains("ignored a transaction of another account")
        }
        XCTAssertTrue(audit.contains { $0.contains(foreign) }, "audited by id")
        try await cluster.assertGrantedOnce(mine, user: user, productCode: "popular_pack")
        try await cluster.assertGrantedOnce(noToken, user: user, productCode: "premium_pack")
        let unknownRow = try await cluster.row(unknown)
        XCTAssertNil(unknownRow)
        let foreignRow = try await cluster.row(foreign)
        XCTAssertNil(foreignRow, "another user's purchase is not recorded for this one")
        let otherRows = try await cluster.ledgerRows(user: other)
        XCTAssertEqual(otherRows, 0)
        var balance = try await cluster.balance(user)
        XCTAssertEqual(balance.balance, 625)
        // The unknown id was asked in production, then in sandbox (Apple's order).
        let unknownLookups = try await fixture.requests("/inApps/v1/transactions/\(unknown)")
        XCTAssertEqual(unknownLookups.compactMap { $0["env"] as? String }, ["Production", "Sandbox"])

        // The same receipt again: every credited item is a duplicate; nothing moves.
        let again = try await verifyReceipt(cluster, user: user, receipt)
        XCTAssertEqual(again.results.map(\.status), [.duplicate, .failed, .duplicate])
        XCTAssertEqual(again.results.map(\.creditsAdded), [0, 0, 0])
        try await cluster.assertGrantedOnce(mine, user: user, productCode: "popular_pack")
        try await cluster.assertGrantedOnce(noToken, user: user, productCode: "premium_pack")
        balance = try await cluster.balance(user)
        XCTAssertEqual(balance.balance, 625)
        try await cluster.assertPointsInvariants(users: [user, other])
        assertLogsClean(fixture, receipts: [receipt])
    }

    func testAReceiptWithOneTransactionAndAReceiptWithNone() async throws {
        let (fixture, signer) = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        try await fixture.standIn.add(
            environment: "Production",
            transactions: [
                AppStoreSyncFixture.transaction(
                    transactionId, productCode: "popular_pack", token: nil, quantity: 2, customer: "c-\(user)")
            ])
        let one = try await signer.base64(bundleId: PaymentsCluster.bundleId, transactionIds: [transactionId])
        let answer = try await verifyReceipt(cluster, user: user, one)
        XCTAssertEqual(answer.results.count, 1)
        XCTAssertEqual(answer.results.first?.status, .success)
        XCTAssertEqual(answer.results.first?.creditsAdded, 420, "catalog credits × Apple's quantity")
        try await cluster.assertGrantedOnce(transactionId, user: user, productCode: "popular_pack", quantity: 2)

        let none = try await signer.base64(bundleId: PaymentsCluster.bundleId, transactionIds: [])
        let empty = try await verifyReceipt(cluster, user: user, none)
        XCTAssertEqual(empty.results, [])
        assertLogsClean(fixture, receipts: [one, none])
    }

    /// A receipt's transaction id is the receipt's own unsigned text until it
    /// passes the id rule: one holding an email is refused for that item and
    /// never logged (it had been, on the item's log lines).
    func testAnItemThatIsNotATransactionIdIsRefusedAndNeverLogged() async throws {
        let (fixture, signer) = try await fixture()
        let planted = "alice.secret.\(UInt32.random(in: 0...UInt32.max))@example.com"
        let receipt = try await signer.base64(bundleId: PaymentsCluster.bundleId, transactionIds: [planted])
        let answer = try await verifyReceipt(fixture.cluster, user: UUID(), receipt)
        XCTAssertEqual(answer.results.count, 1)
        XCTAssertEqual(answer.results.first?.status, .failed)
        XCTAssertFalse(fixture.cluster.paymentsLogs.contains(planted), "the receipt's text reached the log")
        assertLogsClean(fixture, receipts: [receipt])
    }

    func testUnreadableTooLargeAndForeignReceiptsAreRefusedWholeAndWriteNothing() async throws {
        let (fixture, signer) = try await fixture()
        let cluster = fixture.cluster
        let (user, transactionId) = try await tokenlessPurchase(at: fixture)

        await assertReceiptRefused(cluster, user: user, "this is not base64!", "notBase64")

        let whole = try await signer.base64(bundleId: PaymentsCluster.bundleId, transactionIds: [transactionId])
        let bytes = Array(Data(base64Encoded: whole)!)
        let truncated = Data(bytes.prefix(bytes.count - 40)).base64EncodedString()
        await assertReceiptRefused(cluster, user: user, truncated, "truncated")

        let foreign = try await signer.base64(bundleId: "com.example.another.app", transactionIds: [transactionId])
        let refused = await expectRPCError(.invalidArgument, reason: "TRANSACTION_INVALID") {
            _ = try await self.verifyReceipt(cluster, user: user, foreign)
        }
        XCTAssertEqual(refused?.metadata[stringValues: "jws-failure"].first, "wrong_bundle")

        // None of them made us ask Apple anything.
        let lookups = try await fixture.requests("/inApps/v1/transactions/\(transactionId)")
        XCTAssertEqual(lookups.count, 0)

        // Past 10 transactions the rest is deferred, not the receipt refused
        // (a user with 11 unfinished purchases had none of them credited, for good).
        let many = (0...10).map { _ in PaymentsCluster.randomTransactionId() }
        let tooMany = try await signer.base64(bundleId: PaymentsCluster.bundleId, transactionIds: many)
        let bounded = try await verifyReceipt(cluster, user: user, tooMany)
        XCTAssertEqual(bounded.results.map(\.transactionId), Array(many.prefix(10)))
        XCTAssertEqual(bounded.deferredCount, 1)
        for id in many.prefix(10) {
            let asked = try await fixture.requests("/inApps/v1/transactions/\(id)")
            XCTAssertFalse(asked.isEmpty, "looked up")
        }
        let deferred = try await fixture.requests("/inApps/v1/transactions/\(many[10])")
        XCTAssertEqual(deferred.count, 0, "the 11th waits for the next submission")
        try await cluster.assertNothingWritten(transactionId, user: user)
        assertLogsClean(fixture, receipts: [whole, truncated, foreign, tooMany])
    }

    /// A receipt the App Store did not sign is refused whole before Apple
    /// is asked anything, even when it lists a real purchase without an
    /// appAccountToken: knowing a transaction id is not enough to claim it.
    func testAReceiptNotSignedUnderTheTrustedRootIsRefusedBeforeAnyLookup() async throws {
        let (fixture, signer) = try await fixture()
        let cluster = fixture.cluster
        let (user, transactionId) = try await tokenlessPurchase(at: fixture)
        func refused(_ receipt: String, _ code: String, file: StaticString = #filePath, line: UInt = #line) async {
            await assertReceiptRefused(cluster, user: user, receipt, code, file: file, line: line)
        }

        let stranger = try await SignedTestReceipt(selfSigned: ())
        defer { stranger.removeFiles() }
        let selfSigned = try await stranger.base64(bundleId: PaymentsCluster.bundleId, transactionIds: [transactionId])
        await refused(selfSigned, "chainUntrusted")

        let otherAuthority = try SignedTestReceipt(authority: LocalTestingCertificateAuthority())
        defer { otherAuthority.removeFiles() }
        let untrusted = try await otherAuthority.base64(
            bundleId: PaymentsCluster.bundleId, transactionIds: [transactionId])
        await refused(untrusted, "chainUntrusted")

        // A genuine receipt with one byte of its content changed: still
        // readable, listing another product, but no longer what was signed.
        let genuine = Array(
            Data(
                base64Encoded: try await signer.base64(
                    bundleId: PaymentsCluster.bundleId, transactionIds: [transactionId]))!)
        let product = Array("popular_pack".utf8)
        let at = try XCTUnwrap(
            (0...(genuine.count - product.count)).first { Array(genuine[$0..<($0 + product.count)]) == product })
        var altered = genuine
        altered[at] = UInt8(ascii: "q")
        await refused(Data(altered).base64EncodedString(), "signatureInvalid")

        let undated = try await signer.base64(
            bundleId: PaymentsCluster.bundleId, transactionIds: [transactionId], creationDate: nil)
        await refused(undated, "creationDateMissing")

        let lookups = try await fixture.requests("/inApps/v1/transactions/\(transactionId)")
        XCTAssertEqual(lookups.count, 0, "Apple was asked nothing")
        try await cluster.assertNothingWritten(transactionId, user: user)
        assertLogsClean(fixture, receipts: [selfSigned, untrusted, undated])

        // The same purchase in a receipt the App Store signed is credited.
        let signed = try await verifyReceipt(cluster, user: user, Data(genuine).base64EncodedString())
        XCTAssertEqual(result(signed, transactionId)?.status, .success)
    }

    /// Receipts Apple's sandbox really signed (2018 and 2023,
    /// AppStoreVerificationTests' Fixtures/README-receipt.md) pass the
    /// service's signature check under the shipped Apple Inc. Root and are
    /// then refused as another app's; one altered byte makes them unsigned.
    func testReceiptsAppleSignedPassTheSignatureCheckAndAreRefusedAsAnotherAppsReceipts() async throws {
        let (fixture, _) = try await fixture()
        let cluster = fixture.cluster
        let user = UUID()
        let fixtures = ServiceProcess.repositoryRoot.appendingPathComponent("Tests/AppStoreVerificationTests/Fixtures")
        var submitted: [String] = []
        for name in ["receipt_sandbox_2018.b64", "receipt_sandbox_2023.b64"] {
            let text = try String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            submitted.append(text)
            let refused = await expectRPCError(.invalidArgument, reason: "TRANSACTION_INVALID") {
                _ = try await self.verifyReceipt(cluster, user: user, text)
            }
            XCTAssertEqual(refused?.metadata[stringValues: "jws-failure"].first, "wrong_bundle", name)
            var altered = Array(Data(base64Encoded: text)!)
            altered[altered.count - 10] ^= 0x01
            await assertReceiptRefused(cluster, user: user, Data(altered).base64EncodedString(), "signatureInvalid")
        }
        assertLogsClean(fixture, receipts: submitted)
    }

    func testWithoutTheAppStoreServerAPIKeyTheReceiptRouteIsOff() async throws {
        let cluster = try await Self.withoutKey.cluster()
        let signer = try SignedTestReceipt(authority: cluster.authority)
        defer { signer.removeFiles() }
        let user = UUID()
        let transactionId = PaymentsCluster.randomTransactionId()
        let receipt = try await signer.base64(bundleId: PaymentsCluster.bundleId, transactionIds: [transactionId])
        let error = await expectRPCError(.failedPrecondition, reason: "APPLE_API_NOT_CONFIGURED") {
            _ = try await self.verifyReceipt(cluster, user: user, receipt)
        }
        XCTAssertTrue(ErrorReason.appleAPINotConfigured.isPermanent)
        XCTAssertNotNil(error)
        try await cluster.assertNothingWritten(transactionId, user: user)
    }
}
