/// One purchase's credit lot (`credit_lots`): what it credited and where
/// those credits went. `nil` from the store when the purchase has no lot
/// (never credited, or credited before attribution began).
public struct PurchaseConsumption: Sendable, Equatable {
    public let credited: Int64
    /// Taken by spends (net of reversed spends), and by a clawback of
    /// another purchase in place of that purchase's spent credits
    /// (`CreditLots.spentElsewhere`): those paid for what was used.
    public let spent: Int64
    public let remaining: Int64

    /// Taken back other than by spending: a refund's clawback or an
    /// operator's negative adjustment (the lot's invariant keeps it >= 0).
    public var clawedBack: Int64 { credited - spent - remaining }

    public init(credited: Int64, spent: Int64, remaining: Int64) {
        precondition(
            credited >= 0 && spent >= 0 && remaining >= 0 && spent + remaining <= credited,
            "a credit lot breaks remaining + spent <= credited")
        self.credited = credited
        self.spent = spent
        self.remaining = remaining
    }
}
