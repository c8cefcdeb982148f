import XCTest
import StrictJSON
@testable import Gateway

final class ResponseBodyTests: XCTestCase {
    func testGrantedAndAlreadyGrantedShapesMatchPRD() throws {
        let granted = try VerifyTransactionResponseBody(
            status: .granted, productCode: "starter_pack", transactionId: "1000000123456789",
            creditsAdded: 100, newBalance: 180, ledgerEventId: "payment.apple_iap:1000000123456789")
        XCTAssertEqual(
            JSONWriter.string(of: granted.json),
            #"{"status":"granted","productCode":"starter_pack","transactionId":"1000000123456789","creditsAdded":100,"#
                + #""newBalance":180,"ledgerEventId":"payment.apple_iap:1000000123456789"}"#)
        let again = try VerifyTransactionResponseBody(
            status: .alreadyGranted, productCode: "starter_pack", transactionId: "1000000123456789",
            creditsAdded: 0, newBalance: 180, ledgerEventId: "payment.apple_iap:1000000123456789")
        XCTAssertTrue(JSONWriter.string(of: again.json).hasPrefix(#"{"status":"already_granted","#))
        let response = again.response()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers.first("content-type"), "application/json")
    }

    /// The balance body writes its bytes directly; they are the document's.
    func testBalanceBytesAreTheDocumentsBytes() {
        var generator = SystemRandomNumberGenerator()
        let edges: [Int64] = [0, 1, -1, 9, 10, Int64.max, Int64.min]
        for index in 0..<2_000 {
            let values = (0..<3).map { _ in
                index < 300
                    ? edges.randomElement(using: &generator)!
                    : Int64.random(in: Int64.min...Int64.max, using: &generator)
            }
            let body = BalanceResponseBody(balance: values[0], lifetimeEarned: values[1], lifetimeSpent: values[2])
            XCTAssertEqual(body.jsonBytes(), JSONWriter.bytes(of: body.json), "\(values)")
            XCTAssertEqual(body.response().body, JSONWriter.bytes(of: body.json))
        }
    }

    func testOtherShapes() {
        XCTAssertEqual(
            JSONWriter.string(of: BalanceResponseBody(balance: 180, lifetimeEarned: 200, lifetimeSpent: 20).json),
            #"{"balance":180,"lifetimeEarned":200,"lifetimeSpent":20}"#)
        let package = PackagesResponseBody.Package(
            productCode: "new_user_pack", appStoreProductId: "com.meeyao.qianwen.new_user_pack", kind: .starter,
            credits: 60, displayName: "New user pack", price: "0.99", currency: "USD")
        XCTAssertEqual(
            JSONWriter.string(of: PackagesResponseBody(packages: [package]).json),
            #"{"packages":[{"productCode":"new_user_pack","appStoreProductId":"com.meeyao.qianwen.new_user_pack","#
                + #""kind":"starter","credits":60,"displayName":"New user pack","price":"0.99","currency":"USD"}]}"#)
        XCTAssertEqual(
            JSONWriter.string(
                of: AccountTokenResponseBody(appAccountToken: "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72").json),
            #"{"appAccountToken":"7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"}"#)
        let status = TransactionStatusResponseBody(
            transactionId: "1", originalTransactionId: "1", productCode: "starter_pack",
            appStoreProductId: "com.meeyao.qianwen.starter_pack", environment: "Sandbox", status: .refundedInsufficient,
            credits: 100, purchaseDateUnixMilliseconds: 1_777_284_000_000, revocationDateUnixMilliseconds: nil,
            ledgerEventId: nil)
        XCTAssertEqual(
            JSONWriter.string(of: status.json),
            #"{"transactionId":"1","originalTransactionId":"1","productCode":"starter_pack","#
                + #""appStoreProductId":"com.meeyao.qianwen.starter_pack","environment":"Sandbox","#
                + #""status":"refunded_insufficient","credits":100,"purchaseDate":"2026-04-27T10:00:00.000Z"}"#)
    }

    func testBackendAnswersBreakingInvariantsBecomeInternal() {
        XCTAssertThrowsError(
            try VerifyTransactionResponseBody(
                status: .alreadyGranted, productCode: "p", transactionId: "1", creditsAdded: 5, newBalance: 5,
                ledgerEventId: "e")
        ) {
            XCTAssertEqual(Problem(rendering: $0).code, .internalError)
        }
        XCTAssertThrowsError(
            try VerifyTransactionResponseBody(
                status: .granted, productCode: "p", transactionId: "1", creditsAdded: 5, newBalance: -1,
                ledgerEventId: "e"))
    }
}
