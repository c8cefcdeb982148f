/// Apple's word about one transaction at one signed date: it stands, or it
/// was revoked on some terms. The ledger follows the latest word (by
/// `signedDate`), whatever order the words arrive in.
enum AppleVerdict: Equatable, Sendable {
    case purchased
    case revoked(Revocation)

    var revocation: Revocation? {
        if case .revoked(let revocation) = self { return revocation }
        return nil
    }

    /// Credits of a purchase worth `credits` that this verdict leaves the user.
    func creditsKept(of credits: Int64) -> Int64 {
        guard let revocation else { return credits }
        return credits - revocation.creditsToTakeBack(of: credits)
    }
}

/// How Apple revoked a transaction: `revocationType`, `revocationPercentage`
/// (milliunits: 50000 = 50%), `revocationReason` and `revocationDate`.
struct Revocation: Equatable, Sendable {
    /// Apple's `revocationType` as sent (nil from payloads signed before Apple added it).
    var type: String?
    /// Apple's `revocationPercentage`, meaningful with REFUND_PRORATED.
    var percentageMilliunits: Int32?
    /// Why, as the ledger records it: "OTHER", "APP_ISSUE", or the type.
    var reason: String
    var dateUnixMilliseconds: Int64?

    static let percentageMilliunitsFull: Int64 = 100_000
    static let prorated = "REFUND_PRORATED"

    init(type: String?, percentageMilliunits: Int32?, revocationReason: Int32?, dateUnixMilliseconds: Int64?) {
        self.type = type
        self.percentageMilliunits = percentageMilliunits
        self.reason = Self.reasonText(revocationReason: revocationReason, type: type)
        self.dateUnixMilliseconds = dateUnixMilliseconds
    }

    init(type: String?, percentageMilliunits: Int32?, reason: String, dateUnixMilliseconds: Int64?) {
        self.type = type
        self.percentageMilliunits = percentageMilliunits
        self.reason = reason
        self.dateUnixMilliseconds = dateUnixMilliseconds
    }

    /// Credits to take back of a purchase worth `credits`. Everything, unless
    /// Apple refunded a share (REFUND_PRORATED): then that share, rounded
    /// down, so a fraction of a credit stays with the customer who paid for
    /// the rest; but a share that falls short of a whole credit by no more
    /// than Apple's own rounding of the percentage (to a milliunit: half of
    /// one in 100,000 of `credits`) is that whole credit. Apple refunds one
    /// of 3 items as 33.333 %, which is 209.99 of 630 credits: the refund
    /// is 210. FAMILY_REVOKE, REFUND_FULL, no type (older payloads) and any
    /// type Apple adds later take back everything: a revocation we do not
    /// understand must not leave paid-back credits in place.
    func creditsToTakeBack(of credits: Int64) -> Int64 {
        guard type == Self.prorated, let percentage = percentageMilliunits else { return credits }
        let share = min(max(Int64(percentage), 0), Self.percentageMilliunitsFull)
        // credits <= balanceMax (1e12) and share <= 1e5: the product fits in Int64.
        let exact = credits * share
        let (whole, fraction) = exact.quotientAndRemainder(dividingBy: Self.percentageMilliunitsFull)
        // Short of whole + 1 by (full - fraction) / full credits; Apple's
        // rounding moves the product by at most credits / 2 of those units.
        if fraction > 0 && (Self.percentageMilliunitsFull - fraction) * 2 <= credits { return whole + 1 }
        return whole
    }

    static func reasonText(revocationReason: Int32?, type: String?) -> String {
        switch revocationReason {
        case 0: return "OTHER"
        case 1: return "APP_ISSUE"
        case let code?: return "REASON_\(code)"
        case nil: return type ?? "REFUND"
        }
    }
}
