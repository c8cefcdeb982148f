import Contracts
import Foundation
import UUIDText

/// A grant whose every field passed validation, read straight from the wire
/// message (`points.proto` GrantRequest): its `Identity` (`grant.eventId`,
/// `grant.fingerprint`, ... read through to it) and what the catalog says
/// of it. The credits come from the catalog, never the caller.
@dynamicMemberLookup
struct ValidatedGrant: Sendable {
    let identity: Identity
    let package: CreditPackage
    /// What the ledger row credits: package.credits x quantity.
    let credits: Int64

    subscript<Value>(dynamicMember field: KeyPath<Identity, Value>) -> Value { identity[keyPath: field] }

    /// What identifies a grant, checked without the catalog: its fields'
    /// rules and its fingerprint. A grant the catalog refuses now is first
    /// looked up by this (`PointsStore.grant`): one credited before (its
    /// reply lost, then the catalog changed) is answered as a replay.
    struct Identity: Sendable {
        let eventId: String
        let userId: UUID
        let productCode: String
        let emailHash: String?
        /// 1...PointsLimits.quantityMax.
        let quantity: Int32
        let bizId: String
        let source: Contracts.PurchaseSource
        let emailMasked: String
        let fingerprint: String

        init(request: GrantRequest) throws(PointsError) {
            let source = request.source ?? Contracts.PurchaseSource()
            eventId = try PointsValidation.eventId(request.eventId)
            userId = try PointsValidation.userId(request.userId)
            productCode = try PointsValidation.productCode(request.productCode)
            quantity = try ValidatedGrant.validQuantity(request.quantity)
            bizId = try PointsValidation.text(
                request.bizId, field: "biz_id", maxBytes: PointsLimits.bizIdBytesMax, required: true)
            for field in source.namedFields {
                _ = try PointsValidation.text(
                    field.value, field: field.name, maxBytes: PointsLimits.sourceFieldBytesMax, required: false)
            }
            emailMasked = try PointsValidation.emailMasked(request.emailMasked)
            emailHash = request.emailHash.isEmpty ? nil : try PointsValidation.emailHash(request.emailHash)
            self.source = source
            fingerprint = ValidatedGrant.fingerprint(
                userId: userId, productCode: productCode, bizId: bizId, emailHash: emailHash,
                source: source, quantity: quantity)
        }
    }

    /// Checks every field of `request` against the rules and the catalog.
    init(request: GrantRequest, catalog: PackageCatalog) throws(PointsError) {
        try self.init(Identity(request: request), catalog: catalog)
    }

    /// Checks an identified grant against the catalog.
    init(_ identity: Identity, catalog: PackageCatalog) throws(PointsError) {
        guard let package = catalog.package(productCode: identity.productCode) else {
            throw PointsError.productNotFound(productCode: identity.productCode)
        }
        // Sold once per email identity: one unit, never several at the starter price.
        if package.kind == .starter && identity.quantity != 1 {
            throw PointsError.starterPackQuantity(quantity: identity.quantity)
        }
        if !identity.source.appStoreProductId.isEmpty && identity.source.appStoreProductId != package.appStoreProductId
        {
            throw PointsError.validationFailed(
                field: "source.app_store_product_id", problem: "does not match product_code")
        }
        if identity.emailHash == nil && package.kind == .starter {
            throw PointsError.validationFailed(field: "email_hash", problem: "is required for a starter pack")
        }
        self.identity = identity
        self.package = package
        credits = try Self.totalCredits(package: package, quantity: identity.quantity)
    }

    /// 0 means 1 (a caller that predates the field); 1...quantityMax otherwise.
    static func validQuantity(_ quantity: Int32) throws(PointsError) -> Int32 {
        if quantity == 0 { return 1 }
        guard quantity >= 1, quantity <= PointsLimits.quantityMax else {
            throw PointsError.validationFailed(
                field: "quantity", problem: "must be 0...\(PointsLimits.quantityMax) (0 means 1)")
        }
        return quantity
    }

    /// The catalog's credits times the quantity, refused (not wrapped) past `balanceMax`.
    static func totalCredits(package: CreditPackage, quantity: Int32) throws(PointsError) -> Int64 {
        let (credits, overflow) = package.credits.multipliedReportingOverflow(by: Int64(quantity))
        guard !overflow, credits >= 0, credits <= PointsLimits.balanceMax else {
            throw PointsError.validationFailed(
                field: "quantity", problem: "credits x quantity would exceed \(PointsLimits.balanceMax)")
        }
        return credits
    }

    /// The request's identity for replay/conflict decisions. The quantity
    /// joins the fields only when it is not 1, so a grant stored before the
    /// field existed (its fingerprint has no quantity) is still recognised
    /// as a replay of the same purchase sent again.
    static func fingerprint(
        userId: UUID, productCode: String, bizId: String, emailHash: String?, source: Contracts.PurchaseSource,
        quantity: Int32
    ) -> String {
        var fields =
            [UUIDText.lowercased(userId), productCode, bizId, emailHash ?? ""] + source.namedFields.map(\.value)
        if quantity != 1 { fields.append("quantity=\(quantity)") }
        return RequestFingerprint.make(kind: "grant.v1", fields: fields)
    }
}
