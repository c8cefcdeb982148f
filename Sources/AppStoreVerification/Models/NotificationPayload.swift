/// A verified, decoded App Store Server Notification V2 (ResponseBodyV2DecodedPayload).
/// Exactly one of `data`, `summary`, `externalPurchaseToken`, `appData` is
/// normally present; the nested signed JWS strings are NOT verified here:
/// pass them to the verifier's other entry points.
public struct NotificationPayload: Sendable, Equatable {
    public var notificationType: NotificationType?
    public var subtype: NotificationSubtype?
    public var notificationUUID: String?
    public var version: String?
    public var signedDate: AppStoreTimestamp?
    public var data: NotificationData?
    public var summary: NotificationSummary?
    public var externalPurchaseToken: ExternalPurchaseToken?
    public var appData: NotificationAppData?
    /// The verified payload JSON exactly as signed.
    public var payloadJSON: String

    init(reader: PayloadReader, payloadJSON: String) throws(VerificationFailure) {
        notificationType = try reader.rawValue("notificationType", as: NotificationType.self)
        subtype = try reader.rawValue("subtype", as: NotificationSubtype.self)
        notificationUUID = try reader.string("notificationUUID")
        version = try reader.string("version")
        signedDate = try reader.timestamp("signedDate")
        data = try reader.object("data").map { reader throws(VerificationFailure) in
            try NotificationData(reader: reader)
        }
        summary = try reader.object("summary").map { reader throws(VerificationFailure) in
            try NotificationSummary(reader: reader)
        }
        externalPurchaseToken = try reader.object("externalPurchaseToken").map { reader throws(VerificationFailure) in
            try ExternalPurchaseToken(reader: reader)
        }
        appData = try reader.object("appData").map { reader throws(VerificationFailure) in
            try NotificationAppData(reader: reader)
        }
        self.payloadJSON = payloadJSON
    }

    /// Where Apple's library reads the app identity of a notification from:
    /// `data`, else `summary`, else `externalPurchaseToken` (environment from
    /// the `SANDBOX` prefix of its id), else `appData`.
    var appIdentity: (bundleId: String?, appAppleId: Int64?, environment: AppStoreEnvironment?) {
        if let data { return (data.bundleId, data.appAppleId, data.environment) }
        if let summary { return (summary.bundleId, summary.appAppleId, summary.environment) }
        if let token = externalPurchaseToken {
            let isSandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") == true
            return (token.bundleId, token.appAppleId, isSandbox ? .sandbox : .production)
        }
        if let appData { return (appData.bundleId, appData.appAppleId, appData.environment) }
        return (nil, nil, nil)
    }
}

/// The `data` shape: an event about one transaction/subscription.
public struct NotificationData: Sendable, Equatable {
    public var environment: AppStoreEnvironment?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var bundleVersion: String?
    /// A nested JWS; verify with `verifyTransaction`.
    public var signedTransactionInfo: String?
    /// A nested JWS; verify with `verifyRenewalInfo`.
    public var signedRenewalInfo: String?
    /// Subscription status (1 active ... 5 revoked).
    public var status: Int32?
    public var consumptionRequestReason: String?

    init(reader: PayloadReader) throws(VerificationFailure) {
        environment = try reader.rawValue("environment", as: AppStoreEnvironment.self)
        appAppleId = try reader.int64("appAppleId")
        bundleId = try reader.string("bundleId")
        bundleVersion = try reader.string("bundleVersion")
        signedTransactionInfo = try reader.string("signedTransactionInfo")
        signedRenewalInfo = try reader.string("signedRenewalInfo")
        status = try reader.int32("status")
        consumptionRequestReason = try reader.string("consumptionRequestReason")
    }
}

/// The `summary` shape: the outcome of a subscription-renewal-date extension request.
public struct NotificationSummary: Sendable, Equatable {
    public var environment: AppStoreEnvironment?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var productId: String?
    public var requestIdentifier: String?
    public var storefrontCountryCodes: [String]?
    public var succeededCount: Int64?
    public var failedCount: Int64?

    init(reader: PayloadReader) throws(VerificationFailure) {
        environment = try reader.rawValue("environment", as: AppStoreEnvironment.self)
        appAppleId = try reader.int64("appAppleId")
        bundleId = try reader.string("bundleId")
        productId = try reader.string("productId")
        requestIdentifier = try reader.string("requestIdentifier")
        storefrontCountryCodes = try reader.stringArray("storefrontCountryCodes")
        succeededCount = try reader.int64("succeededCount")
        failedCount = try reader.int64("failedCount")
    }
}

/// The `externalPurchaseToken` shape (External Purchase API).
public struct ExternalPurchaseToken: Sendable, Equatable {
    public var externalPurchaseId: String?
    public var tokenCreationDate: AppStoreTimestamp?
    public var appAppleId: Int64?
    public var bundleId: String?

    init(reader: PayloadReader) throws(VerificationFailure) {
        externalPurchaseId = try reader.string("externalPurchaseId")
        tokenCreationDate = try reader.timestamp("tokenCreationDate")
        appAppleId = try reader.int64("appAppleId")
        bundleId = try reader.string("bundleId")
    }
}

/// The `appData` shape: an event about the app itself (e.g. rescinded consent).
public struct NotificationAppData: Sendable, Equatable {
    public var appAppleId: Int64?
    public var bundleId: String?
    public var environment: AppStoreEnvironment?
    /// A nested JWS; verify with `verifyAppTransaction`.
    public var signedAppTransactionInfo: String?

    init(reader: PayloadReader) throws(VerificationFailure) {
        appAppleId = try reader.int64("appAppleId")
        bundleId = try reader.string("bundleId")
        environment = try reader.rawValue("environment", as: AppStoreEnvironment.self)
        signedAppTransactionInfo = try reader.string("signedAppTransactionInfo")
    }
}
