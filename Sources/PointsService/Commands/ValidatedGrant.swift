import Contracts
import Foundation
import UUIDText

/// A grant whose every field passed validation, read straight from the wire
/// message (`points.proto` GrantRequest): the credits come from the
/// catalog, never the caller.
struct ValidatedGrant: Sendable {
    let eventId: String
    let userId: UUID
    let emailHash: String?
    let package: CreditPackage
    /// 1...PointsLimits.quantityMax.
    let quantity: Int32
    /// What the ledger row credits: package.credits x quantity.
    let credits: Int64
    let bizId: String
    let source: Contracts.PurchaseSource
    let emailMasked: String
    let fingerprint: String

    /// Checks every field of `request` against the rules and the catalog.
    init(request: GrantRequest, catalog: PackageCatalog) throws(PointsError) {
        let source = request.source ?? Contracts.PurchaseSource()
        eventId = try PointsValidation.eventId(request.eventId)
        userId = try PointsValidation.userId(request.userId)
        let productCode = try PointsValidation.productCode(request.productCode)
        quantity = try Self.validQuantity(request.quantity)
        bizId = try PointsValidation.text(request.bizId, field: "biz_id", maxBytes: PointsLimits.bizIdBytesMax, required: true)
        for field in source.namedFields {
            _ = try PointsValidation.text(field.value, field: field.name, maxBytes: PointsLimits.sourceFieldBytesMax, required: false)
        }
        emailMasked = try PointsValidation.emailMasked(request.emailMasked)
        guard let package = catalog.package(productCode: productCode) else { throw PointsError.productNotFound(productCode: productCode) }
        // Sold once per email identity: one unit, never several at the starter price.
        if package.kind == .starter && quantity != 1 { throw PointsError.starterPackQuantity(quantity: quantity) }
        if !source.appStoreProductId.isEmpty && source.appStoreProductId != package.appStoreProductId {
            throw PointsError.validationFailed(field: "source.app_store_product_id", problem: "does not match product_code")
        }
        if request.emailHash.isEmpty {
            guard package.kind != .starter else {
                throw PointsError.validationFailed(field: "email_hash", problem: "is required for a starter pack")
            }
            emailHash = nil
        } else {
            emailHash = try PointsValidation.emailHash(request.emailHash)
        }
        self.package = package
        self.source = source
        credits = try Self.totalCredits(package: package, quantity: quantity)
        fingerprint = Self.fingerprint(userId: userId, productCode: productCode, bizId: bizId, emailHash: emailHash,
                                       source: source, quantity: quantity)
    }

    /// 0 means 1 (a caller that predates the field); 1...quantityMax otherwise.
    static func validQuantity(_ quantity: Int32) throws(PointsError) -> Int32 {
        if quantity == 0 { return 1 }
        guard quantity >= 1, quantity <= PointsLimits.quantityMax else {
            throw PointsError.validationFailed(field: "quantity", problem: "must be 0...\(PointsLimits.quantityMax) (0 means 1)")
        }
        return quantity
    }

    /// The catalog's credits times the quantity, refused (not wrapped) past `balanceMax`.
    static func totalCredits(package: CreditPackage, quantity: Int32) throws(PointsError) -> Int64 {
        let (credits, overflow) = package.credits.multipliedReportingOverflow(by: Int64(quantity))
        guard !overflow, credits >= 0, credits <= PointsLimits.balanceMax else {
            throw PointsError.validationFailed(field: "quantity", problem: "credits x quantity would exceed \(PointsLimits.balanceMax)")
        }
        return credits
    }

    /// The request's identity for replay/conflict decisions. The quantity
    /// joins the fields only when it is not 1, so a grant stored before the
    /// field existed (its fingerprint has no quantity) is still recognised
    /// as a replay of the same purchase sent again.
    static func fingerprint(userId: UUID, productCode: String, bizId: String, emailHash: String?, source: Contracts.PurchaseSource,
                            quantity: Int32) -> String {
        var fields = [UUIDText.lowercased(userId), productCode, bizId, emailHash ?? ""] + source.namedFields.map(\.value)
        if quantity != 1 { fields.append("quantity=\(quantity)") }
        return RequestFingerprint.make(kind: "grant.v1", fields: fields)
    }
}
