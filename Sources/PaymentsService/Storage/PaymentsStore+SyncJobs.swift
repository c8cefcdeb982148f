import Foundation
import PostgresClient

/// Where a job that asks Apple stands (`apple_sync_jobs`), as its holder reads it.
struct SyncJobState: Equatable, Sendable {
    var job: String
    var resumeMilliseconds: Int64?
    /// A notification history window in progress, and the page to continue from.
    var window: NotificationRecoveryWindow?
    var pageToken: String?
    /// The revoked sweep in progress: the last user visited.
    var cursor: String?
}

/// Leader election and resume points of the jobs that ask Apple. A job runs
/// on the instance holding its lease row: taken only when the job is due
/// and no unexpired lease exists (one statement, so two instances never both
/// win), renewed as the run goes, released with the next run's time. Every
/// write of a run is fenced by `lease_owner`: a holder that stalled past its
/// lease (another instance took the job) writes nothing more.
extension PaymentsStore {
    /// Takes `job`'s lease for `owner` when the job is due and free; the
    /// job's state, or nil (not due, or another instance holds it).
    func acquireSyncJob(_ job: String, owner: String, lease: Duration) async throws(PaymentsError) -> SyncJobState? {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await connection.query(
                    """
                    insert into apple_sync_jobs (job, lease_owner, lease_until, next_run_at)
                    values ($1, $2, now() + make_interval(secs => $3::bigint / 1000.0), now())
                    on conflict (job) do update set lease_owner = excluded.lease_owner, lease_until = excluded.lease_until, updated_at = now()
                        where apple_sync_jobs.next_run_at <= now()
                          and (apple_sync_jobs.lease_until is null or apple_sync_jobs.lease_until < now())
                    returning \(Self.syncJobColumns)
                    """, [.text(job), .text(owner), .int64(lease.wholeMilliseconds)]
                ).first.map(Self.syncJobState)
            }
        }
    }

    /// Extends the lease; false when `owner` no longer holds it.
    func renewSyncJob(_ job: String, owner: String, lease: Duration) async throws(PaymentsError) -> Bool {
        try await fencedUpdate(
            job, owner: owner, set: "lease_until = now() + make_interval(secs => $3::bigint / 1000.0)",
            [.int64(lease.wholeMilliseconds)])
    }

    /// Records the notification window in progress and the page to continue
    /// from (nil window: none in progress); renews the lease.
    func saveSyncWindow(
        _ job: String, owner: String, window: NotificationRecoveryWindow?, pageToken: String?,
        lease: Duration
    ) async throws(PaymentsError) -> Bool {
        try await fencedUpdate(
            job, owner: owner,
            set: """
                window_start_ms = $3::bigint, window_end_ms = $4::bigint, window_only_failures = coalesce($5::boolean, false),
                page_token = $6::text, lease_until = now() + make_interval(secs => $7::bigint / 1000.0)
                """,
            [
                window.map { .int64($0.startMilliseconds) } ?? .null,
                window.map { .int64($0.endMilliseconds) } ?? .null,
                window.map { .bool($0.onlyFailures) } ?? .null, pageToken.map(PostgresValue.text) ?? .null,
                .int64(lease.wholeMilliseconds),
            ])
    }

    /// A window was read to its end: the resume point moves to `resume`
    /// (never back) and no window is in progress.
    func completeSyncWindow(_ job: String, owner: String, resumeMilliseconds resume: Int64) async throws(PaymentsError)
        -> Bool
    {
        try await fencedUpdate(
            job, owner: owner,
            set: """
                resume_ms = greatest(coalesce(resume_ms, $3::bigint), $3::bigint), window_start_ms = null, window_end_ms = null,
                window_only_failures = false, page_token = null
                """, [.int64(resume)])
    }

    /// The revoked sweep's position (nil: the sweep is complete); renews the lease.
    func saveSyncCursor(_ job: String, owner: String, cursor: String?, lease: Duration) async throws(PaymentsError)
        -> Bool
    {
        try await fencedUpdate(
            job, owner: owner,
            set: "cursor = $3::text, lease_until = now() + make_interval(secs => $4::bigint / 1000.0)",
            [cursor.map(PostgresValue.text) ?? .null, .int64(lease.wholeMilliseconds)])
    }

    /// Ends a run: releases the lease and schedules the next run.
    func finishSyncJob(_ job: String, owner: String, nextRunAtMilliseconds next: Int64, outcome: String)
        async throws(PaymentsError) -> Bool
    {
        try await fencedUpdate(
            job, owner: owner,
            set: """
                lease_owner = null, lease_until = null, next_run_at = to_timestamp($3::bigint / 1000.0), last_run_at = now(),
                last_outcome = $4::text
                """, [.int64(next), .text(String(outcome.prefix(64)))])
    }

    /// How long until `job` is due (zero when due or unknown: a new job runs at once).
    func syncJobDueIn(_ job: String) async throws(PaymentsError) -> Duration {
        let milliseconds = try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await connection.query(
                    """
                    select greatest(0, (extract(epoch from (greatest(next_run_at, coalesce(lease_until, next_run_at)) - now())) * 1000)::bigint) as ms
                    from apple_sync_jobs where job = $1
                    """, [.text(job)]
                ).first?.int64("ms") ?? 0
            }
        }
        return .milliseconds(milliseconds)
    }

    private func fencedUpdate(_ job: String, owner: String, set assignments: String, _ values: [PostgresValue])
        async throws(PaymentsError) -> Bool
    {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                !(try await connection.query(
                    """
                    update apple_sync_jobs set \(assignments), updated_at = now()
                    where job = $1 and lease_owner = $2 and lease_until >= now()
                    returning job
                    """, [.text(job), .text(owner)] + values
                ).isEmpty)
            }
        }
    }

    static let syncJobColumns = """
        job, resume_ms, window_start_ms, window_end_ms, window_only_failures, page_token, cursor
        """

    static func syncJobState(_ row: PostgresRow) throws -> SyncJobState {
        var window: NotificationRecoveryWindow?
        if let start = try row.optionalInt64("window_start_ms"), let end = try row.optionalInt64("window_end_ms") {
            window = NotificationRecoveryWindow(
                startMilliseconds: start, endMilliseconds: end, onlyFailures: try row.bool("window_only_failures"))
        }
        return SyncJobState(
            job: try row.string("job"), resumeMilliseconds: try row.optionalInt64("resume_ms"), window: window,
            pageToken: try row.optionalString("page_token"), cursor: try row.optionalString("cursor"))
    }

    // MARK: What the sweeps visit

    /// Rows stuck longer than `stuckAfter` (owing the same step since, or
    /// `received` since they were recorded), in Production or Sandbox, not
    /// asked about within `stuckAfter`, at most `limit`; each is marked
    /// asked now in the same statement.
    func claimStuckRows(stuckAfter: Duration, maximumAgeDays: Int, limit: Int) async throws(PaymentsError)
        -> [PaymentRecord]
    {
        try await mappingErrors {
            try await self.pool.withTransaction { connection in
                try await connection.query(
                    """
                    update apple_iap_transactions set apple_checked_at = now()
                    where id in (
                        select id from apple_iap_transactions
                        where ((pending_action is not null and owed_since < now() - make_interval(secs => $1::bigint / 1000.0))
                               or (status = 'received' and created_at < now() - make_interval(secs => $1::bigint / 1000.0)))
                          and environment in ('Production', 'Sandbox')
                          and created_at > now() - make_interval(days => $2::integer)
                          and (apple_checked_at is null or apple_checked_at < now() - make_interval(secs => $1::bigint / 1000.0))
                        order by apple_checked_at nulls first, created_at
                        limit $3::bigint for update skip locked)
                    returning \(Self.columns)
                    """, [.int64(stuckAfter.wholeMilliseconds), .int64(Int64(maximumAgeDays)), .int64(Int64(limit))]
                ).map(Self.record)
            }
        }
    }

    /// Rows `claimStuckRows` stamped but the sweep did not ask Apple about
    /// (it stopped): due again at the next run.
    func releaseStuckRows(transactionIds: [String]) async throws(PaymentsError) {
        guard !transactionIds.isEmpty else { return }
        try await mappingErrors {
            _ = try await self.pool.withConnection { connection in
                try await connection.query(
                    "update apple_iap_transactions set apple_checked_at = null where transaction_id = any($1::text[])",
                    [.text(Self.textArrayLiteral(transactionIds))])
            }
        }
    }

    /// A `text[]` parameter's text: each element double-quoted, with `"` and
    /// `\` escaped, so any string reads back as itself.
    static func textArrayLiteral(_ elements: [String]) -> String {
        let quoted = elements.map { element in
            "\"" + element.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
        }
        return "{" + quoted.joined(separator: ",") + "}"
    }

    /// One user's credited purchases the revoked sweep asks about: in each
    /// environment, the newest one bought within the lookback (any
    /// transaction id of the customer opens their history at Apple).
    struct SweepAnchor: Equatable, Sendable {
        var userId: UUID
        var environment: String
        var transactionId: String
    }

    /// The anchors of the next `limit` users after `cursor` (by user id)
    /// with a credited purchase in Production or Sandbox within `lookbackDays`.
    func sweepAnchors(after cursor: UUID?, lookbackDays: Int, limit: Int) async throws(PaymentsError) -> [SweepAnchor] {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await connection.query(
                    """
                    select distinct on (user_id, environment) user_id::text as user_id, environment, transaction_id
                    from apple_iap_transactions
                    where grant_state = 'applied' and environment in ('Production', 'Sandbox')
                      and purchase_date > now() - make_interval(days => $2::integer)
                      and user_id in (
                          select distinct user_id from apple_iap_transactions
                          where grant_state = 'applied' and user_id > coalesce($1::uuid, '00000000-0000-0000-0000-000000000000'::uuid)
                            and environment in ('Production', 'Sandbox')
                            and purchase_date > now() - make_interval(days => $2::integer)
                          order by user_id limit $3::bigint)
                    order by user_id, environment, purchase_date desc, transaction_id
                    """, [cursor.map(PostgresValue.uuid) ?? .null, .int64(Int64(lookbackDays)), .int64(Int64(limit))]
                ).map { row in
                    guard let user = UUID(uuidString: try row.string("user_id")) else {
                        throw PaymentsError.internalFailure(detail: "user_id is not a UUID")
                    }
                    return SweepAnchor(
                        userId: user, environment: try row.string("environment"),
                        transactionId: try row.string("transaction_id"))
                }
            }
        }
    }
}
