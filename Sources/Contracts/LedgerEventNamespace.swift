/// The event-id namespaces of the ledger's own movements: PaymentsService's
/// purchases, refunds and refund reversals, and operator adjustments. Event
/// ids are unique across every kind of ledger movement, so a Spend or
/// ReverseSpend caller may not use these (PointsService refuses them): a
/// spend under `refund.apple_iap:<transaction id>` would take the id of that
/// purchase's clawback, which would then be refused as a conflict on every
/// retry, and the refund never taken back
/// (docs/protocols/payments/apple-iap-protocol.md, section 6).
public enum LedgerEventNamespace {
    /// `payment.apple_iap:<transaction id>`: a purchase's grant.
    public static let purchase = "payment."
    /// `refund.apple_iap:<transaction id>[:<cycle>]`: a clawback.
    public static let refund = "refund."
    /// `refund_reversed.apple_iap:<transaction id>[:<cycle>]`: a clawback's reversal.
    public static let refundReversal = "refund_reversed."
    /// `adjust:<hash>`: an operator's adjustment with a derived id.
    public static let adjustment = "adjust:"

    /// Every namespace above.
    public static let reserved = [purchase, refund, refundReversal, adjustment]

    /// Whether `eventId` lies in one of the ledger's own namespaces.
    public static func isReserved(_ eventId: String) -> Bool {
        reserved.contains { eventId.hasPrefix($0) }
    }
}
