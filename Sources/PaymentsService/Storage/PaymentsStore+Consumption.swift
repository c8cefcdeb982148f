import Foundation
import PostgresClient

/// A consumption answer owed to Apple (`consumption_answers`), as claimed
/// for one attempt.
struct ConsumptionAnswerRow: Sendable, Equatable {
    var notificationUUID: UUID
    var transactionId: String
    var environment: String
    var attempts: Int64
    var deadlineUnixMilliseconds: Int64
}

/// Consent and consumption answers (migration 6).
extension PaymentsStore {
    /// Bounds of one pass over due answers.
    static let consumptionAnswersPerPassMax = 50
    /// One attempt's hold on its answer: longer than one call to Apple can
    /// take (`AppStoreServerAPILimits`: 4 attempts of a 10 s connect and a
    /// 30 s request, and 120 s of waits between them, 280 s), so a slow
    /// attempt's lease never runs out and a second instance sends the same
    /// answer beside it.
    static let consumptionAnswerLeaseSeconds: Int64 = 300

    func setConsumptionConsent(userId: UUID, consented: Bool) async throws(PaymentsError) {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                _ = try await connection.query(
                    """
                    insert into consumption_consents (user_id, consented) values ($1::uuid, $2)
                    on conflict (user_id) do update set consented = excluded.consented, updated_at = now()
                        where consumption_consents.consented <> excluded.consented
                    """, [.uuid(userId), .bool(consented)])
            }
        }
    }

    /// The user's stored consent; nil when the user never said.
    func consumptionConsent(userId: UUID) async throws(PaymentsError) -> Bool? {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await connection.query(
                    "select consented from consumption_consents where user_id = $1::uuid",
                    [.uuid(userId)]
                ).first?.bool("consented")
            }
        }
    }

    /// Owes one answer to a CONSUMPTION_REQUEST, inside the transaction that
    /// records the notification (so it is owed exactly once).
    func oweConsumptionAnswer(
        notificationUUID: UUID, transactionId: String, environment: String, requestedAtUnixMilliseconds: Int64,
        in connection: PostgresConnection
    ) async throws {
        _ = try await connection.query(
            """
            insert into consumption_answers (notification_uuid, transaction_id, environment, deadline)
            values ($1::uuid, $2, $3, to_timestamp(($4::bigint + $5::bigint) / 1000.0))
            on conflict (notification_uuid) do nothing
            """,
            [
                .uuid(notificationUUID), .text(transactionId), .text(environment), .int64(requestedAtUnixMilliseconds),
                .int64(ConsumptionAnswerRule.answerWindowMilliseconds),
            ])
    }

    /// Claims due answers for one attempt each (a lease, so two instances
    /// never send the same answer at once); answers past Apple's window
    /// become `expired` first, unless an attempt holds one (its outcome,
    /// perhaps Apple's 202, is recorded first). `only` restricts it to one
    /// notification.
    func claimDueConsumptionAnswers(only: UUID? = nil) async throws(PaymentsError) -> [ConsumptionAnswerRow] {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                _ = try await connection.query(
                    """
                    update consumption_answers set status = 'expired', lease_until = null, detail = coalesce(detail, 'window passed')
                    where status = 'pending' and deadline <= now() and (lease_until is null or lease_until < now())
                    """)
                return try await connection.query(
                    """
                    update consumption_answers a set lease_until = now() + make_interval(secs => $1::bigint), attempts = attempts + 1
                    from (select notification_uuid from consumption_answers
                          where status = 'pending' and next_attempt_at <= now() and (lease_until is null or lease_until < now())
                            and ($2::uuid is null or notification_uuid = $2::uuid)
                          order by next_attempt_at limit $3::bigint for update skip locked) due
                    where a.notification_uuid = due.notification_uuid
                    returning a.notification_uuid, a.transaction_id, a.environment, a.attempts,
                              (extract(epoch from a.deadline) * 1000)::bigint as deadline_ms
                    """,
                    [
                        .int64(Self.consumptionAnswerLeaseSeconds), only.map(PostgresValue.uuid) ?? .null,
                        .int64(Int64(Self.consumptionAnswersPerPassMax)),
                    ]
                ).map { row in
                    ConsumptionAnswerRow(
                        notificationUUID: try row.uuid("notification_uuid"),
                        transactionId: try row.string("transaction_id"),
                        environment: try row.string("environment"), attempts: try row.int64("attempts"),
                        deadlineUnixMilliseconds: try row.int64("deadline_ms"))
                }
            }
        }
    }

    /// The end of one attempt: `sent`, `skipped` or `failed` for good, or
    /// still `pending` (transient) and tried again after `retrySeconds`.
    func finishConsumptionAnswer(
        _ uuid: UUID, status: String, bodyJSON: String?, appleStatus: Int?, detail: String?,
        retrySeconds: Int64
    ) async throws(PaymentsError) {
        precondition(["pending", "sent", "skipped", "failed"].contains(status), "unknown consumption answer status")
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                _ = try await connection.query(
                    """
                    update consumption_answers set status = $2::text, body = coalesce($3::jsonb, body), apple_status = $4::integer,
                        detail = $5, lease_until = null, next_attempt_at = now() + make_interval(secs => $6::bigint),
                        sent_at = case when $2::text = 'sent' then now() end
                    where notification_uuid = $1::uuid and status = 'pending'
                    """,
                    [
                        .uuid(uuid), .text(status), bodyJSON.map(PostgresValue.json) ?? .null,
                        appleStatus.map { .int64(Int64($0)) } ?? .null, detail.map(PostgresValue.text) ?? .null,
                        .int64(retrySeconds),
                    ])
            }
        }
    }
}
