import PostgresClient

/// The SQL condition "this row of `apple_iap_transactions` reads as exactly
/// this `PurchaseState`": every column the state is read from, compared
/// through the expressions `PaymentsStore.record(_:)` reads it with (a
/// revocation's terms only when revoked, a refusal's reason only when
/// refused, a cycle's fields only when there is one). An update carrying it
/// applies only while the row's state is still the one the caller decided
/// on, and is evaluated on the newest row version under the row lock, so
/// such an update is a compare-and-set of the whole state in one statement.
/// It compares the owing period too (`owed_since`,
/// `PaymentRecord.owedSinceUnixMicroseconds`): a redrive of a refused grant
/// recreates the very state a runner leased before it read.
enum PurchaseStateGuard {
    /// How many values `condition` takes, from `first` on.
    static let valueCount = 17

    /// The condition on values first...first+16 (named by `value`, bound with `values`).
    static func condition(_ value: StatementValue, first n: Int) -> String {
        """
        revoked = \(value[n])::boolean
                and (not revoked or (revocation_type is not distinct from \(value[n + 1])::text
                    and revocation_percentage is not distinct from \(value[n + 2])::integer
                    and coalesce(revocation_reason, 'REFUND') = \(value[n + 3])::text
                    and (extract(epoch from revocation_date) * 1000)::bigint is not distinct from \(value[n + 4])::bigint))
                and (extract(epoch from verdict_signed_at) * 1000)::bigint is not distinct from \(value[n + 5])::bigint
                and claimed = \(value[n + 6])::boolean and credits = \(value[n + 7])::bigint
                and grant_state = \(value[n + 8])::text
                and (grant_state <> 'refused' or coalesce(failure_code, 'GRANT_REFUSED') = \(value[n + 9])::text)
                and clawback_cycle = \(value[n + 10])::integer
                and (clawback_cycle = 0 or (cycle_phase = \(value[n + 11])::text and cycle_amount = \(value[n + 12])::bigint
                    and coalesce(cycle_reason, '') = \(value[n + 13])::text and cycle_deducted = \(value[n + 14])::bigint
                    and overdue_amount = \(value[n + 15])::bigint))
                and \(PaymentsStore.owedSinceMicroseconds) is not distinct from \(value[n + 16])::bigint
        """
    }

    /// The parameters of `condition` for `seen`'s state and owing period (NULL where a part is absent).
    static func values(_ seen: PaymentRecord) -> [PostgresValue] {
        let state = seen.state
        let revocation = state.verdict.revocation
        let cycle = state.cycle
        var refusal: String?
        if case .refused(let reason) = state.grant { refusal = reason }
        return [
            .bool(revocation != nil), text(revocation?.type),
            revocation?.percentageMilliunits.map { .int64(Int64($0)) } ?? .null,
            text(revocation?.reason), revocation?.dateUnixMilliseconds.map(PostgresValue.int64) ?? .null,
            state.verdictSignedAtUnixMilliseconds.map(PostgresValue.int64) ?? .null,
            .bool(state.claimed), .int64(state.credits), .text(PurchaseStateColumns.grantState(state.grant)),
            text(refusal),
            .int64(Int64(cycle?.number ?? 0)), text(cycle?.phase.rawValue), cycle.map { .int64($0.amount) } ?? .null,
            text(cycle?.reason), cycle.map { .int64($0.deducted) } ?? .null, cycle.map { .int64($0.overdue) } ?? .null,
            seen.owedSinceUnixMicroseconds.map(PostgresValue.int64) ?? .null,
        ]
    }

    private static func text(_ value: String?) -> PostgresValue {
        value.map(PostgresValue.text) ?? .null
    }
}
