import PostgresClient

/// A purchase's whole effect on the ledger as ONE statement, so a regular
/// grant costs one round trip: create-or-lock the account row while adding
/// the credits (the upsert's DO UPDATE takes the row lock; its WHERE refuses
/// to pass `PointsLimits.balanceMax`, leaving no row and so no ledger
/// entry), then write the purchase row with the new balance. The unique
/// event id makes a replay fail as a whole; the caller then answers from the
/// stored row.
enum GrantStatement {
    static let sql = """
        with account as (
            insert into user_points as account (user_id, balance, lifetime_earned) values ($1::uuid, $3::bigint, $3::bigint)
            on conflict (user_id) do update
                set balance = account.balance + $3::bigint, lifetime_earned = account.lifetime_earned + $3::bigint, updated_at = now()
                where account.balance <= $7::bigint - $3::bigint and account.lifetime_earned <= $7::bigint - $3::bigint
            returning balance
        ), entry as (
            insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id,
                                       request_fingerprint, metadata)
            select $1::uuid, $2, 'purchase', 1, $3::bigint, account.balance, 'payment', $4, $5, $6::jsonb from account
            returning id, balance_after
        ), lot as (
            -- The purchase is a source of credits of its own (attribution: CreditLots).
            insert into credit_lots (user_id, source_event_id, credited, remaining)
            select $1::uuid, $2, $3::bigint, $3::bigint from entry
        )
        select id, balance_after from entry
        """

    static func parameters(_ grant: ValidatedGrant) -> [PostgresValue] {
        [
            .uuid(grant.userId), .text(grant.eventId), .int64(grant.credits), .text(grant.bizId),
            .text(grant.fingerprint),
            .json(LedgerMetadata.purchase(grant)), .int64(PointsLimits.balanceMax),
        ]
    }

    /// What the statement did: a row when it applied, none when the balance cap refused it.
    static func outcome(_ rows: PostgresRows) throws(PostgresError) -> GrantBatchStatement.Outcome {
        guard let row = rows.first else { return .refusedAtBalanceMax }
        return .applied(ledgerEntryId: try row.uuid("id"), balanceAfter: try row.int64("balance_after"))
    }
}
