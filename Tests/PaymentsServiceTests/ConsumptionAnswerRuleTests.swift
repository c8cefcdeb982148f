import AppStoreServerAPI
@testable import PaymentsService
import ServiceKit
import XCTest

/// What PaymentsService answers Apple's CONSUMPTION_REQUEST, decided
/// without I/O, and its settings.
final class ConsumptionAnswerRuleTests: XCTestCase {
    private func facts(
        enabled: Bool = true, consented: Bool? = true, delivered: Bool = true, credited: Int64? = 100,
        spent: Int64? = 30,
        preference: ConsumptionRequest.RefundPreference? = nil
    ) -> ConsumptionAnswerRule.Facts {
        ConsumptionAnswerRule.Facts(
            enabled: enabled, consented: consented, delivered: delivered, credited: credited, spent: spent,
            refundPreference: preference)
    }

    func testThePercentageIsTheSpentShareInMilliunitsRoundedDown() {
        XCTAssertEqual(ConsumptionAnswerRule.percentageMilliunits(spent: 30, credited: 100), 30_000)
        XCTAssertEqual(ConsumptionAnswerRule.percentageMilliunits(spent: 1, credited: 3), 33_333)
        XCTAssertEqual(ConsumptionAnswerRule.percentageMilliunits(spent: 2, credited: 3), 66_666)
        XCTAssertEqual(ConsumptionAnswerRule.percentageMilliunits(spent: 100, credited: 100), 100_000)
        XCTAssertEqual(ConsumptionAnswerRule.percentageMilliunits(spent: 0, credited: 100), 0)
        XCTAssertEqual(ConsumptionAnswerRule.percentageMilliunits(spent: 0, credited: 0), 0, "nothing known")
        XCTAssertEqual(ConsumptionAnswerRule.percentageMilliunits(spent: 5, credited: 0), 0, "nothing known")
        XCTAssertEqual(
            ConsumptionAnswerRule.percentageMilliunits(spent: 150, credited: 100), 100_000, "never above 100 %")
        XCTAssertEqual(ConsumptionAnswerRule.percentageMilliunits(spent: 999_999_999, credited: 1_000_000_000), 99_999)
        for credited in Int64(1)...200 {
            for spent in Int64(0)...credited {
                let value = ConsumptionAnswerRule.percentageMilliunits(spent: spent, credited: credited)
                XCTAssertTrue((0...100_000).contains(value))
                XCTAssertLessThanOrEqual(Int64(value) * credited, spent * 100_000, "rounded down")
                XCTAssertGreaterThan(Int64(value + 1) * credited, spent * 100_000, "by less than one milliunit")
            }
        }
    }

    func testConsentedAndEnabledSendsDeliveredWithTheShareSpent() {
        XCTAssertEqual(
            ConsumptionAnswerRule.decide(facts(preference: .grantProrated)),
            .send(
                ConsumptionRequest(
                    customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: false,
                    consumptionPercentage: 30_000,
                    refundPreference: .grantProrated)))
    }

    /// Apple refuses GRANT_PRORATED with a consumption of 0 (400, and a
    /// refused answer is not sent again): nothing consumed or nothing
    /// delivered prorates to the whole, GRANT_FULL.
    func testAProratedPreferenceWithNothingConsumedIsSentAsGrantFull() {
        for zero in [facts(spent: 0, preference: .grantProrated), facts(delivered: false, preference: .grantProrated)] {
            guard case .send(let request) = ConsumptionAnswerRule.decide(zero) else { return XCTFail("expected send") }
            XCTAssertEqual(request.consumptionPercentage, 0)
            XCTAssertEqual(request.refundPreference, .grantFull)
        }
        guard case .send(let declined) = ConsumptionAnswerRule.decide(facts(spent: 0, preference: .decline)) else {
            return XCTFail()
        }
        XCTAssertEqual(declined.refundPreference, .decline, "other preferences are sent as set")
    }

    /// Apple also refuses GRANT_PRORATED at 100000: everything consumed
    /// prorates to nothing, DECLINE (it was sent as GRANT_PRORATED, refused
    /// with a 400 and never sent again: Apple got no consumption data for
    /// the case that matters most). With no share known, no preference.
    func testAProratedPreferenceWithEverythingConsumedIsSentAsDecline() {
        guard
            case .send(let all) = ConsumptionAnswerRule.decide(
                facts(credited: 100, spent: 100, preference: .grantProrated))
        else {
            return XCTFail("expected send")
        }
        XCTAssertEqual(all.consumptionPercentage, 100_000)
        XCTAssertEqual(all.refundPreference, .decline)
        guard
            case .send(let part) = ConsumptionAnswerRule.decide(
                facts(credited: 100, spent: 99, preference: .grantProrated))
        else {
            return XCTFail("expected send")
        }
        XCTAssertEqual(part.consumptionPercentage, 99_000)
        XCTAssertEqual(part.refundPreference, .grantProrated)
        guard
            case .send(let unknown) = ConsumptionAnswerRule.decide(
                facts(credited: nil, spent: nil, preference: .grantProrated))
        else {
            return XCTFail("expected send")
        }
        XCTAssertNil(unknown.consumptionPercentage)
        XCTAssertNil(unknown.refundPreference)
    }

    func testNothingIsSentWithoutConsentOrWhenDisabled() {
        XCTAssertEqual(ConsumptionAnswerRule.decide(facts(consented: false)), .skip(reason: "no_consent"))
        XCTAssertEqual(
            ConsumptionAnswerRule.decide(facts(consented: nil)), .skip(reason: "no_consent"),
            "never said is not consent")
        XCTAssertEqual(ConsumptionAnswerRule.decide(facts(enabled: false)), .skip(reason: "disabled"))
        XCTAssertEqual(ConsumptionAnswerRule.decide(facts(enabled: false, consented: false)), .skip(reason: "disabled"))
    }

    func testAPurchaseNotCreditedIsUndeliveredAndAnUnknownLotClaimsNoShare() {
        guard case .send(let undelivered) = ConsumptionAnswerRule.decide(facts(delivered: false)) else {
            return XCTFail("expected send")
        }
        XCTAssertEqual(undelivered.deliveryStatus, .undeliveredOther)
        XCTAssertEqual(undelivered.consumptionPercentage, 0)
        guard case .send(let unknown) = ConsumptionAnswerRule.decide(facts(credited: nil, spent: nil)) else {
            return XCTFail("expected send")
        }
        XCTAssertEqual(unknown.deliveryStatus, .delivered)
        XCTAssertNil(unknown.consumptionPercentage, "no share known: none claimed")
        XCTAssertNil(unknown.refundPreference)
    }

    /// A grant still owed (the saga retrying through a PointsService
    /// outage) is waited for while more than an hour of Apple's window is
    /// left, then answered as undelivered for a server outage; it had been
    /// answered at once as UNDELIVERED_OTHER.
    func testAnOwedGrantIsWaitedForThenAnsweredAsAServerOutage() {
        var owed = facts(delivered: false, preference: .grantProrated)
        owed.grantOwed = true
        owed.windowLeftMilliseconds = ConsumptionAnswerRule.answerWindowMilliseconds - 5_000
        XCTAssertEqual(ConsumptionAnswerRule.decide(owed), .postpone(reason: "grant_owed"))
        owed.windowLeftMilliseconds = ConsumptionAnswerRule.owedGrantWaitsWhileMillisecondsLeft + 1
        XCTAssertEqual(ConsumptionAnswerRule.decide(owed), .postpone(reason: "grant_owed"))
        owed.windowLeftMilliseconds = ConsumptionAnswerRule.owedGrantWaitsWhileMillisecondsLeft
        guard case .send(let outage) = ConsumptionAnswerRule.decide(owed) else { return XCTFail("expected send") }
        XCTAssertEqual(outage.deliveryStatus, .undeliveredServerOutage)
        XCTAssertEqual(outage.consumptionPercentage, 0)
        XCTAssertEqual(outage.refundPreference, .grantFull)
        var withoutConsent = owed
        withoutConsent.consented = nil
        XCTAssertEqual(
            ConsumptionAnswerRule.decide(withoutConsent), .skip(reason: "no_consent"), "consent is asked first")
    }

    func testSampleContentIsTheOperatorsWord() {
        var sampled = facts()
        sampled.sampleContentProvided = true
        guard case .send(let request) = ConsumptionAnswerRule.decide(sampled) else { return XCTFail("expected send") }
        XCTAssertTrue(request.sampleContentProvided)
        guard case .send(let plain) = ConsumptionAnswerRule.decide(facts()) else { return XCTFail("expected send") }
        XCTAssertFalse(plain.sampleContentProvided)
    }

    func testTheBodyIsRecordedAsSent() {
        let request = ConsumptionRequest(
            customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: false,
            consumptionPercentage: 30_000, refundPreference: .decline)
        XCTAssertEqual(
            ConsumptionAnswerer.bodyJSON(request),
            #"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false,"consumptionPercentage":30000,"refundPreference":"DECLINE"}"#
        )
    }

    private func settings(_ environment: [String: String]) throws -> ConsumptionSettings {
        try ConsumptionSettings(
            CommandLineOptions(specs: ConsumptionSettings.optionSpecs, arguments: [], environment: environment))
    }

    func testSettingsAreOffByDefaultAndRefuseUnknownValues() throws {
        XCTAssertEqual(try settings([:]), ConsumptionSettings())
        let on = try settings([
            "CONSUMPTION_ANSWERS": "on", "CONSUMPTION_REFUND_PREFERENCE": "GRANT_PRORATED",
            "CONSUMPTION_RETRY_SECONDS": "5",
        ])
        XCTAssertTrue(on.enabled)
        XCTAssertEqual(on.refundPreference, .grantProrated)
        XCTAssertEqual(on.retry, .seconds(5))
        XCTAssertFalse(on.sampleContentProvided)
        XCTAssertTrue(try settings(["CONSUMPTION_SAMPLE_CONTENT_PROVIDED": "on"]).sampleContentProvided)
        for bad in [
            ["CONSUMPTION_ANSWERS": "yes"], ["CONSUMPTION_REFUND_PREFERENCE": "grant_full"],
            ["CONSUMPTION_RETRY_SECONDS": "0"],
            ["CONSUMPTION_RETRY_SECONDS": "3601"], ["CONSUMPTION_SAMPLE_CONTENT_PROVIDED": "true"],
        ] {
            XCTAssertThrowsError(try settings(bad), "\(bad)")
        }
    }
}
