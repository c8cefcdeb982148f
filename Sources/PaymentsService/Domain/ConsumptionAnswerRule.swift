import AppStoreServerAPI

/// Whether and what to answer Apple's CONSUMPTION_REQUEST (Send Consumption
/// Information v2), decided from facts gathered beforehand; pure.
enum ConsumptionAnswerRule {
    /// Apple accepts an answer for 12 hours after its CONSUMPTION_REQUEST.
    static let answerWindowMilliseconds: Int64 = 12 * 3_600_000
    /// A purchase whose grant is still owed (the saga is retrying it: a
    /// PointsService outage) waits for the grant while more than this is
    /// left of Apple's window; then it is answered as undelivered for a
    /// server outage.
    static let owedGrantWaitsWhileMillisecondsLeft: Int64 = 3_600_000

    /// What the ledger knows about the purchase's credits (PointsService's
    /// credit lot); nil fields when PointsService has no lot for it.
    struct Facts: Sendable, Equatable {
        var enabled: Bool
        /// The user's stored consent; nil when the purchase has no owner
        /// or the owner never said.
        var consented: Bool?
        /// True once the purchase's grant was applied.
        var delivered: Bool
        /// True while the grant is owed and not applied (the saga retries it).
        var grantOwed = false
        /// What is left of Apple's answer window.
        var windowLeftMilliseconds: Int64 = ConsumptionAnswerRule.answerWindowMilliseconds
        var credited: Int64?
        var spent: Int64?
        var refundPreference: ConsumptionRequest.RefundPreference?
        /// The operator's word (`CONSUMPTION_SAMPLE_CONTENT_PROVIDED`).
        var sampleContentProvided = false
    }

    enum Decision: Sendable, Equatable {
        case send(ConsumptionRequest)
        /// Nothing is sent, for good; the reason is stored.
        case skip(reason: String)
        /// Nothing is sent yet: asked again at the next retry.
        case postpone(reason: String)
    }

    static func decide(_ facts: Facts) -> Decision {
        guard facts.enabled else { return .skip(reason: "disabled") }
        guard facts.consented == true else { return .skip(reason: "no_consent") }
        // Credits are delivered the moment the grant is applied. One still
        // owed is waited for (it may land in a moment), until the window is
        // nearly over: then it was not delivered because our side was down.
        // A purchase not credited otherwise (not claimed, refused) was not
        // delivered for a reason other than quality or the wrong item.
        let deliveryStatus: ConsumptionRequest.DeliveryStatus
        if facts.delivered {
            deliveryStatus = .delivered
        } else if facts.grantOwed {
            guard facts.windowLeftMilliseconds <= owedGrantWaitsWhileMillisecondsLeft else {
                return .postpone(reason: "grant_owed")
            }
            deliveryStatus = .undeliveredServerOutage
        } else {
            deliveryStatus = .undeliveredOther
        }
        // Apple wants 0 for anything not delivered; a delivered purchase
        // whose credit lot is unknown (credited before attribution began)
        // has no share to tell, so none is claimed (nor "nothing consumed").
        let percentage: Int?
        if !facts.delivered {
            percentage = 0
        } else if let credited = facts.credited {
            percentage = percentageMilliunits(spent: facts.spent ?? 0, credited: credited)
        } else {
            percentage = nil
        }
        return .send(
            ConsumptionRequest(
                customerConsented: true, deliveryStatus: deliveryStatus,
                sampleContentProvided: facts.sampleContentProvided, consumptionPercentage: percentage,
                refundPreference: refundPreference(facts.refundPreference, consumptionPercentage: percentage)))
    }

    /// The operator's preference as Apple accepts it: GRANT_PRORATED needs a
    /// consumption above 0 and below 100000 (Apple refuses the answer
    /// otherwise, 400, and a refused answer is not sent again). Prorated by
    /// what is left unconsumed, nothing consumed (or nothing delivered) is
    /// the whole, GRANT_FULL, and everything consumed is nothing, DECLINE;
    /// with no share known there is nothing to prorate by, and no
    /// preference is sent.
    static func refundPreference(
        _ preference: ConsumptionRequest.RefundPreference?,
        consumptionPercentage: Int?
    ) -> ConsumptionRequest.RefundPreference? {
        guard preference == .grantProrated else { return preference }
        switch consumptionPercentage {
        case nil: return nil
        case 0: return .grantFull
        case ConsumptionRequest.consumptionPercentageMax: return .decline
        default: return preference
        }
    }

    /// spent / credited in milliunits (100000 = 100 %), rounded down; 0 when
    /// nothing is known (no lot: credited before attribution began).
    static func percentageMilliunits(spent: Int64, credited: Int64) -> Int {
        guard credited > 0, spent > 0 else { return 0 }
        let clamped = min(spent, credited)
        // credited <= PointsLimits' balance bound, far below Int64.max / 100000.
        let (product, overflow) = clamped.multipliedReportingOverflow(
            by: Int64(ConsumptionRequest.consumptionPercentageMax))
        guard !overflow else {
            return Int(Double(clamped) / Double(credited) * Double(ConsumptionRequest.consumptionPercentageMax))
        }
        return Int(product / credited)
    }
}
