/// Every metric family of the IAP credits system, declared once: name,
/// meaning (HELP), labels and their bound. The services register them
/// through `GatewayMetrics`, `PaymentsMetrics` and `PointsMetrics`; the
/// alert rules (deploy/prometheus/alerts.yml) and docs/OPERATIONS.md use
/// these names, and a test keeps the three in step.
///
/// Conventions: names start with `iap_`, carry their unit last (`_seconds`,
/// `_bytes`, `_credits`), counters end in `_total`; label values come from
/// closed vocabularies (`IAPMetricLabels` and the enums beside it) or from
/// code the system owns (route patterns, gRPC methods, problem codes), never
/// from user input such as ids or emails.
public enum IAPMetricNames {
    // MARK: Gateway: the public HTTP API

    /// Every HTTP answer of the gateway. `route` is the route's pattern as
    /// declared in the gateway's route table (`/api/v1/payments/apple/transactions/{transactionId}`,
    /// never the concrete path), `unmatched` when no route matched; `method`
    /// the request method (GET, POST, HEAD; `other` for anything else);
    /// `status` the status code sent (`200`, `422`, `503`).
    public static let httpRequests = MetricDescriptor(
        name: "iap_http_requests_total",
        help: "HTTP requests the gateway answered, by route pattern, method and status code.",
        kind: .counter, labelNames: ["route", "method", "status"], seriesMax: 256)

    /// Time from a complete request to its answer handed to the connection.
    public static let httpRequestDuration = MetricDescriptor(
        name: "iap_http_request_duration_seconds",
        help: "Time the gateway took to answer an HTTP request, in seconds, by route pattern and method.",
        kind: .histogram, labelNames: ["route", "method"], seriesMax: 64, buckets: .defaultLatencySeconds)

    /// Every RFC 9457 problem the gateway answered, by route pattern and
    /// `ProblemCode` raw value (`PAYMENT_TRANSACTION_INVALID`,
    /// `VALIDATION_FAILED_FIELDS` for the 422 form). On the verify route
    /// (`/api/v1/payments/apple/transactions/verify`) these are the verify
    /// problems the alerts watch by code.
    public static let httpProblems = MetricDescriptor(
        name: "iap_http_problems_total",
        help: "Problem answers (RFC 9457) the gateway sent, by route pattern and problem code.",
        kind: .counter, labelNames: ["route", "code"], seriesMax: 128)

    /// Requests the gateway refused for want of capacity, by
    /// `RefusalReasonLabel`: `overloaded` (503 at MAX_CONCURRENT_REQUESTS),
    /// `rate_limited` (429 on the notification route), `backend_unavailable`
    /// (503 because a service was down, slow or not ready). Also counted in
    /// `iap_http_requests_total` and `iap_http_problems_total`.
    public static let httpRefusals = MetricDescriptor(
        name: "iap_http_refusals_total",
        help: "Requests the gateway refused for want of capacity (429/503), by reason.",
        kind: .counter, labelNames: ["reason"], seriesMax: 8)

    // MARK: RPC between the services

    /// Every RPC a service handled: `method` the full gRPC path
    /// (`/points.v1.Points/Grant`), `code` the gRPC status name sent (`OK`,
    /// `UNAVAILABLE`, `FAILED_PRECONDITION`).
    public static let rpcServerRequests = MetricDescriptor(
        name: "iap_rpc_server_requests_total",
        help: "RPCs this service handled, by full gRPC method and status code name.",
        kind: .counter, labelNames: ["method", "code"], seriesMax: 128)

    /// Time from an RPC's arrival to its status.
    public static let rpcServerRequestDuration = MetricDescriptor(
        name: "iap_rpc_server_request_duration_seconds",
        help: "Time this service took to handle an RPC, in seconds, by full gRPC method.",
        kind: .histogram, labelNames: ["method"], seriesMax: 32, buckets: .defaultLatencySeconds)

    /// Every RPC a process made to another service (gateway to both,
    /// PaymentsService to PointsService), with the status it ended with
    /// (`UNAVAILABLE` or `DEADLINE_EXCEEDED` when the peer did not answer).
    public static let rpcClientRequests = MetricDescriptor(
        name: "iap_rpc_client_requests_total",
        help: "RPCs this process made to another service, by full gRPC method and status code name.",
        kind: .counter, labelNames: ["method", "code"], seriesMax: 128)

    /// Time an outgoing RPC took, from the call to its status.
    public static let rpcClientRequestDuration = MetricDescriptor(
        name: "iap_rpc_client_request_duration_seconds",
        help: "Time an RPC to another service took, in seconds, by full gRPC method.",
        kind: .histogram, labelNames: ["method"], seriesMax: 32, buckets: .defaultLatencySeconds)

    // MARK: Health and the database pool

    /// 1 when the last health probe of a dependency succeeded, 0 when it
    /// failed: `dependency` is `database` in the services, `points` and
    /// `payments` in the gateway (their gRPC health, as /readyz sees it).
    public static let dependencyUp = MetricDescriptor(
        name: "iap_dependency_up",
        help: "1 when the last health probe of the dependency succeeded, else 0.",
        kind: .gauge, labelNames: ["dependency"], seriesMax: 8)

    /// When each certificate file a process loaded at start stops being
    /// valid (its earliest notAfter), by the file's path: its own
    /// certificate and the CA bundles it checks peers with. Certificates are
    /// read once at start, so a renewed file counts only after a restart.
    public static let tlsCertificateExpiry = MetricDescriptor(
        name: "iap_tls_certificate_expiry_timestamp_seconds",
        help: "Unix time at which the earliest certificate of a loaded TLS certificate file expires, by path.",
        kind: .gauge, labelNames: ["path"], seriesMax: 16)

    /// Pooled PostgreSQL connections lent out right now.
    public static let databasePoolConnectionsInUse = MetricDescriptor(
        name: "iap_db_pool_connections_in_use",
        help: "Database connections of the pool lent out now.",
        kind: .gauge)

    /// The pool's bound (`connectionsMax`), so saturation is in_use / max.
    public static let databasePoolConnectionsMax = MetricDescriptor(
        name: "iap_db_pool_connections_max",
        help: "The most database connections the pool opens.",
        kind: .gauge)

    /// Callers queued for a connection right now (bounded by `waitersMax`).
    public static let databasePoolWaiters = MetricDescriptor(
        name: "iap_db_pool_waiters",
        help: "Callers waiting for a database connection now.",
        kind: .gauge)

    /// Time a caller waited for a connection (0 when one was free).
    public static let databasePoolAcquireWait = MetricDescriptor(
        name: "iap_db_pool_acquire_wait_seconds",
        help: "Time spent waiting for a pooled database connection, in seconds.",
        kind: .histogram, buckets: .poolWaitSeconds)

    /// Acquisitions that gave up (acquire timeout, or the waiter queue full):
    /// each is a request answered UNAVAILABLE.
    public static let databasePoolAcquireTimeouts = MetricDescriptor(
        name: "iap_db_pool_acquire_timeouts_total",
        help: "Requests for a database connection that timed out or found the waiter queue full.",
        kind: .counter)

    // MARK: Gateway: coalesced balance reads

    /// Users each of the gateway's GetBalances calls read
    /// (`BalanceReadBatcher`): the distinct users of the reads that arrived
    /// while earlier calls ran. A read alone (one user) makes a GetBalance
    /// call and is not counted here.
    public static let gatewayBalanceReadsPerCall = MetricDescriptor(
        name: "iap_gateway_balance_reads_per_call",
        help: "Distinct users' balance reads one GetBalances call carried.",
        kind: .histogram, buckets: .writesPerCommit)

    // MARK: PointsService: group commit of grants

    /// Regular grants each of PointsService's grant statements carried
    /// (`CommitBatcher`): 1 when a grant ran alone, more when grants that
    /// arrived together shared one statement and one commit.
    public static let pointsGrantsPerCommit = MetricDescriptor(
        name: "iap_points_grants_per_commit",
        help: "Regular grants one grant statement carried and committed together.",
        kind: .histogram, buckets: .writesPerCommit)

    /// Grant statements that failed (a replayed event id among their grants,
    /// a lost connection, a timeout): nothing was written and each of their
    /// grants was run again alone.
    public static let pointsGrantBatchesFailed = MetricDescriptor(
        name: "iap_points_grant_batches_failed_total",
        help: "Grant statements that failed as a whole, their grants then run alone.",
        kind: .counter)

    /// Spends each of PointsService's spend statements carried: 1 when a
    /// spend ran alone (`points_spend`), more when spends of distinct users
    /// that arrived together shared one statement and one commit
    /// (`points_spend_many`).
    public static let pointsSpendsPerCommit = MetricDescriptor(
        name: "iap_points_spends_per_commit",
        help: "Spends one spend statement carried and committed together.",
        kind: .histogram, buckets: .writesPerCommit)

    /// Spend statements that failed as a whole (a concurrent spend with the
    /// same event id, a lost connection, a timeout): nothing was written and
    /// each of their spends was run again alone.
    public static let pointsSpendBatchesFailed = MetricDescriptor(
        name: "iap_points_spend_batches_failed_total",
        help: "Spend statements that failed as a whole, their spends then run alone.",
        kind: .counter)

    // MARK: PaymentsService: the saga

    /// Every ledger step a runner finished (inline, worker or redrive):
    /// `step` is `grant`, `clawback` or `reversal`; `outcome` is `applied`
    /// (PointsService did it, or had done it: replays included), `refused`
    /// (a business refusal that ends the step, e.g. STARTER_PACK_INELIGIBLE),
    /// `deferred` (transient failure: retried by the worker with backoff),
    /// `needs_operator` (PointsService refused for a reason only a fix
    /// changes, e.g. PRODUCT_NOT_FOUND; still owed, retried, alerted) or
    /// `stale` (another runner recorded the step first).
    public static let sagaSteps = MetricDescriptor(
        name: "iap_saga_steps_total",
        help: "Saga ledger steps run, by step and outcome.",
        kind: .counter, labelNames: ["step", "outcome"], seriesMax: 32)

    /// Attempts of a step after its first (the worker's retries and redrives).
    public static let sagaStepRetries = MetricDescriptor(
        name: "iap_saga_step_retries_total",
        help: "Saga step attempts after the first, by step.",
        kind: .counter, labelNames: ["step"], seriesMax: 8)

    /// Rows that have owed a step for longer than the stuck threshold
    /// (`SAGA_STUCK_AFTER_SECONDS`, proposed default 900), counted by the
    /// saga worker's periodic query, by the step owed.
    public static let sagaStuckRows = MetricDescriptor(
        name: "iap_saga_stuck_rows",
        help: "Purchases whose owed ledger step has waited longer than the stuck threshold, by step.",
        kind: .gauge, labelNames: ["step"], seriesMax: 8)

    /// How long the oldest owed step has waited (0 when none is owed).
    public static let sagaOldestOwedStepAge = MetricDescriptor(
        name: "iap_saga_oldest_owed_step_age_seconds",
        help: "Age of the oldest owed saga step in seconds, 0 when none is owed.",
        kind: .gauge)

    /// Purchases each of the saga's happy-path statements carried
    /// (`CommitBatcher`), by `statement` (`first_sight`: step 1's insert of
    /// new purchases; `step_result`: step 3's guarded update): 1 when a
    /// purchase ran alone, more when purchases that arrived together shared
    /// one statement and one commit.
    public static let sagaWritesPerCommit = MetricDescriptor(
        name: "iap_saga_writes_per_commit",
        help: "Purchases one saga statement carried and committed together, by statement.",
        kind: .histogram, labelNames: ["statement"], seriesMax: 4, buckets: .writesPerCommit)

    /// Saga statements that failed as a whole (a lost connection, a
    /// timeout, a row the schema refuses): nothing was written and each of
    /// their purchases was run again alone, by `statement`.
    public static let sagaWriteBatchesFailed = MetricDescriptor(
        name: "iap_saga_write_batches_failed_total",
        help: "Saga statements that failed as a whole, their purchases then run alone, by statement.",
        kind: .counter, labelNames: ["statement"], seriesMax: 4)

    // MARK: PaymentsService: refunds

    /// Clawbacks PointsService applied: `result` is `covered` (the balance
    /// paid it all) or `overdue` (the balance went to zero and the rest was
    /// recorded as owed by the user: status `refunded_insufficient`).
    public static let clawbacks = MetricDescriptor(
        name: "iap_clawbacks_total",
        help: "Refund clawbacks applied, by whether the balance covered them.",
        kind: .counter, labelNames: ["result"], seriesMax: 4)

    /// Credits refunds could not take back (the overdue amounts summed).
    public static let overdueCredits = MetricDescriptor(
        name: "iap_overdue_credits_total",
        help: "Credits clawbacks could not deduct and recorded as overdue.",
        kind: .counter)

    /// Verified purchases of an App Store product the catalog lacks (the
    /// app is answered PAYMENT_GRANT_FAILED, retryable, and resubmits).
    public static let catalogMissingProducts = MetricDescriptor(
        name: "iap_catalog_missing_products_total",
        help: "Verified purchases of an App Store product the catalog does not list.",
        kind: .counter)

    // MARK: PaymentsService: Apple's notifications and signed data

    /// Every App Store Server Notification delivery: `type` is Apple's
    /// notificationType (`REFUND`, `CONSUMPTION_REQUEST`, ...; `unknown`
    /// when the payload could not be verified); `outcome` is `recorded`,
    /// `duplicate` (the notificationUUID was recorded before: a redelivery),
    /// `invalid` (refused: signature, chain, claims or payload) or `failed`
    /// (an error of ours or a dependency's). Apple retries anything but a
    /// 200 for a few days, then gives up.
    public static let notifications = MetricDescriptor(
        name: "iap_notifications_total",
        help: "App Store Server Notifications received, by notification type and outcome.",
        kind: .counter, labelNames: ["type", "outcome"], seriesMax: 160)

    /// Every JWS verification: `kind` is what was signed (`transaction`,
    /// `notification`, `renewal_info`, `app_transaction`); `outcome` is
    /// `verified` or the `VerificationFailure.code` (`bad_chain`,
    /// `wrong_bundle`, `expired`, ...).
    public static let jwsVerifications = MetricDescriptor(
        name: "iap_jws_verifications_total",
        help: "App Store JWS verifications, by signed data kind and outcome (verified or the failure code).",
        kind: .counter, labelNames: ["kind", "outcome"], seriesMax: 96)

    /// Lookups in the verifier's certificate-chain cache: `hit` skips chain
    /// building, `miss` builds and checks the chain.
    public static let jwsChainCacheLookups = MetricDescriptor(
        name: "iap_jws_chain_cache_lookups_total",
        help: "Certificate-chain cache lookups of the JWS verifier, by result (hit or miss).",
        kind: .counter, labelNames: ["result"], seriesMax: 4)

    /// OCSP checks of Apple's certificate chains (online checks only):
    /// `good`, `unreachable` (no usable answer: retryable) or `refused`
    /// (REVOKED, UNKNOWN, an untrusted signer).
    public static let jwsOCSPChecks = MetricDescriptor(
        name: "iap_jws_ocsp_checks_total",
        help: "OCSP checks of the JWS verifier's certificate chains, by outcome (good, unreachable or refused).",
        kind: .counter, labelNames: ["outcome"], seriesMax: 4)

    /// Verifications accepted on GOOD OCSP answers held through a failed
    /// refresh (until the answers' nextUpdate).
    public static let jwsOCSPHeldAnswersUsed = MetricDescriptor(
        name: "iap_jws_ocsp_held_answers_used_total",
        help: "JWS verifications accepted on OCSP answers held through a failed refresh, before their nextUpdate.",
        kind: .counter, labelNames: [], seriesMax: 1)

    // MARK: PaymentsService: Apple's App Store Server API

    /// Every attempt of a call to the App Store Server API: `endpoint` from
    /// `AppStoreAPIEndpointLabel`, `environment` `production` or `sandbox`,
    /// `outcome` `ok` or the `AppStoreServerAPIError.Kind` raw value
    /// (`not_found`, `rate_limited` for 429, `server_error`, `timeout`,
    /// `unauthorized`, ...). Retries are further attempts.
    public static let appStoreAPIRequests = MetricDescriptor(
        name: "iap_app_store_api_requests_total",
        help: "App Store Server API request attempts, by endpoint, environment and outcome (ok or the error kind).",
        kind: .counter, labelNames: ["endpoint", "environment", "outcome"], seriesMax: 384)

    /// Time of one attempt, from sending to the whole answer.
    public static let appStoreAPIRequestDuration = MetricDescriptor(
        name: "iap_app_store_api_request_duration_seconds",
        help: "Time of one App Store Server API request attempt, in seconds, by endpoint and environment.",
        kind: .histogram, labelNames: ["endpoint", "environment"], seriesMax: 32, buckets: .remoteCallSeconds)

    /// Every descriptor above, for tests and documentation.
    public static let all: [MetricDescriptor] = [
        httpRequests, httpRequestDuration, httpProblems, httpRefusals,
        rpcServerRequests, rpcServerRequestDuration, rpcClientRequests, rpcClientRequestDuration,
        dependencyUp, tlsCertificateExpiry, databasePoolConnectionsInUse, databasePoolConnectionsMax,
        databasePoolWaiters,
        databasePoolAcquireWait, databasePoolAcquireTimeouts, gatewayBalanceReadsPerCall,
        pointsGrantsPerCommit, pointsGrantBatchesFailed, pointsSpendsPerCommit, pointsSpendBatchesFailed,
        sagaSteps, sagaStepRetries, sagaStuckRows, sagaOldestOwedStepAge, sagaWritesPerCommit, sagaWriteBatchesFailed,
        clawbacks, overdueCredits, catalogMissingProducts,
        notifications, jwsVerifications, jwsChainCacheLookups, jwsOCSPChecks, jwsOCSPHeldAnswersUsed,
        appStoreAPIRequests, appStoreAPIRequestDuration,
    ]
}
