import Foundation
import XCTest

/// The starter pack (kind "starter": new_user_pack) once per email
/// identity, even across a re-registration under a new user id.
final class StarterPackTests: XCTestCase {
    private func offersStarter(_ system: EndToEndSystem, _ user: TestUser) async throws -> Bool {
        let answer = try await system.send("GET", "/api/v1/points/packages", token: user.token)
        XCTAssertEqual(answer.status, 200, answer.text)
        let packages = answer.json["packages"] as? [[String: Any]] ?? []
        return packages.contains { $0["productCode"] as? String == "new_user_pack" }
    }

    func testStarterPackOncePerEmailIncludingReRegistration() async throws {
        let system = try await EndToEndSystem.get()
        let first = system.user()
        let observed1 = try await offersStarter(system, first)
        XCTAssertTrue(observed1)
        let bought = EndToEndSystem.randomTransactionId()
        let granted = try await system.verify(first, productCode: "new_user_pack", transactionId: bought)
        XCTAssertEqual(granted.status, 200, granted.text)
        XCTAssertEqual(granted.json["status"] as? String, "granted")
        XCTAssertEqual(granted.json["creditsAdded"] as? Int, 60)
        let observed2 = try await system.starterClaim(firstUserId: first.id)
        XCTAssertEqual(observed2, true)
        let observed3 = try await offersStarter(system, first)
        XCTAssertFalse(observed3)

        let second = EndToEndSystem.randomTransactionId()
        let refused = try await system.verify(first, productCode: "new_user_pack", transactionId: second)
        XCTAssertEqual(refused.status, 409, refused.text)
        XCTAssertEqual(refused.problemCode, "PAYMENT_STARTER_PACK_INELIGIBLE")
        let observed4 = try await system.paymentStatus(second)
        XCTAssertNotEqual(observed4, "granted")

        // The same person signs up again: new user id, same email.
        let again = system.user(email: first.email)
        let observed5 = try await offersStarter(system, again)
        XCTAssertFalse(observed5)
        let third = EndToEndSystem.randomTransactionId()
        let refusedAgain = try await system.verify(again, productCode: "new_user_pack", transactionId: third)
        XCTAssertEqual(refusedAgain.status, 409, refusedAgain.text)
        XCTAssertEqual(refusedAgain.problemCode, "PAYMENT_STARTER_PACK_INELIGIBLE")

        let observed6 = try await system.ledger(first.id).map(\.eventId)
        XCTAssertEqual(observed6, ["payment.apple_iap:\(bought)"])
        let observed7 = try await system.ledger(again.id)
        XCTAssertEqual(observed7, [])
        let observed8 = try await system.account(first.id)?.balance
        XCTAssertEqual(observed8, 60)
        let observed9 = try await system.account(again.id)?.balance ?? 0
        XCTAssertEqual(observed9, 0)
        try await system.assertBalanceMatchesLedger(first.id)
        // Regular packages stay available to the new account.
        let regular = try await system.verify(again, productCode: "starter_pack")
        XCTAssertEqual(regular.json["status"] as? String, "granted", regular.text)
    }
}
