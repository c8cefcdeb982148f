/// Everything PaymentsService exports: its RPCs and calls to PointsService,
/// its database, the saga, refunds, Apple's notifications and signed data,
/// the App Store Server API, and the process.
///
/// The series the alerts watch with `increase()` or `rate()` are created at
/// zero here (every step and outcome, both clawback results, the failed
/// and invalid notifications of every type, the App Store Server API's
/// authorization failures by endpoint and environment), so the first event
/// after a start is seen: a series that appears at 1 has no earlier sample
/// for `increase()` to measure from.
public struct PaymentsMetrics: Sendable {
    public let rpcServer: RPCServerMetrics
    public let rpcClient: RPCClientMetrics
    public let database: DatabasePoolMetrics
    public let dependencies: DependencyMetrics
    public let certificates: CertificateExpiryMetrics
    public let sagaSteps: Counter
    public let sagaStepRetries: Counter
    public let sagaStuckRows: Gauge
    public let sagaOldestOwedStepAge: Gauge
    public let sagaWritesPerCommit: Histogram
    public let sagaWriteBatchesFailed: Counter
    public let clawbacks: Counter
    public let overdueCredits: Counter
    public let catalogMissingProducts: Counter
    public let notifications: Counter
    public let jwsVerifications: Counter
    public let jwsChainCacheLookups: Counter
    public let jwsOCSPChecks: Counter
    public let jwsOCSPHeldAnswersUsed: Counter
    public let appStoreAPIRequests: Counter
    public let appStoreAPIRequestDuration: Histogram

    /// `notificationTypes`: the notificationType raw values whose failed and
    /// invalid series start at zero (`IAPMetricLabels.unknownNotificationType`
    /// is always among them).
    public init(
        registry: MetricsRegistry, notificationTypes: [String] = [],
        processSampler: @escaping @Sendable () -> ProcessSample? = ProcessSample.current
    ) throws(MetricsRegistrationError) {
        rpcServer = try RPCServerMetrics(registry: registry)
        rpcClient = try RPCClientMetrics(registry: registry)
        database = try DatabasePoolMetrics(registry: registry)
        dependencies = try DependencyMetrics(registry: registry, dependencies: [.database])
        certificates = try CertificateExpiryMetrics(registry: registry)
        sagaSteps = try registry.makeCounter(IAPMetricNames.sagaSteps)
        sagaStepRetries = try registry.makeCounter(IAPMetricNames.sagaStepRetries)
        sagaStuckRows = try registry.makeGauge(IAPMetricNames.sagaStuckRows)
        sagaOldestOwedStepAge = try registry.makeGauge(IAPMetricNames.sagaOldestOwedStepAge)
        sagaWritesPerCommit = try registry.makeHistogram(IAPMetricNames.sagaWritesPerCommit)
        sagaWriteBatchesFailed = try registry.makeCounter(IAPMetricNames.sagaWriteBatchesFailed)
        clawbacks = try registry.makeCounter(IAPMetricNames.clawbacks)
        overdueCredits = try registry.makeCounter(IAPMetricNames.overdueCredits)
        catalogMissingProducts = try registry.makeCounter(IAPMetricNames.catalogMissingProducts)
        notifications = try registry.makeCounter(IAPMetricNames.notifications)
        jwsVerifications = try registry.makeCounter(IAPMetricNames.jwsVerifications)
        jwsChainCacheLookups = try registry.makeCounter(IAPMetricNames.jwsChainCacheLookups)
        jwsOCSPChecks = try registry.makeCounter(IAPMetricNames.jwsOCSPChecks)
        jwsOCSPHeldAnswersUsed = try registry.makeCounter(IAPMetricNames.jwsOCSPHeldAnswersUsed)
        appStoreAPIRequests = try registry.makeCounter(IAPMetricNames.appStoreAPIRequests)
        appStoreAPIRequestDuration = try registry.makeHistogram(IAPMetricNames.appStoreAPIRequestDuration)
        try ProcessMetrics.register(in: registry, sampler: processSampler)

        for step in SagaStepLabel.allCases {
            for outcome in SagaStepOutcomeLabel.allCases { _ = sagaSteps.labels(step.rawValue, outcome.rawValue) }
            _ = sagaStepRetries.labels(step.rawValue)
            sagaStuckRows.labels(step.rawValue).set(0)
        }
        for statement in SagaStatementLabel.allCases { _ = sagaWriteBatchesFailed.labels(statement.rawValue) }
        for result in ClawbackResultLabel.allCases { _ = clawbacks.labels(result.rawValue) }
        for result in ChainCacheResultLabel.allCases { _ = jwsChainCacheLookups.labels(result.rawValue) }
        for outcome in OCSPCheckOutcomeLabel.allCases { _ = jwsOCSPChecks.labels(outcome.rawValue) }
        _ = jwsOCSPHeldAnswersUsed.labels()
        for type in [IAPMetricLabels.unknownNotificationType] + notificationTypes {
            for outcome in [NotificationOutcomeLabel.failed, .invalid] {
                _ = notifications.labels(type, outcome.rawValue)
            }
        }
        for endpoint in AppStoreAPIEndpointLabel.allCases {
            for environment in AppStoreEnvironmentLabel.allCases {
                for outcome in IAPMetricLabels.appStoreAPIAuthorizationFailures {
                    _ = appStoreAPIRequests.labels(endpoint.rawValue, environment.rawValue, outcome)
                }
            }
        }
    }

    /// A ledger step finished with `outcome`; `isRetry` when it was not the
    /// step's first attempt.
    public func recordSagaStep(_ step: SagaStepLabel, _ outcome: SagaStepOutcomeLabel, isRetry: Bool) {
        sagaSteps.labels(step.rawValue, outcome.rawValue).increment()
        if isRetry { sagaStepRetries.labels(step.rawValue).increment() }
    }

    /// One of the saga's happy-path statements: how many purchases it
    /// carried, and whether it failed as a whole.
    public func recordSagaCommit(_ statement: SagaStatementLabel, writes: Int, failed: Bool) {
        sagaWritesPerCommit.labels(statement.rawValue).observe(Double(writes))
        if failed { sagaWriteBatchesFailed.labels(statement.rawValue).increment() }
    }

    /// The saga worker's periodic count: rows past the stuck threshold by
    /// step owed (missing steps are 0), and the oldest owed step's age.
    public func updateStuck(rows: [SagaStepLabel: Int], oldestOwedStepAgeSeconds: Double) {
        for step in SagaStepLabel.allCases { sagaStuckRows.labels(step.rawValue).set(Double(rows[step] ?? 0)) }
        sagaOldestOwedStepAge.set(oldestOwedStepAgeSeconds)
    }

    /// A clawback PointsService applied, with the credits it could not deduct.
    public func recordClawback(overdueCredits overdue: Int) {
        precondition(overdue >= 0)
        clawbacks.labels((overdue > 0 ? ClawbackResultLabel.overdue : .covered).rawValue).increment()
        if overdue > 0 { overdueCredits.increment(by: Double(overdue)) }
    }

    /// A notification delivery: `type` is Apple's notificationType raw value
    /// (`IAPMetricLabels.unknownNotificationType` when not verified).
    public func recordNotification(type: String, _ outcome: NotificationOutcomeLabel) {
        notifications.labels(type, outcome.rawValue).increment()
    }

    /// A JWS verification: `failureCode` nil when it verified, else the
    /// `VerificationFailure.code`.
    public func recordJWSVerification(_ kind: JWSKindLabel, failureCode: String?) {
        jwsVerifications.labels(kind.rawValue, failureCode ?? IAPMetricLabels.jwsVerified).increment()
    }

    /// A certificate-chain cache lookup.
    public func recordChainCacheLookup(hit: Bool) {
        jwsChainCacheLookups.labels((hit ? ChainCacheResultLabel.hit : .miss).rawValue).increment()
    }

    /// One App Store Server API attempt: `errorKind` nil when it succeeded,
    /// else the `AppStoreServerAPIError.Kind` raw value.
    public func recordAppStoreAPIAttempt(
        _ endpoint: AppStoreAPIEndpointLabel, _ environment: AppStoreEnvironmentLabel,
        errorKind: String?, duration: Duration
    ) {
        appStoreAPIRequests.labels(
            endpoint.rawValue, environment.rawValue, errorKind ?? IAPMetricLabels.appStoreAPISucceeded
        ).increment()
        appStoreAPIRequestDuration.labels(endpoint.rawValue, environment.rawValue).observe(duration)
    }
}
