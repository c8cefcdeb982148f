import Foundation

/// A request to credit one purchase (points.proto GrantRequest), as the
/// caller sent it. `validated(catalog:)` turns it into a `ValidatedGrant`.
public struct GrantCommand: Sendable, Equatable {
    public var eventId: String
    public var userId: String
    public var emailHash: String
    public var productCode: String
    public var bizId: String
    public var source: PurchaseSource
    public var emailMasked: String

    public init(eventId: String, userId: String, emailHash: String, productCode: String, bizId: String,
                source: PurchaseSource = PurchaseSource(), emailMasked: String = "") {
        self.eventId = eventId
        self.userId = userId
        self.emailHash = emailHash
        self.productCode = productCode
        self.bizId = bizId
        self.source = source
        self.emailMasked = emailMasked
    }

    /// Checks every field; the credits come from the catalog, never the caller.
    func validated(catalog: PackageCatalog) throws(PointsError) -> ValidatedGrant {
        let eventId = try PointsValidation.eventId(eventId)
        let userId = try PointsValidation.userId(userId)
        let productCode = try PointsValidation.productCode(productCode)
        let bizId = try PointsValidation.text(bizId, field: "biz_id", maxBytes: PointsLimits.bizIdBytesMax, required: true)
        for field in source.namedFields {
            _ = try PointsValidation.text(field.value, field: field.name, maxBytes: PointsLimits.sourceFieldBytesMax, required: false)
        }
        let emailMasked = try PointsValidation.emailMasked(emailMasked)
        guard let package = catalog.package(productCode: productCode) else { throw PointsError.productNotFound(productCode: productCode) }
        if !source.appStoreProductId.isEmpty && source.appStoreProductId != package.appStoreProductId {
            throw PointsError.validationFailed(field: "source.app_store_product_id", problem: "does not match product_code")
        }
        let validEmailHash: String?
        if emailHash.isEmpty {
            guard package.kind != .starter else {
                throw PointsError.validationFailed(field: "email_hash", problem: "is required for a starter pack")
            }
            validEmailHash = nil
        } else {
            validEmailHash = try PointsValidation.emailHash(emailHash)
        }
        let fingerprint = RequestFingerprint.make(
            kind: "grant.v1",
            fields: [userId.uuidString.lowercased(), productCode, bizId, validEmailHash ?? ""] + source.namedFields.map(\.value))
        return ValidatedGrant(eventId: eventId, userId: userId, emailHash: validEmailHash, package: package, bizId: bizId,
                              source: source, emailMasked: emailMasked, fingerprint: fingerprint)
    }
}

/// A grant whose every field passed validation.
struct ValidatedGrant: Sendable {
    let eventId: String
    let userId: UUID
    let emailHash: String?
    let package: CreditPackage
    let bizId: String
    let source: PurchaseSource
    let emailMasked: String
    let fingerprint: String
}
