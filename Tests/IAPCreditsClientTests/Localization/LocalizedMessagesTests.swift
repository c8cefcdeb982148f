import IAPCreditsClient
import XCTest

final class LocalizedMessagesTests: XCTestCase {
    private func containsHan(_ text: String) -> Bool {
        text.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) }
    }

    func testEveryCodeHasAnEnglishAndAChineseMessage() {
        for code in ProblemCode.allKnown + [.unrecognized("SOMETHING_NEW")] {
            let english = LocalizedMessages.text(for: .problem(code), in: .english)
            let chinese = LocalizedMessages.text(for: .problem(code), in: .simplifiedChinese)
            XCTAssertFalse(english.isEmpty, code.wireCode)
            XCTAssertFalse(containsHan(english), code.wireCode)
            XCTAssertTrue(containsHan(chinese), code.wireCode)
            XCTAssertNotEqual(english, chinese)
            XCTAssertFalse(english.contains(code.wireCode), "messages are for people, not codes")
        }
    }

    /// PRD 6.3's "前端处理" column, in words the user reads.
    func testPaymentCodesSayWhatToDo() {
        func english(_ code: ProblemCode) -> String { LocalizedMessages.text(for: .problem(code), in: .english) }
        func chinese(_ code: ProblemCode) -> String {
            LocalizedMessages.text(for: .problem(code), in: .simplifiedChinese)
        }
        XCTAssertTrue(english(.paymentProductNotFound).contains("not available"))
        XCTAssertTrue(chinese(.paymentProductNotFound).contains("不可用"))
        XCTAssertTrue(english(.paymentTransactionRevoked).contains("refunded or revoked"))
        XCTAssertTrue(chinese(.paymentTransactionRevoked).contains("退款或撤销"))
        XCTAssertTrue(english(.paymentTransactionConflict).contains("contact support"))
        XCTAssertTrue(chinese(.paymentTransactionConflict).contains("联系客服"))
        XCTAssertTrue(chinese(.paymentStarterPackIneligible).contains("新手包"))
        XCTAssertTrue(english(.paymentAppleUnavailable).contains("credited automatically"))
        XCTAssertTrue(chinese(.paymentAppleUnavailable).contains("稍后"))
        XCTAssertTrue(chinese(.paymentGrantFailed).contains("自动补发"))
        XCTAssertTrue(english(.paymentEnvironmentNotAllowed).contains("Test purchases"))
        XCTAssertTrue(chinese(.paymentEnvironmentNotAllowed).contains("测试环境"))
        XCTAssertTrue(english(.unauthenticated).contains("sign in"))
        XCTAssertTrue(english(.unrecognized("NEW")).contains("kept"))
    }

    /// Outside a refund, a paid purchase is never described as lost or to be bought again.
    func testNoMessageTellsTheUserToBuyAgain() {
        for code in ProblemCode.allKnown + [.unrecognized("NEW")] {
            let text = LocalizedMessages.text(for: .problem(code), in: .english).lowercased()
            XCTAssertFalse(text.contains("buy again") || text.contains("purchase again"), code.wireCode)
        }
    }

    func testErrorsAndOutcomesUseTheTable() {
        let grantFailed = Fixtures.problem(.paymentGrantFailed)
        XCTAssertEqual(
            grantFailed.localizedMessage(.simplifiedChinese),
            LocalizedMessages.text(for: .problem(.paymentGrantFailed), in: .simplifiedChinese))
        XCTAssertEqual(
            CreditsError(.transport("offline")).localizedMessage(.english),
            LocalizedMessages.text(for: .offline, in: .english))
        XCTAssertEqual(
            PurchaseOutcome.pending.localizedMessage(.simplifiedChinese), "Apple 正在处理此次购买（可能需要批准），完成后积分将自动到账。")
        XCTAssertEqual(
            PurchaseOutcome.cancelled.localizedMessage(.english), "The purchase was cancelled. You were not charged.")
        let grant = VerifiedGrant(
            status: .granted, productCode: "starter_pack", transactionId: "1", creditsAdded: 100, newBalance: 100,
            ledgerEventId: "payment.apple_iap:1")
        XCTAssertEqual(PurchaseOutcome.credited(grant, balance: nil).localizedMessage(.english), "100 credits added.")
        XCTAssertEqual(
            PurchaseOutcome.credited(grant, balance: nil).localizedMessage(.simplifiedChinese), "已到账 100 积分。")
        XCTAssertEqual(
            PurchaseOutcome.revoked(transactionId: "1").localizedMessage(.english),
            LocalizedMessages.text(for: .problem(.paymentTransactionRevoked), in: .english))
    }

    func testPendingPurchasesSayWhereTheyStand() {
        func summary(_ state: PendingPurchaseSummary.State) -> PendingPurchaseSummary {
            PendingPurchaseSummary(transactionId: "1", appStoreProductId: nil, state: state)
        }
        XCTAssertEqual(
            summary(.awaitingCredit(nil, nextAttemptInMilliseconds: 100)).localizedMessage(.english),
            LocalizedMessages.text(for: .awaitingCredit, in: .english))
        XCTAssertTrue(summary(.otherAccount).localizedMessage(.english).contains("another account"))
        XCTAssertTrue(summary(.otherAccount).localizedMessage(.simplifiedChinese).contains("另一个账号"))
        XCTAssertEqual(
            summary(.refused(Fixtures.problem(.paymentStarterPackIneligible, status: 409))).localizedMessage(
                .simplifiedChinese),
            LocalizedMessages.text(for: .problem(.paymentStarterPackIneligible), in: .simplifiedChinese))
        XCTAssertEqual(summary(.unverifiedByStore(reason: "x")).advice, .contactSupport)
        XCTAssertEqual(summary(.waitingForNextLaunch(CreditsError(.transport("offline")))).advice, .retryLater)
    }

    func testPreferredLanguage() {
        XCTAssertEqual(MessageLanguage.preferred(["zh-Hans-CN", "en-US"]), .simplifiedChinese)
        XCTAssertEqual(MessageLanguage.preferred(["zh_CN"]), .simplifiedChinese)
        XCTAssertEqual(MessageLanguage.preferred(["zh"]), .simplifiedChinese)
        XCTAssertEqual(MessageLanguage.preferred(["zh-Hant-TW", "zh-Hans"]), .simplifiedChinese)
        XCTAssertEqual(MessageLanguage.preferred(["zh-TW"]), .english)
        XCTAssertEqual(MessageLanguage.preferred(["fr-FR", "en-GB", "zh-Hans"]), .english)
        XCTAssertEqual(MessageLanguage.preferred(["fr-FR", "zh-CN"]), .simplifiedChinese)
        XCTAssertEqual(MessageLanguage.preferred([]), .english)
    }
}
