/// A clawback that could not take back all it asked for (its purchase had
/// been spent: the rest was recorded as overdue) and is not reversed, with
/// what it is still owed: its overdue at clawback time less what spend
/// reversals have settled since (`OverdueSettlement`).
struct OwedClawback: Equatable, Sendable {
    /// The clawback's ledger event, e.g. "refund.apple_iap:2000000847061981".
    let clawbackEventId: String
    /// The purchase it takes back: the lot a spend reversal may give credits to.
    let purchaseEventId: String
    /// The clawback row's biz_id (PaymentsService's payment record id).
    let bizId: String
    let outstanding: Int64
}

/// Credits a spend reversal gives back to a purchase's lot while that
/// purchase's clawback is still owed credits: they go to the clawback
/// instead of to the user (docs/ARCHITECTURE.md, "The ledger write path").
/// The spend that is given back is what kept the clawback from taking
/// them, so undoing it lets the clawback take them now; credits given back
/// to any other lot are restored as usual (collecting overdue from other
/// credits is a product decision PRD 7.4 defers).
struct OverdueSettlement: Equatable, Sendable {
    let clawbackEventId: String
    let purchaseEventId: String
    let bizId: String
    /// What the clawback was owed before this settlement.
    let outstandingBefore: Int64
    let amount: Int64

    var outstandingAfter: Int64 { outstandingBefore - amount }

    /// One settlement per restored share whose lot's purchase has an owed
    /// clawback: min(restored, outstanding). Pure; `restored` are the
    /// shares a reversal gave back (one per lot), `owed` the clawbacks
    /// found for those lots (at most one unreversed per purchase).
    static func plan(restored: [LotShare], owed: [OwedClawback]) -> [OverdueSettlement] {
        precondition(
            restored.allSatisfy { $0.amount >= 0 } && owed.allSatisfy { $0.outstanding >= 0 }, "negative amount")
        precondition(Set(owed.map(\.purchaseEventId)).count == owed.count, "two unreversed clawbacks of one purchase")
        return restored.compactMap { share in
            guard let clawback = owed.first(where: { $0.purchaseEventId == share.sourceEventId }),
                clawback.outstanding > 0,
                share.amount > 0
            else { return nil }
            return OverdueSettlement(
                clawbackEventId: clawback.clawbackEventId, purchaseEventId: clawback.purchaseEventId,
                bizId: clawback.bizId, outstandingBefore: clawback.outstanding,
                amount: min(share.amount, clawback.outstanding))
        }
    }

    /// The settlement's own ledger event id: in the refunds' namespace
    /// (`LedgerEventNamespace.refund`, which no Spend caller or operator may
    /// use), one per spend reversal and clawback, at a fixed length.
    static func eventId(spendReversalEventId: String, clawbackEventId: String) -> String {
        eventIdPrefix
            + RequestFingerprint.make(kind: "refund_settlement.id.v1", fields: [spendReversalEventId, clawbackEventId])
    }

    static let eventIdPrefix = "refund.settlement:"
}
