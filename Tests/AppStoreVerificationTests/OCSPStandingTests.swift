import XCTest
@testable import AppStoreVerification

/// `OCSPStanding` alone: decisions at given seconds after given outcomes.
final class OCSPStandingTests: XCTestCase {
    private let now: Int64 = 1_000_000
    private let refresh = VerificationLimits.ocspResultLifetimeSeconds
    private let retry = VerificationLimits.ocspRetryIntervalSeconds
    private let outage = VerificationFailure.retryable(reason: "OCSP fetch failed: down")
    private let revoked = VerificationFailure.badChain(reason: "certificate revoked")

    func testNeverAskedAsks() {
        let standing = OCSPStanding()
        XCTAssertEqual(standing.decision(atSeconds: now), .ask)
        XCTAssertEqual(
            standing.decisionWithoutAsking(atSeconds: now), .refuse(.retryable(reason: "no OCSP answer held")))
    }

    func testGoodIsCurrentUntilTheRefreshOrTheAnswersEndWhicheverIsFirst() {
        var standing = OCSPStanding()
        standing.record(.good(validUntilSeconds: now + 86_400), atSeconds: now)
        XCTAssertEqual(standing.decision(atSeconds: now + refresh - 1), .accept(.current))
        XCTAssertEqual(standing.decision(atSeconds: now + refresh), .ask)

        var shortLived = OCSPStanding()
        shortLived.record(.good(validUntilSeconds: now + 60), atSeconds: now)
        XCTAssertEqual(shortLived.decision(atSeconds: now + 59), .accept(.current))
        XCTAssertEqual(shortLived.decision(atSeconds: now + 60), .ask)
    }

    func testAGoodAnswerAtItsEndStillCountsForTheSecondItWasFetched() {
        var standing = OCSPStanding()
        standing.record(.good(validUntilSeconds: now - 10), atSeconds: now)
        XCTAssertEqual(standing.decisionWithoutAsking(atSeconds: now), .accept(.current))
        XCTAssertEqual(standing.decision(atSeconds: now + 1), .ask)
    }

    func testAnOutageHoldsGoodAnswersUntilTheirEndAndRetriesAtItsInterval() {
        var standing = OCSPStanding()
        standing.record(.good(validUntilSeconds: now + 3_600), atSeconds: now - refresh)
        standing.record(.refused(outage), atSeconds: now)
        XCTAssertEqual(standing.decision(atSeconds: now), .accept(.heldThroughOutage))
        XCTAssertEqual(standing.decision(atSeconds: now + retry - 1), .accept(.heldThroughOutage))
        XCTAssertEqual(standing.decision(atSeconds: now + retry), .ask)
        XCTAssertEqual(standing.decisionWithoutAsking(atSeconds: now + 3_600), .refuse(outage))
        standing.record(.good(validUntilSeconds: now + 7_200), atSeconds: now + retry)
        XCTAssertEqual(standing.decision(atSeconds: now + retry), .accept(.current))
    }

    func testADefiniteRefusalWithdrawsHeldAnswersAndOutlastsALaterOutage() {
        var standing = OCSPStanding()
        standing.record(.good(validUntilSeconds: now + 86_400), atSeconds: now - refresh)
        standing.record(.refused(revoked), atSeconds: now)
        XCTAssertEqual(standing.decision(atSeconds: now + refresh - 1), .refuse(revoked))
        XCTAssertEqual(standing.decision(atSeconds: now + refresh), .ask)
        standing.record(.refused(outage), atSeconds: now + refresh)
        XCTAssertEqual(standing.decision(atSeconds: now + refresh), .refuse(revoked))
        XCTAssertEqual(standing.decision(atSeconds: now + refresh + retry), .ask)
    }
}
