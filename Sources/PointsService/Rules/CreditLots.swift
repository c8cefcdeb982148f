/// Where a user's credits came from: one lot per source that added credits
/// (a purchase, an operator's credit, or the balance an account held before
/// attribution began), with what is left of it. The lots' `remaining` always
/// add up to the balance; every movement that takes credits records which
/// lots it took from, so giving them back restores exactly those.
struct CreditLot: Equatable, Sendable {
    /// The ledger event that added the credits, e.g. "payment.apple_iap:2000000847061981".
    let sourceEventId: String
    let remaining: Int64
}

/// How much one movement takes from (or gives back to) one lot.
struct LotShare: Equatable, Sendable {
    let sourceEventId: String
    let amount: Int64
}

/// The attribution rule, pure: credits are taken oldest lot first (FIFO),
/// so the oldest purchase is spent first and the share of each purchase
/// already spent is known (Apple's consumption answer and support use it).
/// A clawback takes first from its own purchase's lot, then oldest first:
/// the user pays a refund back with what is left of that purchase before
/// anything else; what it takes of other lots for the purchase's spent
/// credits counts as spent from them (`spentElsewhere`).
enum CreditLots {
    /// Shares of `amount` from `lots` (given oldest first), starting with
    /// the lot of `preferred` when it is among them. Precondition: the lots
    /// hold at least `amount` (the balance does, and they add up to it).
    static func take(_ amount: Int64, from lots: [CreditLot], preferring preferred: String? = nil) -> [LotShare] {
        precondition(amount >= 0, "a negative take")
        var ordered = lots.filter { $0.remaining > 0 }
        if let preferred, let index = ordered.firstIndex(where: { $0.sourceEventId == preferred }) {
            ordered.insert(ordered.remove(at: index), at: 0)
        }
        var left = amount
        var shares: [LotShare] = []
        for lot in ordered where left > 0 {
            let share = min(lot.remaining, left)
            shares.append(LotShare(sourceEventId: lot.sourceEventId, amount: share))
            left -= share
        }
        precondition(left == 0, "the lots hold less than the balance: \(amount - left) of \(amount)")
        return shares
    }

    /// What a clawback of `purchase` took from other lots in place of its
    /// purchase's spent credits, counted as spent from those lots: the
    /// other shares of `taken`, in order, up to `purchaseSpent` (what had
    /// been spent of the purchase). P1 (100, all spent) refunded while P2
    /// (210) is untouched: the clawback takes 100 of P2, and those 100 paid
    /// for what was used, so P2's consumption says 100 spent, not 0. Credits
    /// taken from others beyond that (the purchase's own lot had lost
    /// credits otherwise, e.g. to a negative adjustment) are not spending.
    static func spentElsewhere(taken: [LotShare], purchase: String, purchaseSpent: Int64) -> [LotShare] {
        precondition(purchaseSpent >= 0, "a negative spent figure")
        var left = purchaseSpent
        var shares: [LotShare] = []
        for share in taken where share.sourceEventId != purchase && left > 0 && share.amount > 0 {
            let part = min(share.amount, left)
            shares.append(LotShare(sourceEventId: share.sourceEventId, amount: part))
            left -= part
        }
        return shares
    }
}
