import AppStoreVerification
import Foundation

/// Whether Apple's word alone (a notification such as ONE_TIME_CHARGE, or a
/// transaction fetched from the App Store Server API) may claim a
/// transaction for a user, so the ledger credits it without the app. Pure:
/// the caller looks up the token's owner and the catalog entry first.
///
/// Apple's word names a user only through an appAccountToken this service
/// issued (`app_account_tokens`); everything else the app's verify checks
/// must hold too: a consumable, StoreKit's quantity bound, the Sandbox
/// credit policy, a product the catalog has. A starter pack is never
/// claimed here: PointsService grants it once per email identity, and only
/// the app's verify carries the user's email hash, so it waits for the app.
/// A transaction the rule leaves unclaimed is recorded `received` (with the
/// token's owner when known) for reconciliation and support.
enum AppleClaimRule {
    /// The catalog entry of the transaction's App Store product.
    struct Product: Equatable, Sendable {
        var productCode: String
        var credits: Int64
        /// True for a starter pack (or any kind but `regular`): PointsService
        /// needs the email identity to grant it.
        var needsEmailIdentity: Bool
    }

    enum ProductLookup: Equatable, Sendable {
        case found(Product)
        case notInCatalog
        /// PointsService (the catalog's owner) could not be asked and no copy is cached.
        case catalogUnavailable
    }

    /// Whom the transaction's appAccountToken names.
    enum TokenOwner: Equatable, Sendable {
        /// The transaction carries no appAccountToken.
        case none
        /// A token this service never issued.
        case unknown
        case user(UUID)
    }

    enum Decision: Equatable, Sendable {
        case claim(PaymentClaim)
        case unclaimed(Reason)
    }

    /// Why Apple's word did not claim the transaction (stable codes: they
    /// become the notification's recorded outcome, `received_<code>`).
    enum Reason: String, Sendable, CaseIterable {
        case noAccountToken = "no_account_token"
        case unknownAccountToken = "unknown_account_token"
        case environmentNotCredited = "environment_not_credited"
        case notConsumable = "not_consumable"
        case quantityInvalid = "quantity_invalid"
        case productNotInCatalog = "product_not_in_catalog"
        case catalogUnavailable = "catalog_unavailable"
        case starterPackNeedsApp = "starter_pack_needs_app"
    }

    /// Apple's `type` of a consumable.
    static let consumableType = "Consumable"

    static func decide(
        owner: TokenOwner, environment: AppStoreEnvironment, type: String?, quantity: Int32?, product: ProductLookup,
        policy: SandboxCreditPolicy
    ) -> Decision {
        let user: UUID
        switch owner {
        case .none: return .unclaimed(.noAccountToken)
        case .unknown: return .unclaimed(.unknownAccountToken)
        case .user(let id): user = id
        }
        guard policy.decide(environment: environment, userId: user) == .credit else {
            return .unclaimed(.environmentNotCredited)
        }
        // Fails closed, as verify does: no `type`, no known consumable.
        guard type == consumableType else { return .unclaimed(.notConsumable) }
        let quantity = quantity ?? 1
        guard (1...PaymentsLimits.quantityMax).contains(quantity) else { return .unclaimed(.quantityInvalid) }
        let found: Product
        switch product {
        case .found(let entry): found = entry
        case .notInCatalog: return .unclaimed(.productNotInCatalog)
        case .catalogUnavailable: return .unclaimed(.catalogUnavailable)
        }
        guard !found.needsEmailIdentity else { return .unclaimed(.starterPackNeedsApp) }
        let (credits, overflow) = found.credits.multipliedReportingOverflow(by: Int64(quantity))
        guard !overflow, credits > 0 else { return .unclaimed(.quantityInvalid) }
        return .claim(
            PaymentClaim(userId: user, productCode: found.productCode, credits: credits, origin: .appAccountToken))
    }
}
