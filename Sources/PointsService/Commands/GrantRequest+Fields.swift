import Contracts

/// A memberwise init of the wire message for tests and tools, as
/// `PurchaseSource+Fields` has: the service validates `GrantRequest`
/// itself (`ValidatedGrant(request:catalog:)`), with no copy between.
extension GrantRequest {
    init(
        eventId: String, userId: String, emailHash: String, productCode: String, bizId: String,
        source: Contracts.PurchaseSource? = nil, emailMasked: String = "", quantity: Int32 = 0
    ) {
        self.init()
        self.eventId = eventId
        self.userId = userId
        self.emailHash = emailHash
        self.productCode = productCode
        self.bizId = bizId
        self.source = source
        self.emailMasked = emailMasked
        self.quantity = quantity
    }
}
