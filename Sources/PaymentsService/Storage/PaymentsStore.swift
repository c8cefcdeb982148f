import Foundation
import PostgresClient
import ServiceKitDatabase

/// PaymentsService's storage edge. Every transition of a transaction happens
/// here inside one short transaction that holds the row lock (`SELECT ...
/// FOR UPDATE`), or, on the purchase's happy path, as one autocommitted
/// statement carrying the precondition that lock would have checked
/// (`PaymentsStore+OneStatementPaths`); the decision itself comes from the
/// pure `PurchaseLifecycle`. `status` and `pending_action` are written as
/// views of the state.
final class PaymentsStore: Sendable {
    let pool: PostgresPool
    let backoff: RetryBackoff
    /// Commits concurrent first sights (saga step 1 of new purchases) together.
    let firstSightBatcher: CommitBatcher<FirstSightInsertBatch>
    /// Commits concurrent step results (saga step 3) together.
    let stepResultBatcher: CommitBatcher<StepResultUpdateBatch>

    /// Which happy-path statement a group commit ran (`observeBatches`).
    enum BatchedStatement: Sendable, CaseIterable {
        case firstSight
        case stepResult
    }

    /// Told of every happy-path statement: which, how many callers' rows it
    /// carried, and whether it failed as a whole (metrics; tests count batches).
    typealias BatchObserver = @Sendable (_ statement: BatchedStatement, _ writes: Int, _ failed: Bool) -> Void

    init(pool: PostgresPool, backoff: RetryBackoff = RetryBackoff(), observeBatches: BatchObserver? = nil) {
        self.pool = pool
        self.backoff = backoff
        var limits = CommitBatchLimits(connectionsMax: pool.configuration.connectionsMax)
        // Each batch size is a statement of its own (its VALUES list), prepared
        // on every connection that runs it: 16 rows at most keeps that to 15
        // shapes per step (608 values at most), well inside the connection's
        // prepared statements, where batches of a few rows already share
        // most of the cost.
        limits.batchSizeMax = Self.batchRowsMax
        firstSightBatcher = CommitBatcher(
            pool: pool, limits: limits, observer: Self.observer(of: .firstSight, observeBatches))
        stepResultBatcher = CommitBatcher(
            pool: pool, limits: limits, observer: Self.observer(of: .stepResult, observeBatches))
    }

    /// Rows one happy-path statement carries at most (`CommitBatchLimits.batchSizeMax`).
    static let batchRowsMax = 16

    private static func observer(of statement: BatchedStatement, _ observe: BatchObserver?) -> (
        @Sendable (Int, Bool) -> Void
    )? {
        guard let observe else { return nil }
        return { @Sendable writes, failed in observe(statement, writes, failed) }
    }

    /// The schema's migrations, in order (`PaymentsMigrations`).
    static let migrations = PaymentsMigrations.all.map {
        PostgresMigration(version: $0.version, name: $0.name, sql: $0.sql)
    }
    /// The advisory lock key serialising PaymentsService migration runners.
    static let migrationLockKey: Int64 = 0x5041_594D_454E_5453

    /// Applies the schema migrations (safe from several instances at once).
    func migrate() async throws(PaymentsError) {
        try await mappingErrors {
            _ = try await PostgresMigrator(migrations: Self.migrations, advisoryLockKey: Self.migrationLockKey).migrate(
                on: self.pool)
        }
    }

    // MARK: Apple's words

    /// What recording one of Apple's words did to a transaction's row.
    struct WordResult: Sendable {
        /// The row before (nil when this word created it).
        var before: PaymentRecord?
        var after: PaymentRecord
        /// False when the word was older than the one in force (nothing changed).
        var accepted: Bool
        /// True when `claim` names another user than the row's owner: nothing was written.
        var conflict: Bool
    }

    /// Records Apple's word about `payment` (insert, or lock the row and apply
    /// it), with its claim, if any: the app's (a verify) or the one
    /// `AppleClaimRule` allowed (Apple's word naming a token of ours), admitted
    /// by `PurchaseLifecycle.admit`. Runs inside the caller's transaction so
    /// a notification is recorded with its effect. `rowExists`: the caller's
    /// own insert (`recordIfNew`) just found the row, so it is not tried again.
    func record(
        _ verdict: AppleVerdict, signedAtUnixMilliseconds signedAt: Int64?, for payment: NewPayment,
        in connection: PostgresConnection,
        rowExists: Bool = false
    ) async throws -> WordResult {
        if !rowExists,
            let inserted = try await insert(
                payment, state: Self.firstState(verdict, signedAtUnixMilliseconds: signedAt, of: payment),
                in: connection)
        {
            return WordResult(before: nil, after: inserted, accepted: true, conflict: false)
        }
        guard let current = try await lockedRecord(payment.transactionId, in: connection) else {
            throw PaymentsError.internalFailure(detail: "insert conflicted but no row is visible")
        }
        var claimedCredits: Int64?
        if let claim = payment.claim {
            switch PurchaseLifecycle.admit(
                claimBy: claim.userId, fromApp: claim.isFromApp, claimed: current.state.claimed, owner: current.userId)
            {
            case .conflict:
                return WordResult(before: current, after: current, accepted: false, conflict: true)
            case .write:
                try await writeClaim(
                    claim, quantity: payment.quantity, signed: payment.signedTransactionInfo, over: current,
                    in: connection)
                claimedCredits = claim.credits
            case .keep:
                break
            }
        }
        if claimedCredits == nil, current.userId == nil, let owner = payment.tokenOwner {
            try await connection.query(
                "update apple_iap_transactions set user_id = $2::uuid where id = $1::uuid",
                [.uuid(current.id), .uuid(owner)])
        }
        // The word before the claim (`PurchaseLifecycle.receive(_:signedAtUnixMilliseconds:claimingCredits:in:)`).
        let received = PurchaseLifecycle.receive(
            verdict, signedAtUnixMilliseconds: signedAt, claimingCredits: claimedCredits,
            in: current.state)
        let after = try await write(
            received.state, over: current, in: connection, ledgerEventId: nil, verdictChanged: received.accepted)
        return WordResult(before: current, after: after, accepted: received.accepted, conflict: false)
    }

    /// The state of a transaction first seen in Apple's word, with `payment`'s claim if any.
    static func firstState(_ verdict: AppleVerdict, signedAtUnixMilliseconds signedAt: Int64?, of payment: NewPayment)
        -> PurchaseState
    {
        PurchaseLifecycle.start(
            verdict: verdict, signedAtUnixMilliseconds: signedAt, claimed: payment.claim != nil,
            credits: payment.claim?.credits ?? 0)
    }

    /// Inserts a transaction seen for the first time, already in `state`
    /// (its status, grant, verdict and schedule written by the insert
    /// itself); nil when it exists. A row that owes a step at once is leased
    /// to the inserting caller, who runs that step inline while the worker
    /// leaves it alone.
    func insert(_ payment: NewPayment, state: PurchaseState, in connection: PostgresConnection) async throws
        -> PaymentRecord?
    {
        try await FirstSightInsertBatch.runAlone(firstSightWrite(payment, state: state), on: connection)
    }

    /// The insert of `payment` in `state`, as one row of `FirstSightInsertBatch`.
    func firstSightWrite(_ payment: NewPayment, state: PurchaseState) -> PurchaseRowWrite {
        let claim = payment.claim
        let columns = PurchaseStateColumns(state, transactionId: payment.transactionId)
        let revocation = columns.revocation
        let cycle = columns.cycle
        return PurchaseRowWrite(
            transactionId: payment.transactionId,
            values: [
                (claim?.userId ?? payment.tokenOwner).map(PostgresValue.uuid) ?? .null, optional(claim?.productCode),
                .text(payment.appStoreProductId), .text(payment.transactionId), optional(payment.originalTransactionId),
                optional(payment.webOrderLineItemId), .text(payment.environment), .text(payment.bundleId),
                payment.appAccountToken.map(PostgresValue.uuid) ?? .null, .int64(payment.purchaseDateUnixMilliseconds),
                .int64(Int64(payment.quantity)), optional(payment.currency),
                payment.priceMilliunits.map(PostgresValue.int64) ?? .null, .text(payment.signedTransactionInfo),
                .json(payment.applePayloadJSON), optional(claim?.emailIdentity?.hash),
                optional(claim?.emailIdentity?.masked),
                .text(columns.status.rawValue), optional(columns.pendingAction?.rawValue), .bool(revocation != nil),
                optional(columns.failureCode), .bool(columns.claimed), .int64(columns.credits),
                .text(columns.grantState),
                .int64(Int64(cycle?.number ?? 0)), optional(cycle?.phase.rawValue), .int64(cycle?.amount ?? 0),
                optional(cycle?.reason),
                .int64(cycle?.deducted ?? 0), .int64(cycle?.overdue ?? 0),
                columns.verdictSignedAtUnixMilliseconds.map(PostgresValue.int64) ?? .null,
                revocation?.dateUnixMilliseconds.map(PostgresValue.int64) ?? .null, optional(revocation?.reason),
                optional(revocation?.type),
                revocation?.percentageMilliunits.map { PostgresValue.int64(Int64($0)) } ?? .null,
                optional(columns.grantLedgerEventId), .int64(backoff.leaseMilliseconds),
                // Time-ordered: inserts land on the primary key's newest leaves.
                .uuid(TimeOrderedUUID.make()),
            ])
    }

    /// The columns `FirstSightInsertBatch` writes, in the order of `firstSightExpressions`.
    static let firstSightColumns = """
        id, user_id, product_code, app_store_product_id, transaction_id, original_transaction_id,
            web_order_line_item_id, environment, bundle_id, app_account_token, purchase_date, quantity,
            currency, price_milliunits, signed_transaction_info, apple_payload, email_hash, email_masked,
            status, pending_action, revoked, failure_code, claimed, credits, grant_state,
            clawback_cycle, cycle_phase, cycle_amount, cycle_reason, cycle_deducted, overdue_amount,
            verdict_signed_at, revocation_date, revocation_reason, revocation_type, revocation_percentage,
            ledger_event_id, next_attempt_at, owed_since
        """

    /// The values of a new row from `firstSightWrite`'s 38 values (named by `value`).
    static func firstSightExpressions(_ value: StatementValue) -> String {
        """
        \(value[38])::uuid, \(value[1])::uuid, \(value[2])::text, \(value[3])::text, \(value[4])::text, \(value[5])::text, \(value[6])::text,
            \(value[7])::text, \(value[8])::text, \(value[9])::uuid, to_timestamp(\(value[10])::bigint / 1000.0), \(value[11])::integer,
            \(value[12])::text, \(value[13])::bigint, \(value[14])::text, \(value[15])::jsonb, \(value[16])::text, \(value[17])::text,
            \(value[18])::text, \(value[19])::text, \(value[20])::boolean, \(value[21])::text, \(value[22])::boolean, \(value[23])::bigint,
            \(value[24])::text, \(value[25])::integer, \(value[26])::text, \(value[27])::bigint, \(value[28])::text, \(value[29])::bigint,
            \(value[30])::bigint, to_timestamp(\(value[31])::bigint / 1000.0), to_timestamp(\(value[32])::bigint / 1000.0),
            \(value[33])::text, \(value[34])::text, \(value[35])::integer, \(value[36])::text,
            case when \(value[19])::text is null then null else now() + make_interval(secs => \(value[37])::bigint / 1000.0) end,
            case when \(value[19])::text is null then null else now() end
        """
    }

    private func writeClaim(
        _ claim: PaymentClaim, quantity: Int32, signed: String, over current: PaymentRecord,
        in connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            update apple_iap_transactions set user_id = $2::uuid, product_code = $3, credits = $4::bigint, quantity = $5::integer,
                email_hash = $6, email_masked = $7, claimed = true, signed_transaction_info = $8
            where id = $1::uuid
            """,
            [
                .uuid(current.id), .uuid(claim.userId), .text(claim.productCode), .int64(claim.credits),
                .int64(Int64(quantity)),
                optional(claim.emailIdentity?.hash), optional(claim.emailIdentity?.masked), .text(signed),
            ])
    }

    // MARK: Reads

    func find(transactionId: String) async throws(PaymentsError) -> PaymentRecord? {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await connection.query(
                    "select \(Self.columns) from apple_iap_transactions where transaction_id = $1",
                    [.text(transactionId)]
                ).first.map(Self.record)
            }
        }
    }

    /// The user's claimed transactions, newest first, after the row
    /// `afterId` (keyset paging on (created_at, id); the index
    /// apple_iap_transactions_user_created serves it). At most `limit` rows.
    func listTransactions(userId: UUID, limit: Int, afterId: UUID?) async throws(PaymentsError) -> [PaymentRecord] {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await connection.query(
                    """
                    select \(Self.columns) from apple_iap_transactions
                    where user_id = $1::uuid and claimed
                      and ($2::uuid is null or (created_at, id) < (select created_at, id from apple_iap_transactions where id = $2::uuid))
                    order by created_at desc, id desc limit $3::bigint
                    """, [.uuid(userId), afterId.map(PostgresValue.uuid) ?? .null, .int64(Int64(limit))]
                ).map(Self.record)
            }
        }
    }

    func lockedRecord(_ transactionId: String, in connection: PostgresConnection) async throws -> PaymentRecord? {
        try await connection.query(
            "select \(Self.columns) from apple_iap_transactions where transaction_id = $1 for update",
            [.text(transactionId)]
        ).first.map(Self.record)
    }

    // MARK: Step results

    /// What recording a step's result did.
    enum StepRecording: Sendable {
        case applied(PaymentRecord)
        /// The row no longer owes that step: the result was dropped.
        case stale(PaymentRecord)
    }

    /// Applies `outcome` of `step` under the row lock, only if the row still
    /// owes exactly that step (compare-and-set on the step's identity) and,
    /// given the row a runner leased (`within`), still in that owing period
    /// (`PaymentRecord.owedSinceUnixMicroseconds`): after a redrive of a
    /// refused grant, a runner leased before it finds the same step owed
    /// again, and its late answer must not stand for the redrive's.
    func complete(
        _ step: LedgerStep, with outcome: StepOutcome, transactionId: String, ledgerEventId: String? = nil,
        within leased: PaymentRecord? = nil
    ) async throws(PaymentsError) -> StepRecording {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                guard let current = try await self.lockedRecord(transactionId, in: connection) else {
                    throw PaymentsError.transactionNotFound
                }
                if let leased, current.owedSinceUnixMicroseconds != leased.owedSinceUnixMicroseconds {
                    return .stale(current)
                }
                guard let next = PurchaseLifecycle.complete(step, with: outcome, in: current.state) else {
                    return .stale(current)
                }
                return .applied(
                    try await self.write(
                        next, over: current, in: connection, ledgerEventId: ledgerEventId, verdictChanged: false))
            }
        }
    }

    /// A step that failed in a way a retry may fix: still owed, tried again
    /// after a backoff; only if the row still owes that step, in the same
    /// owing period, and no one has claimed it since the runner read it as
    /// `seen` (every claim raises `attempt_count`, which only a new owing
    /// period resets). So a runner whose lease ran out never cuts short the
    /// lease of the worker that took the row over, nor delays an operator's
    /// redrive.
    func postpone(_ step: LedgerStep, seen: PaymentRecord, error: String) async throws(PaymentsError) -> PaymentRecord?
    {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                guard let current = try await self.lockedRecord(seen.transactionId, in: connection),
                    PurchaseLifecycle.pendingStep(current.state) == step,
                    current.owedSinceUnixMicroseconds == seen.owedSinceUnixMicroseconds,
                    current.attemptCount == seen.attemptCount
                else { return nil }
                let delay = self.backoff.delayMilliseconds(
                    attempt: Int(max(current.attemptCount, 1)), jitter: Double.random(in: 0..<1))
                return try await connection.query(
                    """
                    update apple_iap_transactions set last_error = $2, updated_at = now(),
                        next_attempt_at = now() + make_interval(secs => $3::bigint / 1000.0)
                    where id = $1::uuid returning \(Self.columns)
                    """, [.uuid(current.id), .text(String(error.prefix(500))), .int64(delay)]
                ).first.map(Self.record)
            }
        }
    }

    /// An operator's redrive: a refused grant is owed again (a new owing
    /// period: attempts from 0, `owed_since` now), and whatever step is owed
    /// is due now. A step that stays owed keeps its attempt count: an
    /// attempt number is never handed out twice in one owing period, so a
    /// runner leased before the redrive is told from the one after it
    /// (`postpone`); its next failure backs off from that count.
    func redrive(transactionId: String) async throws(PaymentsError) -> (before: PaymentRecord, after: PaymentRecord) {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                guard let current = try await self.lockedRecord(transactionId, in: connection) else {
                    throw PaymentsError.transactionNotFound
                }
                let next = PurchaseLifecycle.redrive(current.state)
                let written = try await self.write(
                    next, over: current, in: connection, ledgerEventId: nil, verdictChanged: false)
                guard written.pendingStep != nil else { return (current, written) }
                let due = try await connection.query(
                    """
                    update apple_iap_transactions set next_attempt_at = now(), last_error = null, updated_at = now()
                    where id = $1::uuid returning \(Self.columns)
                    """, [.uuid(current.id)]
                ).first.map(Self.record)
                return (current, due ?? written)
            }
        }
    }

    // MARK: Writing a state

    /// Writes `next` over the locked row `current`, with its views (status,
    /// pending_action, revoked, failure_code) and the schedule: a newly owed
    /// step is due at once (attempts reset, `owed_since` now), an unchanged
    /// one keeps its schedule and lease, and nothing owed clears it.
    func write(
        _ next: PurchaseState, over current: PaymentRecord, in connection: PostgresConnection, ledgerEventId: String?,
        verdictChanged: Bool
    ) async throws -> PaymentRecord {
        let rows = try await connection.query(
            Self.stateUpdate,
            Self.stateUpdateValues(next, over: current, ledgerEventId: ledgerEventId, verdictChanged: verdictChanged))
        guard let row = rows.first else { throw PaymentsError.internalFailure(detail: "locked row vanished") }
        return try Self.record(row)
    }

    /// The statement `write` runs: `next`'s columns and schedule over row $1
    /// ($2...$21, `stateUpdateValues`).
    static let stateUpdate = stateUpdateStatement(where: "id = $1::uuid")

    /// `stateUpdate` applied only while the row still reads as the state the
    /// caller decided on (`PurchaseStateGuard` on $22...).
    static let guardedStateUpdate = stateUpdateStatement(
        where: "id = $1::uuid\n    and " + PurchaseStateGuard.condition(.parameter, first: stateValueCount + 1))

    /// The values of a state update: the row's id and 20 columns (`stateUpdateValues`).
    static let stateValueCount = 21

    private static func stateUpdateStatement(where condition: String) -> String {
        """
        update apple_iap_transactions set
        \(stateAssignments(.parameter))
        where \(condition)
        returning \(columns)
        """
    }

    /// The assignments of `stateUpdate` from values 2...21 (named by `value`).
    /// `credits` is written too: a grant records what PointsService credited.
    static func stateAssignments(_ value: StatementValue) -> String {
        """
            status = \(value[2])::text, pending_action = \(value[3])::text, revoked = \(value[4])::boolean, failure_code = \(value[5])::text,
            grant_state = \(value[6])::text, clawback_cycle = \(value[7])::integer, cycle_phase = \(value[8])::text,
            cycle_amount = \(value[9])::bigint, cycle_reason = \(value[10])::text, cycle_deducted = \(value[11])::bigint,
            overdue_amount = \(value[12])::bigint, verdict_signed_at = to_timestamp(\(value[13])::bigint / 1000.0),
            revocation_date = case when \(value[14])::boolean then to_timestamp(\(value[15])::bigint / 1000.0) else revocation_date end,
            revocation_reason = case when \(value[14])::boolean then \(value[16])::text else revocation_reason end,
            revocation_type = case when \(value[14])::boolean then \(value[17])::text else revocation_type end,
            revocation_percentage = case when \(value[14])::boolean then \(value[18])::integer else revocation_percentage end,
            ledger_event_id = coalesce(\(value[19])::text, ledger_event_id),
            next_attempt_at = case \(value[20])::integer when 0 then null when 1 then next_attempt_at else now() end,
            owed_since = case \(value[20])::integer when 0 then null when 1 then coalesce(owed_since, now()) else now() end,
            attempt_count = case \(value[20])::integer when 1 then attempt_count else 0 end,
            last_error = case \(value[20])::integer when 1 then last_error else null end,
            credits = \(value[21])::bigint,
            updated_at = now()
        """
    }

    /// $1...$21 of `stateUpdate`. The schedule follows `current`'s owed step:
    /// 0 clears it (nothing owed), 1 keeps it (the same step still owed),
    /// 2 makes a newly owed step due now.
    static func stateUpdateValues(
        _ next: PurchaseState, over current: PaymentRecord, ledgerEventId: String?, verdictChanged: Bool
    )
        -> [PostgresValue]
    {
        let state = PurchaseStateColumns(next, transactionId: current.transactionId)
        let nextStep = PurchaseLifecycle.pendingStep(next)
        // A granted purchase always names its ledger event (docs/protocols/payments/apple-iap-protocol.md, 3.3).
        let ledgerEventId = ledgerEventId ?? state.grantLedgerEventId
        let schedule: Int64 = if nextStep == nil { 0 } else if nextStep == current.pendingStep { 1 } else { 2 }
        let revocation = state.revocation
        let cycle = state.cycle
        return [
            .uuid(current.id), .text(state.status.rawValue), optional(state.pendingAction?.rawValue),
            .bool(revocation != nil), optional(state.failureCode), .text(state.grantState),
            .int64(Int64(cycle?.number ?? 0)),
            optional(cycle?.phase.rawValue), .int64(cycle?.amount ?? 0), optional(cycle?.reason),
            .int64(cycle?.deducted ?? 0),
            .int64(cycle?.overdue ?? 0), state.verdictSignedAtUnixMilliseconds.map(PostgresValue.int64) ?? .null,
            .bool(verdictChanged && revocation != nil),
            revocation?.dateUnixMilliseconds.map(PostgresValue.int64) ?? .null,
            optional(revocation?.reason), optional(revocation?.type),
            revocation?.percentageMilliunits.map { PostgresValue.int64(Int64($0)) } ?? .null,
            optional(ledgerEventId), .int64(schedule), .int64(state.credits),
        ]
    }

    // MARK: Leases

    /// Claims up to `limit` rows whose owed step is due, leasing each to
    /// this worker (`SKIP LOCKED`, so several instances share the work).
    func claimDue(limit: Int) async throws(PaymentsError) -> [PaymentRecord] {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                try await connection.query(
                    """
                    update apple_iap_transactions set
                        attempt_count = attempt_count + 1,
                        next_attempt_at = now() + make_interval(secs => $2::bigint / 1000.0)
                    where id in (select id from apple_iap_transactions
                                 where pending_action is not null and next_attempt_at <= now()
                                 order by next_attempt_at limit $1::bigint for update skip locked)
                    returning \(Self.columns)
                    """, [.int64(Int64(limit)), .int64(self.backoff.leaseMilliseconds)]
                ).map(Self.record)
            }
        }
    }

    /// Claims one row's owed step for an inline attempt, on the same terms as
    /// the worker: nil when nothing is owed, or another runner holds the lease.
    func claim(transactionId: String) async throws(PaymentsError) -> PaymentRecord? {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                try await connection.query(
                    """
                    update apple_iap_transactions set
                        attempt_count = attempt_count + 1,
                        next_attempt_at = now() + make_interval(secs => $2::bigint / 1000.0)
                    where transaction_id = $1 and pending_action is not null and next_attempt_at <= now()
                    returning \(Self.columns)
                    """, [.text(transactionId), .int64(self.backoff.leaseMilliseconds)]
                ).first.map(Self.record)
            }
        }
    }

    // MARK: Notifications

    /// Records a notification and applies its effect in the same
    /// transaction; returns nil when the notificationUUID was already
    /// recorded (a redelivery changes nothing). `detail` is whatever the
    /// effect reports back to its caller.
    func recordNotification<Detail: Sendable>(
        _ notification: NotificationRecord,
        effect: @Sendable (PostgresConnection) async throws -> (outcome: String, detail: Detail)
    ) async throws(PaymentsError) -> (outcome: String, detail: Detail)? {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                let inserted = try await connection.query(
                    """
                    insert into apple_notifications (notification_uuid, notification_type, subtype, environment,
                        transaction_id, signed_date, payload, outcome)
                    values ($1::uuid, $2, $3, $4, $5, to_timestamp($6::bigint / 1000.0), $7::jsonb, 'processing')
                    on conflict (notification_uuid) do nothing
                    returning notification_uuid
                    """,
                    [
                        .uuid(notification.notificationUUID), .text(notification.notificationType),
                        optional(notification.subtype),
                        optional(notification.environment), optional(notification.transactionId),
                        notification.signedDateUnixMilliseconds.map(PostgresValue.int64) ?? .null,
                        .json(notification.payloadJSON),
                    ])
                guard !inserted.isEmpty else { return nil }
                let result = try await effect(connection)
                try await connection.query(
                    "update apple_notifications set outcome = $2 where notification_uuid = $1::uuid",
                    [.uuid(notification.notificationUUID), .text(result.outcome)])
                return result
            }
        }
    }

    func notificationOutcome(uuid: UUID) async throws(PaymentsError) -> String? {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await connection.query(
                    "select outcome from apple_notifications where notification_uuid = $1::uuid",
                    [.uuid(uuid)]
                ).first?.string("outcome")
            }
        }
    }

    // MARK: appAccountToken

    /// The user's stable appAccountToken, created on first use.
    func accountToken(userId: UUID) async throws(PaymentsError) -> UUID {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    with inserted as (
                        insert into app_account_tokens (user_id, token) values ($1::uuid, gen_random_uuid())
                        on conflict (user_id) do nothing returning token)
                    select token from inserted
                    union all
                    select token from app_account_tokens where user_id = $1::uuid
                    limit 1
                    """, [.uuid(userId)])
                guard let row = rows.first else { throw PaymentsError.internalFailure(detail: "no account token") }
                return try row.uuid("token")
            }
        }
    }

    /// The user an appAccountToken was issued to, if any.
    func userId(forAccountToken token: UUID, in connection: PostgresConnection) async throws -> UUID? {
        try await connection.query("select user_id from app_account_tokens where token = $1::uuid", [.uuid(token)])
            .first?.uuid("user_id")
    }

    // MARK: Mapping

    static let columns = """
        id, user_id, product_code, app_store_product_id, transaction_id, original_transaction_id, environment,
        bundle_id, app_account_token, (extract(epoch from purchase_date) * 1000)::bigint as purchase_ms, quantity,
        (extract(epoch from revocation_date) * 1000)::bigint as revocation_ms, revocation_reason, revocation_type,
        revocation_percentage, revoked, (extract(epoch from verdict_signed_at) * 1000)::bigint as verdict_signed_ms,
        claimed, credits, grant_state, failure_code, clawback_cycle, cycle_phase, cycle_amount, cycle_reason, cycle_deducted,
        overdue_amount, currency, price_milliunits, ledger_event_id, email_hash, email_masked, attempt_count, last_error,
        (extract(epoch from created_at) * 1000)::bigint as created_ms, (extract(epoch from updated_at) * 1000)::bigint as updated_ms,
        \(owedSinceMicroseconds) as owed_since_us
        """

    /// `owed_since` as the integer microseconds `PaymentRecord` and `PurchaseStateGuard` compare.
    static let owedSinceMicroseconds = "(extract(epoch from owed_since) * 1000000)::bigint"

    static func record(_ row: PostgresRow) throws -> PaymentRecord {
        PaymentRecord(
            id: try row.uuid("id"),
            userId: try row.isNull("user_id") ? nil : try row.uuid("user_id"),
            productCode: try row.optionalString("product_code"),
            appStoreProductId: try row.string("app_store_product_id"),
            transactionId: try row.string("transaction_id"),
            originalTransactionId: try row.optionalString("original_transaction_id"),
            environment: try row.string("environment"),
            bundleId: try row.string("bundle_id"),
            appAccountToken: try row.isNull("app_account_token") ? nil : try row.uuid("app_account_token"),
            purchaseDateUnixMilliseconds: try row.int64("purchase_ms"),
            quantity: Int32(try row.int64("quantity")),
            currency: try row.optionalString("currency"),
            priceMilliunits: try row.optionalInt64("price_milliunits"),
            ledgerEventId: try row.optionalString("ledger_event_id"),
            emailHash: try row.optionalString("email_hash"),
            emailMasked: try row.optionalString("email_masked"),
            state: try state(row),
            attemptCount: try row.int64("attempt_count"),
            lastError: try row.optionalString("last_error"),
            createdAtUnixMilliseconds: try row.int64("created_ms"),
            updatedAtUnixMilliseconds: try row.int64("updated_ms"),
            owedSinceUnixMicroseconds: try row.optionalInt64("owed_since_us"))
    }

    private static func state(_ row: PostgresRow) throws -> PurchaseState {
        let verdict: AppleVerdict =
            try row.bool("revoked")
            ? .revoked(
                Revocation(
                    type: try row.optionalString("revocation_type"),
                    percentageMilliunits: try row.optionalInt64("revocation_percentage").map { Int32(clamping: $0) },
                    reason: try row.optionalString("revocation_reason") ?? "REFUND",
                    dateUnixMilliseconds: try row.optionalInt64("revocation_ms"))) : .purchased
        let grant: GrantProgress =
            switch try row.string("grant_state") {
            case "not_owed": .notOwed
            case "owed": .owed
            case "applied": .applied
            case "refused": .refused(reason: try row.optionalString("failure_code") ?? "GRANT_REFUSED")
            case let other: throw PaymentsError.internalFailure(detail: "unknown grant_state \(other) in database")
            }
        var cycle: ClawbackCycle?
        let number = Int(try row.int64("clawback_cycle"))
        if number > 0 {
            guard let phase = ClawbackCycle.Phase(rawValue: try row.optionalString("cycle_phase") ?? "") else {
                throw PaymentsError.internalFailure(detail: "cycle \(number) without a known phase in database")
            }
            cycle = ClawbackCycle(
                number: number, amount: try row.int64("cycle_amount"),
                reason: try row.optionalString("cycle_reason") ?? "",
                phase: phase, deducted: try row.int64("cycle_deducted"), overdue: try row.int64("overdue_amount"))
        }
        return PurchaseState(
            verdict: verdict, verdictSignedAtUnixMilliseconds: try row.optionalInt64("verdict_signed_ms"),
            claimed: try row.bool("claimed"), credits: try row.int64("credits"), grant: grant, cycle: cycle)
    }

    /// Domain errors pass through; outages are DATABASE_UNAVAILABLE; the rest is a bug.
    static func paymentsError(from error: any Error) -> PaymentsError {
        if let error = error as? PaymentsError { return error }
        guard let error = error as? PostgresError else { return .internalFailure(detail: String(describing: error)) }
        // A stale statement (a migration changed a type it returns) runs again once prepared afresh: transient too.
        let unavailableCodes: [PostgresError.Code] = [
            .connectionFailed, .timeout, .poolExhausted, .poolClosed, .staleStatement,
        ]
        if error.isConnectionLoss || unavailableCodes.contains(error.code) || error.isSerializationFailure {
            return .databaseUnavailable(detail: error.description)
        }
        if let sqlState = error.sqlState,
            sqlState == "57014" || sqlState == "55P03" || sqlState.hasPrefix("53") || sqlState.hasPrefix("57P")
        {
            return .databaseUnavailable(detail: error.description)
        }
        return .internalFailure(detail: error.description)
    }

    func mappingErrors<Value>(_ body: () async throws -> Value) async throws(PaymentsError) -> Value {
        do {
            return try await body()
        } catch {
            throw Self.paymentsError(from: error)
        }
    }
}

private func optional(_ text: String?) -> PostgresValue {
    text.map(PostgresValue.text) ?? .null
}
