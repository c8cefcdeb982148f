import Foundation

/// Whose a transaction is and what it is worth: what turns a row Apple
/// told us about into one the ledger may credit (`PurchaseState.claimed`).
/// Written once; `PurchaseLifecycle.admit` decides whether a claim may be
/// written over what a row already holds.
struct PaymentClaim: Sendable, Equatable {
    var userId: UUID
    var productCode: String
    /// Catalog credits x quantity.
    var credits: Int64
    var origin: Origin

    /// Who named the owner.
    enum Origin: Sendable, Equatable {
        /// The app's verify, with the user's email identity from the
        /// gateway's verified JWT (a starter pack is granted once per identity).
        case appVerify(EmailIdentity)
        /// Apple's word (a notification, or a transaction fetched from the App
        /// Store Server API) carrying an appAccountToken this service issued.
        /// It has no email identity, so it may claim regular packs only
        /// (`AppleClaimRule`); PointsService grants those without one.
        case appAccountToken
    }

    /// The starter pack's identity: the keyed email hash and the masked
    /// address kept for support.
    struct EmailIdentity: Sendable, Equatable {
        var hash: String
        var masked: String
    }

    /// The app's claim (its verify).
    init(userId: UUID, productCode: String, credits: Int64, emailHash: String, emailMasked: String) {
        self.init(
            userId: userId, productCode: productCode, credits: credits,
            origin: .appVerify(EmailIdentity(hash: emailHash, masked: emailMasked)))
    }

    init(userId: UUID, productCode: String, credits: Int64, origin: Origin) {
        self.userId = userId
        self.productCode = productCode
        self.credits = credits
        self.origin = origin
    }

    var emailIdentity: EmailIdentity? {
        if case .appVerify(let identity) = origin { return identity }
        return nil
    }

    var isFromApp: Bool { emailIdentity != nil }
}
