import StrictJSON

/// Get Notification History's body (`NotificationHistoryRequest`):
/// `startDate` and `endDate` (UNIX milliseconds) are required; optionally one
/// `notificationType` (with an optional `notificationSubtype`) or one
/// `transactionId` (Apple refuses both: MultipleFiltersSupplied), and
/// `onlyFailures`. History covers 180 days in production, 30 in sandbox.
/// Follow-up pages send the same body with `paginationToken` in the query.
public struct NotificationHistoryRequest: Sendable, Equatable {
    public var startDate: Int64
    public var endDate: Int64
    public var notificationType: String?
    public var notificationSubtype: String?
    public var transactionId: String?
    public var onlyFailures: Bool?

    public init(
        startDate: Int64, endDate: Int64, notificationType: String? = nil, notificationSubtype: String? = nil,
        transactionId: String? = nil, onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }

    var json: JSONValue {
        var object = JSONObject()
        object.insert("startDate", .integer(startDate))
        object.insert("endDate", .integer(endDate))
        object.insertIfPresent("notificationType", notificationType.map(JSONValue.string))
        object.insertIfPresent("notificationSubtype", notificationSubtype.map(JSONValue.string))
        object.insertIfPresent("transactionId", transactionId.map(JSONValue.string))
        object.insertIfPresent("onlyFailures", onlyFailures.map(JSONValue.bool))
        return .object(object)
    }
}

/// One attempt Apple made to deliver a notification (`sendAttemptItem`:
/// `attemptDate`, `sendAttemptResult` such as SUCCESS, TIMED_OUT, TLS_ISSUE).
public struct SendAttempt: Sendable, Equatable {
    public var attemptDate: Int64?
    public var sendAttemptResult: String?
}

/// One record of `notificationHistory` (`notificationHistoryResponseItem`):
/// the notification exactly as sent (`signedPayload`) and up to six attempts.
public struct NotificationHistoryItem: Sendable, Equatable {
    public var signedPayload: String
    public var sendAttempts: [SendAttempt]
}

/// A page of notification history (`NotificationHistoryResponse`: at most
/// 20 records, oldest first, `hasMore`, `paginationToken`).
public struct NotificationHistoryPage: Sendable, Equatable {
    public var notificationHistory: [NotificationHistoryItem]
    public var hasMore: Bool
    public var paginationToken: String?
}

/// Get Test Notification Status's answer (`CheckTestNotificationResponse`):
/// the TEST notification as sent and Apple's attempts to deliver it.
public struct TestNotificationStatus: Sendable, Equatable {
    public var signedPayload: String?
    public var sendAttempts: [SendAttempt]
}

extension SendAttempt {
    init(_ value: JSONValue) throws(AppStoreServerAPIError) {
        let reader = try ResponseReader(value, what: "sendAttempts[]")
        attemptDate = try reader.int64("attemptDate")
        sendAttemptResult = try reader.string("sendAttemptResult")
    }

    static func list(_ reader: ResponseReader) throws(AppStoreServerAPIError) -> [SendAttempt] {
        var attempts: [SendAttempt] = []
        for element in try reader.array("sendAttempts") { attempts.append(try SendAttempt(element)) }
        return attempts
    }
}
