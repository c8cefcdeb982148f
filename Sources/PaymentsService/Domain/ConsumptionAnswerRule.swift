import AppStoreServerAPI

/// Whether and what to answer Apple's CONSUMPTION_REQUEST (Send Consumption
/// Information v2), decided from facts gathered beforehand; pure.
enum ConsumptionAnswerRule {
    /// Apple accepts an answer for 12 hours after its CONSUMPTION_REQUEST.
    static let answerWindowMilliseconds: Int64 = 12 * 3_600_000

    /// What the ledger knows about the purchase's credits (PointsService's
    /// credit lot); nil fields when PointsService has no lot for it.
    struct Facts: Sendable, Equatable {
        var enabled: Bool
        /// The user's stored consent; nil when the purchase has no owner
        /// or the owner never said.
        var consented: Bool?
        /// True once the purchase's grant was applied.
        var delivered: Bool
        var credited: Int64?
        var spent: Int64?
        var refundPreference: ConsumptionRequest.RefundPreference?
    }

    enum Decision: Sendable, Equatable {
        case send(ConsumptionRequest)
        /// Nothing is sent, for good; the reason is stored.
        case skip(reason: String)
    }

    static func decide(_ facts: Facts) -> Decision {
        guard facts.enabled else { return .skip(reason: "disabled") }
        guard facts.consented == true else { return .skip(reason: "no_consent") }
        let percentage = facts.delivered ? percentageMilliunits(spent: facts.spent ?? 0, credited: facts.credited ?? 0) : 0
        return .send(ConsumptionRequest(
            customerConsented: true,
            // Credits are delivered the moment the grant is applied; a
            // purchase not (yet) credited was not delivered for a reason
            // other than quality or the wrong item.
            deliveryStatus: facts.delivered ? .delivered : .undeliveredOther,
            sampleContentProvided: false, consumptionPercentage: percentage,
            refundPreference: refundPreference(facts.refundPreference, consumptionPercentage: percentage)))
    }

    /// The operator's preference as Apple accepts it: GRANT_PRORATED needs a
    /// consumption above 0 (Apple refuses the answer otherwise, 400, and a
    /// refused answer is not sent again); nothing consumed (or nothing
    /// delivered) prorates to the whole, GRANT_FULL.
    static func refundPreference(_ preference: ConsumptionRequest.RefundPreference?,
                                 consumptionPercentage: Int) -> ConsumptionRequest.RefundPreference? {
        if preference == .grantProrated && consumptionPercentage == 0 { return .grantFull }
        return preference
    }

    /// spent / credited in milliunits (100000 = 100 %), rounded down; 0 when
    /// nothing is known (no lot: credited before attribution began).
    static func percentageMilliunits(spent: Int64, credited: Int64) -> Int {
        guard credited > 0, spent > 0 else { return 0 }
        let clamped = min(spent, credited)
        // credited <= PointsLimits' balance bound, far below Int64.max / 100000.
        let (product, overflow) = clamped.multipliedReportingOverflow(by: Int64(ConsumptionRequest.consumptionPercentageMax))
        guard !overflow else { return Int(Double(clamped) / Double(credited) * Double(ConsumptionRequest.consumptionPercentageMax)) }
        return Int(product / credited)
    }
}
