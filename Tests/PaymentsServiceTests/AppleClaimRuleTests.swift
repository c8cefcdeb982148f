import AppStoreVerification
import Foundation
@testable import PaymentsService
import XCTest

/// `AppleClaimRule`: when Apple's word alone (ONE_TIME_CHARGE, a fetched
/// transaction) claims a purchase for a user, and why it leaves one
/// unclaimed. No I/O.
final class AppleClaimRuleTests: XCTestCase {
    private static let user = UUID(uuidString: "0f8fad5b-d9cb-469f-a165-70867728950e")!
    private static let tester = UUID(uuidString: "7c9e6679-7425-40de-944b-e07fc1f90ae7")!
    private static let popular = AppleClaimRule.Product(
        productCode: "popular_pack", credits: 210, needsEmailIdentity: false)
    private static let starter = AppleClaimRule.Product(
        productCode: "new_user_pack", credits: 60, needsEmailIdentity: true)
    /// Production with an App Review allow-list.
    private static let policy = SandboxCreditPolicy(
        acceptedEnvironments: [.production, .sandbox], sandboxUserIds: [tester], localTestingMode: false)

    private func decide(
        owner: AppleClaimRule.TokenOwner = .user(user), environment: AppStoreEnvironment = .production,
        type: String? = "Consumable",
        quantity: Int32? = 1, product: AppleClaimRule.ProductLookup = .found(popular),
        policy: SandboxCreditPolicy = policy
    ) -> AppleClaimRule.Decision {
        AppleClaimRule.decide(
            owner: owner, environment: environment, type: type, quantity: quantity, product: product, policy: policy)
    }

    func testKnownTokenAndRegularPackIsClaimedWithoutEmailIdentity() {
        let expected = PaymentClaim(
            userId: Self.user, productCode: "popular_pack", credits: 210, origin: .appAccountToken)
        XCTAssertEqual(decide(), .claim(expected))
        XCTAssertNil(expected.emailIdentity)
        XCTAssertFalse(expected.isFromApp)
    }

    func testQuantityMultipliesTheCatalogCredits() {
        guard case .claim(let claim) = decide(quantity: 3) else { return XCTFail("claimed") }
        XCTAssertEqual(claim.credits, 630)
        guard case .claim(let single) = decide(quantity: nil) else { return XCTFail("claimed") }
        XCTAssertEqual(single.credits, 210, "no quantity means 1")
    }

    func testQuantityOutsideStoreKitsBoundIsLeftUnclaimed() {
        XCTAssertEqual(decide(quantity: 0), .unclaimed(.quantityInvalid))
        XCTAssertEqual(decide(quantity: PaymentsLimits.quantityMax + 1), .unclaimed(.quantityInvalid))
        XCTAssertEqual(decide(quantity: PaymentsLimits.quantityMax).isClaim, true)
    }

    func testCreditsOverflowIsLeftUnclaimed() {
        let huge = AppleClaimRule.Product(productCode: "huge", credits: Int64.max / 2, needsEmailIdentity: false)
        XCTAssertEqual(decide(quantity: 3, product: .found(huge)), .unclaimed(.quantityInvalid))
    }

    func testWithoutAKnownTokenNothingIsClaimed() {
        XCTAssertEqual(decide(owner: .none), .unclaimed(.noAccountToken))
        XCTAssertEqual(decide(owner: .unknown), .unclaimed(.unknownAccountToken))
    }

    func testStarterPackWaitsForTheAppsEmailIdentity() {
        XCTAssertEqual(decide(product: .found(Self.starter)), .unclaimed(.starterPackNeedsApp))
    }

    func testCatalogGapsAreLeftUnclaimed() {
        XCTAssertEqual(decide(product: .notInCatalog), .unclaimed(.productNotInCatalog))
        XCTAssertEqual(decide(product: .catalogUnavailable), .unclaimed(.catalogUnavailable))
    }

    func testOnlyConsumablesAreClaimed() {
        XCTAssertEqual(decide(type: "Non-Consumable"), .unclaimed(.notConsumable))
        XCTAssertEqual(decide(type: "Auto-Renewable Subscription"), .unclaimed(.notConsumable))
        XCTAssertEqual(
            decide(type: nil), .unclaimed(.notConsumable),
            "no type: not known to be a consumable (fails closed, as verify)")
        XCTAssertEqual(decide(type: "consumable"), .unclaimed(.notConsumable), "Apple's spelling only")
    }

    func testSandboxCreditPolicyAppliesAsForTheAppsVerify() {
        XCTAssertEqual(decide(environment: .sandbox), .unclaimed(.environmentNotCredited), "not on the allow-list")
        XCTAssertEqual(decide(owner: .user(Self.tester), environment: .sandbox).isClaim, true, "App Review / tester")
        let staging = SandboxCreditPolicy(acceptedEnvironments: [.sandbox], sandboxUserIds: [], localTestingMode: false)
        XCTAssertEqual(decide(environment: .sandbox, policy: staging).isClaim, true)
        XCTAssertEqual(decide(environment: .production, policy: staging), .unclaimed(.environmentNotCredited))
        XCTAssertEqual(decide(environment: .xcode), .unclaimed(.environmentNotCredited))
    }

    func testTheTokenIsCheckedBeforeAnythingElse() {
        // No owner: nothing else matters (and nothing needs looking up).
        XCTAssertEqual(
            decide(
                owner: .none, environment: .sandbox, type: "Non-Consumable", quantity: 99, product: .catalogUnavailable),
            .unclaimed(.noAccountToken))
    }

    func testReasonCodesAreStableAndFitTheOutcomeColumn() {
        XCTAssertEqual(
            AppleClaimRule.Reason.allCases.map(\.rawValue),
            [
                "no_account_token", "unknown_account_token", "environment_not_credited", "not_consumable",
                "quantity_invalid",
                "product_not_in_catalog", "catalog_unavailable", "starter_pack_needs_app",
            ])
        for reason in AppleClaimRule.Reason.allCases {
            XCTAssertLessThanOrEqual("received_\(reason.rawValue)".utf8.count, 64)
        }
    }
}

extension AppleClaimRule.Decision {
    var isClaim: Bool {
        if case .claim = self { return true }
        return false
    }
}
