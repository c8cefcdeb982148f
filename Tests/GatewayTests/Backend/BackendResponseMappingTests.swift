import Contracts
import RPCCore
import XCTest
import StrictJSON
@testable import Gateway

final class BackendResponseMappingTests: XCTestCase {
    private let user = AuthenticatedUser(userId: "3f2504e0-4f89-41d3-9a0c-0305e82c3301", email: "a@b.c")

    private func submitted(_ transactionId: String = "1") throws -> VerifyTransactionRequestBody {
        try VerifyTransactionRequestBody(
            jsonBody: Array(
                (#"{"productCode":"starter_pack","appStoreProductId":"com.x.starter_pack","transactionId":""#
                    + transactionId
                    + #"","signedTransactionInfo":"a.b.c"}"#).utf8))
    }

    /// A receipt past the first 10 transactions: the rest is deferred, said
    /// in `deferredCount`; `ack` is whether anything was answered for.
    func testAReceiptAnswerCarriesAckAndTheDeferredCount() throws {
        var item = ReceiptItemResult()
        item.status = .duplicate
        item.transactionId = "2000000000000001"
        var response = VerifyReceiptResponse()
        response.results = [item]
        response.deferredCount = 3
        let body = try BackendResponseMapping.receipt(response)
        XCTAssertEqual(
            JSONWriter.string(of: body.json),
            #"{"ack":true,"matchedCount":1,"successCount":1,"failedCount":0,"deferredCount":3,"results":[{"status":"duplicate","transactionId":"2000000000000001","productCode":null,"creditsAdded":0}]}"#
        )
        let empty = try BackendResponseMapping.receipt(VerifyReceiptResponse())
        XCTAssertEqual(
            JSONWriter.string(of: empty.json),
            #"{"ack":false,"matchedCount":0,"successCount":0,"failedCount":0,"deferredCount":0,"results":[]}"#)
    }

    func testVerificationOutcomes() throws {
        var response = VerifyTransactionResponse()
        response.outcome = .granted
        response.productCode = "starter_pack"
        response.transactionId = "1"
        response.creditsAdded = 100
        response.newBalance = 180
        response.ledgerEventId = "payment.apple_iap:1"
        let granted = try BackendResponseMapping.verification(response, submitted: submitted())
        XCTAssertEqual(granted.status, .granted)
        XCTAssertEqual(
            JSONWriter.string(of: granted.json),
            #"{"status":"granted","productCode":"starter_pack","transactionId":"1","creditsAdded":100,"newBalance":180,"ledgerEventId":"payment.apple_iap:1"}"#
        )

        response.outcome = .alreadyGranted
        response.creditsAdded = 0
        XCTAssertEqual(
            try BackendResponseMapping.verification(response, submitted: submitted()).status, .alreadyGranted)
    }

    func testVerificationInvariants() throws {
        var response = VerifyTransactionResponse()
        response.transactionId = "1"
        response.ledgerEventId = "payment.apple_iap:1"
        XCTAssertThrowsError(try BackendResponseMapping.verification(response, submitted: submitted()))  // no outcome
        response.outcome = .alreadyGranted
        response.creditsAdded = 5
        XCTAssertThrowsError(try BackendResponseMapping.verification(response, submitted: submitted()))
        response.creditsAdded = 0
        // Another transaction.
        XCTAssertThrowsError(try BackendResponseMapping.verification(response, submitted: submitted("2")))
        response.ledgerEventId = ""
        XCTAssertThrowsError(try BackendResponseMapping.verification(response, submitted: submitted()))
    }

    func testTransactionOfAnotherUserIsNotFound() throws {
        var transaction = Transaction()
        transaction.transactionId = "1"
        transaction.userId = "9B2C6F4E-1A2B-4C3D-8E9F-0A1B2C3D4E5F"
        transaction.status = .granted
        var response = GetTransactionResponse()
        response.transaction = transaction
        XCTAssertThrowsError(try BackendResponseMapping.transaction(response, user: user, instance: "/x")) { error in
            XCTAssertEqual((error as? Problem)?.status, 404)
        }
        XCTAssertThrowsError(
            try BackendResponseMapping.transaction(GetTransactionResponse(), user: user, instance: "/x")
        ) { error in
            XCTAssertEqual((error as? Problem)?.status, 404)
        }
        transaction.userId = user.userId.uppercased()
        transaction.revocationDateUnixMs = 0
        response.transaction = transaction
        let body = try BackendResponseMapping.transaction(response, user: user, instance: "/x")
        XCTAssertNil(body.revocationDateUnixMilliseconds)
        XCTAssertNil(body.ledgerEventId)
        XCTAssertEqual(body.status, .granted)
    }

    func testPackagesAreSortedAndKindsRequired() throws {
        var first = Package()
        first.productCode = "b"
        first.appStoreProductId = "com.x.b"
        first.kind = .regular
        first.credits = 5
        first.sortOrder = 2
        var second = first
        second.productCode = "a"
        second.kind = .starter
        second.sortOrder = 1
        var response = ListPackagesResponse()
        response.packages = [first, second]
        XCTAssertEqual(try BackendResponseMapping.packages(response).packages.map(\.productCode), ["a", "b"])
        response.packages[0].kind = .unspecified
        XCTAssertThrowsError(try BackendResponseMapping.packages(response))
    }

    func testBalanceAndTokenInvariants() {
        var balance = GetBalanceResponse()
        balance.balance = -1
        XCTAssertThrowsError(try BackendResponseMapping.balance(balance))
        var token = GetAccountTokenResponse()
        token.appAccountToken = "not-a-uuid"
        XCTAssertThrowsError(try BackendResponseMapping.accountToken(token))
        token.appAccountToken = "7C4C7A82-2F6F-4E70-B57A-8B0A7F2E9B72"
        XCTAssertEqual(
            try BackendResponseMapping.accountToken(token).appAccountToken, "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72")
    }

    func testRPCErrorsMapThroughTheTableWithSafeDetail() {
        var error = ErrorReason.error(
            code: .invalidArgument, reason: "TRANSACTION_INVALID", message: "signature of eyJ... bad",
            extra: [("jws-failure", "CHAIN_UNTRUSTED")])
        var problem = RPCFailureMapping.problem(for: error, instance: "/v")
        XCTAssertEqual(problem.code, .paymentTransactionInvalid)
        XCTAssertEqual(problem.detail, "jws-failure: CHAIN_UNTRUSTED")
        error = ErrorReason.error(
            code: .invalidArgument, reason: "TRANSACTION_INVALID", message: "m", extra: [("jws-failure", "has space")])
        problem = RPCFailureMapping.problem(for: error, instance: "/v")
        XCTAssertNil(problem.detail)
        XCTAssertEqual(
            RPCFailureMapping.problem(for: RPCError(code: .deadlineExceeded, message: "late"), instance: nil).status,
            503)
        XCTAssertEqual(
            RPCFailureMapping.problem(for: RPCError(code: .unknown, message: "?"), instance: nil).status, 500)
    }
}
