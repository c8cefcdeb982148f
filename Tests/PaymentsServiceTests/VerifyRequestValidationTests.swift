import FieldRules
import Foundation
@testable import PaymentsService
import XCTest

/// The VerifyTransaction field rules (FieldRules') under PaymentsService's
/// field names; no database.
final class VerifyRequestValidationTests: XCTestCase {
    private struct Fields {
        var userId = "7C4C7A82-2F6F-4E70-B57A-8B0A7F2E9B72"
        var emailHash = String(repeating: "ab", count: 32)
        var productCode = "starter_pack"
        var appStoreProductId = "com.meeyao.qianwen.starter_pack"
        var transactionId = "2000000847061981"
        var signedTransactionInfo = "a.b.c"
        var appAccountToken = ""
        var emailMasked = "a***@example.com"

        func validate() throws(PaymentsError) -> ValidVerifyRequest {
            try VerifyRequestValidation.validate(
                userId: userId, emailHash: emailHash, productCode: productCode, appStoreProductId: appStoreProductId,
                transactionId: transactionId, signedTransactionInfo: signedTransactionInfo,
                appAccountToken: appAccountToken,
                emailMasked: emailMasked)
        }
    }

    private func assertRefused(
        _ field: String, file: StaticString = #filePath, line: UInt = #line, _ change: (inout Fields) -> Void
    ) {
        var fields = Fields()
        change(&fields)
        do {
            _ = try fields.validate()
            XCTFail("expected VALIDATION_FAILED for \(field)", file: file, line: line)
        } catch {
            XCTAssertEqual(
                error, .validationFailed(field: field, problem: Self.problem(of: error)), file: file, line: line)
        }
    }

    private static func problem(of error: PaymentsError) -> String {
        if case .validationFailed(_, let problem) = error { return problem }
        return ""
    }

    func testValidRequestIsNormalised() throws {
        var fields = Fields()
        fields.appAccountToken = "3F2504E0-4F89-41D3-9A0C-0305E82C3301"
        let valid = try fields.validate()
        XCTAssertEqual(valid.userId, UUID(uuidString: "7c4c7a82-2f6f-4e70-b57a-8b0a7f2e9b72"))
        XCTAssertEqual(valid.appAccountToken, UUID(uuidString: "3f2504e0-4f89-41d3-9a0c-0305e82c3301"))
        fields.emailMasked = ""
        fields.appAccountToken = ""
        XCTAssertEqual(try fields.validate().emailMasked, "")
        XCTAssertNil(try fields.validate().appAccountToken)
        fields.appStoreProductId = "com.x/y+z"  // printable ASCII between services
        XCTAssertNoThrow(try fields.validate())
    }

    func testEachFieldIsRefusedUnderItsProtoName() {
        assertRefused("user_id") { $0.userId = "" }
        assertRefused("user_id") { $0.userId = "7c4c7a822f6f4e70b57a8b0a7f2e9b72" }
        assertRefused("email_hash") { $0.emailHash = String(repeating: "AB", count: 32) }
        assertRefused("product_code") { $0.productCode = "Starter" }
        assertRefused("product_code") { $0.productCode = String(repeating: "a", count: 65) }
        assertRefused("app_store_product_id") { $0.appStoreProductId = "com.x y" }
        assertRefused("app_store_product_id") { $0.appStoreProductId = String(repeating: "a", count: 256) }
        assertRefused("transaction_id") { $0.transactionId = String(repeating: "1", count: 33) }
        assertRefused("transaction_id") { $0.transactionId = "12\u{0}" }
        assertRefused("signed_transaction_info") { $0.signedTransactionInfo = "" }
        assertRefused("signed_transaction_info") {
            $0.signedTransactionInfo = String(repeating: "a", count: 64 * 1024 + 1)
        }
        assertRefused("app_account_token") { $0.appAccountToken = "not-a-uuid" }
        assertRefused("email_masked") { $0.emailMasked = "alice@example.com" }
        assertRefused("email_masked") { $0.emailMasked = "a***@exa\u{202E}mple.com" }
        assertRefused("email_masked") { $0.emailMasked = "a***@" + String(repeating: "d", count: 316) }
    }

    /// What PaymentsService accepts, PointsService accepts: both apply
    /// `EmailMask`'s check, and every gateway mask passes it.
    func testEveryGatewayMaskIsAccepted() throws {
        for email in [
            "Zoë@exa\u{202E}mple.com", "\u{2067}a@x\u{200B}.cn", "a@" + String(repeating: "d", count: 400), "nobody",
        ] {
            var fields = Fields()
            fields.emailMasked = EmailMask.masked(email)
            XCTAssertNoThrow(try fields.validate(), email.debugDescription)
        }
    }

    /// A row stored before FieldRules may hold a mask PointsService now
    /// refuses (a zero-width or bidi character the old gateway kept): the
    /// saga's Grant sends it repaired instead of failing for good; valid and
    /// empty masks go unchanged.
    func testGrantRequestRepairsAStoredMask() {
        func record(emailMasked: String?) -> PaymentRecord {
            PaymentRecord(
                id: UUID(), userId: UUID(), productCode: "starter_pack",
                appStoreProductId: "com.meeyao.qianwen.starter_pack",
                transactionId: "2000000847061981", originalTransactionId: nil, environment: "Sandbox",
                bundleId: "com.meeyao.qianwen",
                appAccountToken: nil, purchaseDateUnixMilliseconds: 0, quantity: 1, currency: nil, priceMilliunits: nil,
                ledgerEventId: nil,
                emailHash: String(repeating: "ab", count: 32), emailMasked: emailMasked,
                state: PurchaseLifecycle.start(
                    verdict: .purchased, signedAtUnixMilliseconds: 1, claimed: true, credits: 100),
                attemptCount: 0, lastError: nil, createdAtUnixMilliseconds: 0, updatedAtUnixMilliseconds: 0)
        }
        XCTAssertEqual(
            PointsLedger.grantRequest(record(emailMasked: "a***@ex\u{200B}ample.com")).emailMasked, "a***@example.com")
        XCTAssertEqual(
            PointsLedger.grantRequest(record(emailMasked: "a***@exa\u{202E}mple.com")).emailMasked, "a***@example.com")
        XCTAssertEqual(
            PointsLedger.grantRequest(record(emailMasked: "b***@example.com")).emailMasked, "b***@example.com")
        XCTAssertEqual(PointsLedger.grantRequest(record(emailMasked: nil)).emailMasked, "")
        XCTAssertEqual(PointsLedger.grantRequest(record(emailMasked: "")).emailMasked, "")
    }
}
