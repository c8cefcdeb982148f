import Foundation
import PostgresClient

/// PaymentsService's storage edge. Every saga transition happens here inside
/// one short transaction that holds the row lock (`SELECT ... FOR UPDATE`);
/// the decision itself comes from the pure `PaymentSaga`.
final class PaymentsStore: Sendable {
    let pool: PostgresPool
    let backoff: RetryBackoff

    init(pool: PostgresPool, backoff: RetryBackoff = RetryBackoff()) {
        self.pool = pool
        self.backoff = backoff
    }

    /// Applies the schema migrations (safe from several instances at once).
    func migrate() async throws(PaymentsError) {
        let migrations = PaymentsMigrations.all.map { PostgresMigration(version: $0.version, name: $0.name, sql: $0.sql) }
        try await mappingErrors { _ = try await PostgresMigrator(migrations: migrations, advisoryLockKey: 0x5041_594D_454E_5453).migrate(on: self.pool) }
    }

    static let columns = """
        id, user_id, product_code, app_store_product_id, transaction_id, original_transaction_id, environment,
        bundle_id, app_account_token, (extract(epoch from purchase_date) * 1000)::bigint as purchase_ms,
        (extract(epoch from revocation_date) * 1000)::bigint as revocation_ms, revocation_reason, credits, currency,
        price_milliunits, ledger_event_id, email_hash, email_masked, status, pending_action, revoked, failure_code,
        overdue_amount, attempt_count, last_error, (extract(epoch from created_at) * 1000)::bigint as created_ms,
        (extract(epoch from updated_at) * 1000)::bigint as updated_ms
        """

    // MARK: Saga step 1

    enum InsertOutcome: Equatable, Sendable {
        case inserted(PaymentRecord)
        case existing(PaymentRecord)
    }

    /// Records a verified purchase whose grant is owed; the unique
    /// `transaction_id` decides races. The inserting caller holds a lease on
    /// the grant so the worker leaves it alone while the caller runs step 2.
    func insertVerified(_ payment: NewPayment) async throws(PaymentsError) -> InsertOutcome {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                let inserted = try await connection.query("""
                    insert into apple_iap_transactions (
                        id, user_id, product_code, app_store_product_id, transaction_id, original_transaction_id,
                        web_order_line_item_id, environment, bundle_id, app_account_token, purchase_date, status, credits,
                        currency, price_milliunits, signed_transaction_info, apple_payload, email_hash, email_masked,
                        pending_action, next_attempt_at)
                    values (gen_random_uuid(), $1::uuid, $2, $3, $4, $5, $6, $7, $8, $9::uuid, to_timestamp($10::bigint / 1000.0),
                            'verified', $11::bigint, $12, $13::bigint, $14, $15::jsonb, $16, $17,
                            'grant', now() + make_interval(secs => $18::bigint / 1000.0))
                    on conflict (transaction_id) do nothing
                    returning \(Self.columns)
                    """, [
                        .uuid(payment.userId), .text(payment.productCode), .text(payment.appStoreProductId),
                        .text(payment.transactionId), optional(payment.originalTransactionId), optional(payment.webOrderLineItemId),
                        .text(payment.environment), .text(payment.bundleId), payment.appAccountToken.map(PostgresValue.uuid) ?? .null,
                        .int64(payment.purchaseDateUnixMilliseconds), .int64(payment.credits), optional(payment.currency),
                        payment.priceMilliunits.map(PostgresValue.int64) ?? .null, .text(payment.signedTransactionInfo),
                        .json(payment.applePayloadJSON), .text(payment.emailHash), .text(payment.emailMasked),
                        .int64(self.backoff.leaseMilliseconds),
                    ])
                if let row = inserted.first { return .inserted(try Self.record(row)) }
                let existing = try await connection.query(
                    "select \(Self.columns) from apple_iap_transactions where transaction_id = $1", [.text(payment.transactionId)])
                guard let row = existing.first else {
                    throw PaymentsError.internalFailure(detail: "insert conflicted but no row is visible")
                }
                return .existing(try Self.record(row))
            }
        }
    }

    /// Records a transaction Apple took back before it was ever verified here
    /// (or returns the row that already exists).
    func insertRevoked(_ payment: RevokedPayment, in connection: PostgresConnection) async throws -> PaymentRecord? {
        let rows = try await connection.query("""
            insert into apple_iap_transactions (
                id, user_id, product_code, app_store_product_id, transaction_id, original_transaction_id, environment,
                bundle_id, app_account_token, purchase_date, revocation_date, revocation_reason, status, credits,
                signed_transaction_info, apple_payload, revoked)
            values (gen_random_uuid(), $1::uuid, $2, $3, $4, $5, $6, $7, $8::uuid, to_timestamp($9::bigint / 1000.0),
                    to_timestamp($10::bigint / 1000.0), $11, 'revoked', 0, $12, $13::jsonb, true)
            on conflict (transaction_id) do nothing
            returning \(Self.columns)
            """, [
                payment.userId.map(PostgresValue.uuid) ?? .null, optional(payment.productCode), .text(payment.appStoreProductId),
                .text(payment.transactionId), optional(payment.originalTransactionId), .text(payment.environment),
                .text(payment.bundleId), payment.appAccountToken.map(PostgresValue.uuid) ?? .null,
                .int64(payment.purchaseDateUnixMilliseconds), payment.revocationDateUnixMilliseconds.map(PostgresValue.int64) ?? .null,
                optional(payment.revocationReason), .text(payment.signedTransactionInfo), .json(payment.applePayloadJSON),
            ])
        return try rows.first.map(Self.record)
    }

    // MARK: Reads

    func find(transactionId: String) async throws(PaymentsError) -> PaymentRecord? {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await connection.query("select \(Self.columns) from apple_iap_transactions where transaction_id = $1",
                                           [.text(transactionId)]).first.map(Self.record)
            }
        }
    }

    // MARK: Transitions

    /// The outcome of a saga step, applied under the row lock.
    struct StepResult: Sendable {
        /// The next state, from `PaymentSaga`.
        var transition: @Sendable (PaymentState) -> PaymentState
        var ledgerEventId: String? = nil
        /// Set when the step failed in a way a retry may fix.
        var transientError: String? = nil
        /// Apple's revocation, recorded when a refund/revoke notice arrives.
        var revocationDateUnixMilliseconds: Int64? = nil
        var revocationReason: String? = nil
    }

    /// Locks the row, applies `step`, and schedules the next attempt: due at
    /// once for a new pending action, after a backoff for a failed one, never
    /// when nothing is owed.
    func apply(_ step: StepResult, transactionId: String) async throws(PaymentsError) -> PaymentRecord {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                guard let current = try await self.lockedRecord(transactionId, in: connection) else {
                    throw PaymentsError.transactionNotFound
                }
                return try await self.write(step, over: current, in: connection)
            }
        }
    }

    func lockedRecord(_ transactionId: String, in connection: PostgresConnection) async throws -> PaymentRecord? {
        try await connection.query("select \(Self.columns) from apple_iap_transactions where transaction_id = $1 for update",
                                   [.text(transactionId)]).first.map(Self.record)
    }

    /// Writes the state `step` leads to from `current` (row already locked).
    func write(_ step: StepResult, over current: PaymentRecord, in connection: PostgresConnection) async throws -> PaymentRecord {
        let next = step.transition(current.state)
        let delayMilliseconds: Int64?
        if next.pendingAction == nil {
            delayMilliseconds = nil
        } else if step.transientError != nil {
            delayMilliseconds = backoff.delayMilliseconds(attempt: Int(max(current.attemptCount, 1)), jitter: Double.random(in: 0..<1))
        } else if next.pendingAction != current.state.pendingAction {
            delayMilliseconds = 0
        } else {
            delayMilliseconds = -1  // unchanged schedule
        }
        let rows = try await connection.query("""
            update apple_iap_transactions set
                status = $2::text, pending_action = $3::text, revoked = $4::boolean, failure_code = $5::text, overdue_amount = $6::bigint,
                ledger_event_id = coalesce($7::text, ledger_event_id),
                last_error = case when $8::text is null then last_error else $8::text end,
                next_attempt_at = case when $9::bigint is null then null
                                       when $9::bigint < 0 then next_attempt_at
                                       else now() + make_interval(secs => $9::bigint / 1000.0) end,
                attempt_count = case when $3::text is null then 0 else attempt_count end,
                revocation_date = coalesce(to_timestamp($10::bigint / 1000.0), revocation_date),
                revocation_reason = coalesce($11::text, revocation_reason),
                updated_at = now()
            where id = $1::uuid
            returning \(Self.columns)
            """, [
                .uuid(current.id), .text(next.status.rawValue), next.pendingAction.map { .text($0.rawValue) } ?? .null,
                .bool(next.revoked), optional(next.failureCode), .int64(next.overdueAmount), optional(step.ledgerEventId),
                optional(step.transientError.map { String($0.prefix(500)) }), delayMilliseconds.map(PostgresValue.int64) ?? .null,
                step.revocationDateUnixMilliseconds.map(PostgresValue.int64) ?? .null, optional(step.revocationReason),
            ])
        guard let row = rows.first else { throw PaymentsError.internalFailure(detail: "locked row vanished") }
        return try Self.record(row)
    }

    /// Claims up to `limit` rows whose pending step is due, leasing each to
    /// this worker (`SKIP LOCKED`, so several instances share the work).
    func claimDue(limit: Int) async throws(PaymentsError) -> [PaymentRecord] {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                try await connection.query("""
                    update apple_iap_transactions set
                        attempt_count = attempt_count + 1,
                        next_attempt_at = now() + make_interval(secs => $2::bigint / 1000.0)
                    where id in (select id from apple_iap_transactions
                                 where pending_action is not null and next_attempt_at <= now()
                                 order by next_attempt_at limit $1::bigint for update skip locked)
                    returning \(Self.columns)
                    """, [.int64(Int64(limit)), .int64(self.backoff.leaseMilliseconds)]).map(Self.record)
            }
        }
    }

    /// Claims one row's pending step for an inline attempt (same lease as the worker).
    func claim(transactionId: String) async throws(PaymentsError) -> PaymentRecord? {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                try await connection.query("""
                    update apple_iap_transactions set
                        attempt_count = attempt_count + 1,
                        next_attempt_at = now() + make_interval(secs => $2::bigint / 1000.0)
                    where transaction_id = $1 and pending_action is not null
                    returning \(Self.columns)
                    """, [.text(transactionId), .int64(self.backoff.leaseMilliseconds)]).first.map(Self.record)
            }
        }
    }

    // MARK: Notifications

    /// Records a notification and applies its effect to the transaction row
    /// in the same transaction; returns nil when the notificationUUID was
    /// already recorded (a redelivery changes nothing). The recorded outcome
    /// is labelled from the row before and after the effect.
    func recordNotification(
        _ notification: NotificationRecord,
        effect: @Sendable (PaymentRecord?, PostgresConnection) async throws -> PaymentRecord?,
        outcome: @Sendable (_ before: PaymentRecord?, _ after: PaymentRecord?) -> String
    ) async throws(PaymentsError) -> (outcome: String, record: PaymentRecord?)? {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                let inserted = try await connection.query("""
                    insert into apple_notifications (notification_uuid, notification_type, subtype, environment,
                        transaction_id, signed_date, payload, outcome)
                    values ($1::uuid, $2, $3, $4, $5, to_timestamp($6::bigint / 1000.0), $7::jsonb, 'processing')
                    on conflict (notification_uuid) do nothing
                    returning notification_uuid
                    """, [
                        .uuid(notification.notificationUUID), .text(notification.notificationType), optional(notification.subtype),
                        optional(notification.environment), optional(notification.transactionId),
                        notification.signedDateUnixMilliseconds.map(PostgresValue.int64) ?? .null,
                        .json(notification.payloadJSON),
                    ])
                guard !inserted.isEmpty else { return nil }
                let before: PaymentRecord? = if let transactionId = notification.transactionId {
                    try await self.lockedRecord(transactionId, in: connection)
                } else {
                    nil
                }
                let after = try await effect(before, connection)
                let label = outcome(before, after)
                try await connection.query("update apple_notifications set outcome = $2 where notification_uuid = $1::uuid",
                                           [.uuid(notification.notificationUUID), .text(label)])
                return (label, after)
            }
        }
    }

    func notificationOutcome(uuid: UUID) async throws(PaymentsError) -> String? {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await connection.query("select outcome from apple_notifications where notification_uuid = $1::uuid",
                                           [.uuid(uuid)]).first?.string("outcome")
            }
        }
    }

    // MARK: appAccountToken

    /// The user's stable appAccountToken, created on first use.
    func accountToken(userId: UUID) async throws(PaymentsError) -> UUID {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                let rows = try await connection.query("""
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
    func userId(forAccountToken token: UUID, in connection: PostgresConnection? = nil) async throws -> UUID? {
        let sql = "select user_id from app_account_tokens where token = $1::uuid"
        if let connection { return try await connection.query(sql, [.uuid(token)]).first?.uuid("user_id") }
        return try await mappingErrors {
            try await self.pool.withConnection { try await $0.query(sql, [.uuid(token)]).first?.uuid("user_id") }
        }
    }

    // MARK: Mapping

    static func record(_ row: PostgresRow) throws -> PaymentRecord {
        guard let status = PaymentStatus(rawValue: try row.string("status")) else {
            throw PaymentsError.internalFailure(detail: "unknown status in database")
        }
        let pending = try row.optionalString("pending_action").map { text -> PendingAction in
            guard let action = PendingAction(rawValue: text) else { throw PaymentsError.internalFailure(detail: "unknown pending action") }
            return action
        }
        return PaymentRecord(
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
            revocationDateUnixMilliseconds: try row.optionalInt64("revocation_ms"),
            revocationReason: try row.optionalString("revocation_reason"),
            credits: try row.int64("credits"),
            currency: try row.optionalString("currency"),
            priceMilliunits: try row.optionalInt64("price_milliunits"),
            ledgerEventId: try row.optionalString("ledger_event_id"),
            emailHash: try row.optionalString("email_hash"),
            emailMasked: try row.optionalString("email_masked"),
            state: PaymentState(status: status, pendingAction: pending, revoked: try row.bool("revoked"),
                                failureCode: try row.optionalString("failure_code"), overdueAmount: try row.int64("overdue_amount")),
            attemptCount: try row.int64("attempt_count"),
            lastError: try row.optionalString("last_error"),
            createdAtUnixMilliseconds: try row.int64("created_ms"),
            updatedAtUnixMilliseconds: try row.int64("updated_ms"))
    }

    /// Domain errors pass through; outages are DATABASE_UNAVAILABLE; the rest is a bug.
    static func paymentsError(from error: any Error) -> PaymentsError {
        if let error = error as? PaymentsError { return error }
        guard let error = error as? PostgresError else { return .internalFailure(detail: String(describing: error)) }
        let unavailableCodes: [PostgresError.Code] = [.connectionFailed, .timeout, .poolExhausted, .poolClosed]
        if error.isConnectionLoss || unavailableCodes.contains(error.code) || error.isSerializationFailure {
            return .databaseUnavailable(detail: error.description)
        }
        if let sqlState = error.sqlState, sqlState == "57014" || sqlState == "55P03" || sqlState.hasPrefix("53") || sqlState.hasPrefix("57P") {
            return .databaseUnavailable(detail: error.description)
        }
        return .internalFailure(detail: error.description)
    }

    private func mappingErrors<Value>(_ body: () async throws -> Value) async throws(PaymentsError) -> Value {
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
