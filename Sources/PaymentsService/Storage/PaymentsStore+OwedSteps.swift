import PostgresClient

extension PaymentsStore {
    /// The saga's backlog for the metrics: per step owed (`grant`,
    /// `clawback`, `reverse_clawback`), the rows owing it for longer than
    /// `stuckAfter`, and the age of the oldest owed step of any kind.
    struct OwedSteps: Sendable, Equatable {
        var stuckRows: [LedgerStepKind: Int]
        var oldestOwedSeconds: Double
    }

    /// The step kinds as `pending_action` stores them.
    enum LedgerStepKind: String, Sendable, CaseIterable {
        case grant
        case clawback
        case reverseClawback = "reverse_clawback"
    }

    /// One grouped scan of the owed rows (the partial index on owed rows keeps it small).
    func owedSteps(stuckAfter: Duration) async throws(PaymentsError) -> OwedSteps {
        try await mappingErrors {
            let rows = try await self.pool.withConnection { connection in
                try await connection.query(
                    """
                    select pending_action,
                           count(*) filter (where owed_since < now() - make_interval(secs => $1::bigint / 1000.0)) as stuck,
                           coalesce(floor(extract(epoch from now() - min(owed_since)) * 1000), 0)::bigint as oldest_ms
                    from apple_iap_transactions where pending_action is not null group by pending_action
                    """, [.int64(stuckAfter.wholeMilliseconds)])
            }
            var owed = OwedSteps(stuckRows: [:], oldestOwedSeconds: 0)
            for row in rows {
                guard let kind = LedgerStepKind(rawValue: try row.string("pending_action")) else { continue }
                owed.stuckRows[kind] = Int(try row.int64("stuck"))
                owed.oldestOwedSeconds = max(owed.oldestOwedSeconds, Double(try row.int64("oldest_ms")) / 1000)
            }
            return owed
        }
    }
}
