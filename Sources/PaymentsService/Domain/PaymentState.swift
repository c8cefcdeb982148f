/// The part of an `apple_iap_transactions` row that the saga decides on.
struct PaymentState: Equatable, Sendable {
    var status: PaymentStatus
    var pendingAction: PendingAction?
    /// Set when Apple has refunded or revoked the transaction.
    var revoked: Bool
    var failureCode: String?
    var overdueAmount: Int64

    init(status: PaymentStatus, pendingAction: PendingAction? = nil, revoked: Bool = false, failureCode: String? = nil, overdueAmount: Int64 = 0) {
        self.status = status
        self.pendingAction = pendingAction
        self.revoked = revoked
        self.failureCode = failureCode
        self.overdueAmount = overdueAmount
    }

    /// A freshly verified purchase whose grant is owed.
    static let newlyVerified = PaymentState(status: .verified, pendingAction: .grant)
}
