import Foundation

/// A verified, decoded signed AppTransaction (the app's own purchase record).
public struct AppTransaction: Sendable, Equatable {
    /// The environment, named `receiptType` in this payload.
    public var receiptType: AppStoreEnvironment?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var applicationVersion: String?
    public var versionExternalIdentifier: Int64?
    public var receiptCreationDate: AppStoreTimestamp?
    public var originalPurchaseDate: AppStoreTimestamp?
    public var originalApplicationVersion: String?
    public var deviceVerification: String?
    public var deviceVerificationNonce: UUID?
    public var preorderDate: AppStoreTimestamp?
    public var appTransactionId: String?
    public var originalPlatform: String?
    /// The verified payload JSON exactly as signed.
    public var payloadJSON: String

    init(reader: PayloadReader, payloadJSON: String) throws(VerificationFailure) {
        receiptType = try reader.rawValue("receiptType", as: AppStoreEnvironment.self)
        appAppleId = try reader.int64("appAppleId")
        bundleId = try reader.string("bundleId")
        applicationVersion = try reader.string("applicationVersion")
        versionExternalIdentifier = try reader.int64("versionExternalIdentifier")
        receiptCreationDate = try reader.timestamp("receiptCreationDate")
        originalPurchaseDate = try reader.timestamp("originalPurchaseDate")
        originalApplicationVersion = try reader.string("originalApplicationVersion")
        deviceVerification = try reader.string("deviceVerification")
        deviceVerificationNonce = try reader.uuid("deviceVerificationNonce")
        preorderDate = try reader.timestamp("preorderDate")
        appTransactionId = try reader.string("appTransactionId")
        originalPlatform = try reader.string("originalPlatform")
        self.payloadJSON = payloadJSON
    }
}
