/// The closed label vocabularies of the IAP metrics (see `IAPMetricNames`):
/// the services pass these raw values, the alert rules match them.
public enum IAPMetricLabels {
    /// `route` of a request no route matched.
    public static let unmatchedRoute = "unmatched"
    /// `method` of a request method outside GET, HEAD, POST, PUT, PATCH,
    /// DELETE, OPTIONS (methods are client input: bounded this way).
    public static let otherMethod = "other"
    /// The gateway's verify route, whose problems the alerts watch by code.
    public static let verifyRoute = "/api/v1/payments/apple/transactions/verify"
    /// The route Apple posts notifications to.
    public static let notificationsRoute = "/api/v1/payments/apple/notifications"
    /// `type` of a notification whose payload could not be verified.
    public static let unknownNotificationType = "unknown"
    /// `outcome` of a JWS that verified.
    public static let jwsVerified = "verified"
    /// `outcome` of an App Store Server API attempt that succeeded.
    public static let appStoreAPISucceeded = "ok"
    /// `outcome`s of App Store Server API attempts Apple refused for our
    /// key or its account (`AppStoreServerAPIError.Kind` raw values), which
    /// an alert watches with `increase()`.
    public static let appStoreAPIAuthorizationFailures = ["unauthorized", "forbidden"]

    /// The method label for a request method: itself when standard, else `other`.
    public static func method(_ method: String) -> String {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS": method
        default: otherMethod
        }
    }
}

/// `reason` of `iap_http_refusals_total`: why the gateway refused a
/// request it could have served with more capacity.
public enum RefusalReasonLabel: String, Sendable, CaseIterable {
    /// 503: the process's concurrent-request cap (MAX_CONCURRENT_REQUESTS).
    case overloaded
    /// 429: the notification route's per-address token bucket.
    case rateLimited = "rate_limited"
    /// 503: a backend was not serving, did not answer in time or was not
    /// ready (/readyz).
    case backendUnavailable = "backend_unavailable"
}

/// `step` of the saga metrics.
public enum SagaStepLabel: String, Sendable, CaseIterable {
    case grant
    case clawback
    case reversal
}

/// `statement` of the saga's group-commit metrics: saga step 1's insert of
/// new purchases, or step 3's guarded write of a step's result.
public enum SagaStatementLabel: String, Sendable, CaseIterable {
    case firstSight = "first_sight"
    case stepResult = "step_result"
}

/// `outcome` of `iap_saga_steps_total`.
public enum SagaStepOutcomeLabel: String, Sendable, CaseIterable {
    case applied
    case refused
    case deferred
    case needsOperator = "needs_operator"
    case stale
}

/// `result` of `iap_clawbacks_total`.
public enum ClawbackResultLabel: String, Sendable, CaseIterable {
    case covered
    case overdue
}

/// `outcome` of `iap_notifications_total`.
public enum NotificationOutcomeLabel: String, Sendable, CaseIterable {
    case recorded
    case duplicate
    case invalid
    case failed
}

/// `kind` of `iap_jws_verifications_total`.
public enum JWSKindLabel: String, Sendable, CaseIterable {
    case transaction
    case notification
    case renewalInfo = "renewal_info"
    case appTransaction = "app_transaction"
}

/// `result` of `iap_jws_chain_cache_lookups_total`.
public enum ChainCacheResultLabel: String, Sendable, CaseIterable {
    case hit
    case miss
}

/// `outcome` of `iap_jws_ocsp_checks_total`.
public enum OCSPCheckOutcomeLabel: String, Sendable, CaseIterable {
    case good
    case unreachable
    case refused
}

/// `endpoint` of the App Store Server API metrics: one per endpoint the
/// client calls (named as in Apple's documentation).
public enum AppStoreAPIEndpointLabel: String, Sendable, CaseIterable {
    case getTransactionInfo = "get_transaction_info"
    case getTransactionHistory = "get_transaction_history"
    case getRefundHistory = "get_refund_history"
    case getNotificationHistory = "get_notification_history"
    case requestTestNotification = "request_test_notification"
    case getTestNotificationStatus = "get_test_notification_status"
    case sendConsumptionInformation = "send_consumption_information"
    case lookUpOrderId = "look_up_order_id"
    case getAppTransactionInfo = "get_app_transaction_info"
    case setAppAccountToken = "set_app_account_token"
}

/// `environment` of the App Store Server API metrics.
public enum AppStoreEnvironmentLabel: String, Sendable, CaseIterable {
    case production
    case sandbox
}

/// `dependency` of `iap_dependency_up`.
public enum DependencyLabel: String, Sendable, CaseIterable {
    case database
    case points
    case payments
}
