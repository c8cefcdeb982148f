import Foundation
import PostgresClient
import ServiceKitDatabase
import StrictJSON
import UUIDText

/// `GrantStatement` for many regular grants at once: one statement, one
/// commit, one round trip for the whole batch (group commit, see
/// `CommitBatcher`). Per grant it does exactly what `GrantStatement` does:
/// create-or-lock the account while adding the credits (refused past
/// `PointsLimits.balanceMax`, leaving that grant without a row), write the
/// purchase row with the new balance and the purchase's credit lot.
///
/// The grants' users and event ids are distinct (`BatchQueue`), so no
/// account row is touched twice. Accounts are upserted in user id order, so
/// two batches lock shared accounts in the same order and cannot deadlock.
/// Any error (a replayed event id among them, above all) fails the whole
/// statement and writes nothing; the batcher then runs each grant alone.
enum GrantBatchStatement: BatchedWrite {
    typealias Item = ValidatedGrant

    static let sql = """
        with input as (
            select * from jsonb_to_recordset($1::jsonb)
                as i(user_id uuid, event_id text, credits bigint, biz_id text, fingerprint text, metadata jsonb)
        ), account as (
            insert into user_points as account (user_id, balance, lifetime_earned)
            select user_id, credits, credits from input order by user_id
            on conflict (user_id) do update
                set balance = account.balance + excluded.balance, lifetime_earned = account.lifetime_earned + excluded.lifetime_earned,
                    updated_at = now()
                where account.balance <= $2::bigint - excluded.balance and account.lifetime_earned <= $2::bigint - excluded.lifetime_earned
            returning user_id, balance
        ), entry as (
            insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id,
                                       request_fingerprint, metadata)
            select input.user_id, input.event_id, 'purchase', 1, input.credits, account.balance, 'payment', input.biz_id,
                   input.fingerprint, input.metadata
            from input join account on account.user_id = input.user_id
            returning id, event_id, balance_after
        ), lot as (
            -- Each purchase is a source of credits of its own (attribution: CreditLots).
            insert into credit_lots (user_id, source_event_id, credited, remaining)
            select input.user_id, input.event_id, input.credits, input.credits
            from input join entry on entry.event_id = input.event_id
        )
        select id, event_id, balance_after from entry
        """

    static func parameters(_ grants: [ValidatedGrant]) -> [PostgresValue] {
        let rows: [JSONValue] = grants.map { grant in
            var row = JSONObject()
            row.insert("user_id", .string(UUIDText.lowercased(grant.userId)))
            row.insert("event_id", .string(grant.eventId))
            row.insert("credits", .integer(grant.credits))
            row.insert("biz_id", .string(grant.bizId))
            row.insert("fingerprint", .string(grant.fingerprint))
            row.insert("metadata", LedgerMetadata.purchaseDocument(grant))
            return .object(row)
        }
        return [.json(JSONWriter.string(of: .array(rows))), .int64(PointsLimits.balanceMax)]
    }

    /// What the statement did for one grant.
    enum Outcome: Equatable, Sendable {
        /// Credited: the purchase row and the balance after it.
        case applied(ledgerEntryId: UUID, balanceAfter: Int64)
        /// The balance would pass `PointsLimits.balanceMax`: nothing written.
        case refusedAtBalanceMax
    }

    /// One outcome per grant, in the grants' order.
    static func outcomes(_ rows: PostgresRows, of grants: [ValidatedGrant]) throws(PostgresError) -> [Outcome] {
        var written: [String: Outcome] = [:]
        for row in rows {
            written[try row.string("event_id")] = .applied(
                ledgerEntryId: try row.uuid("id"), balanceAfter: try row.int64("balance_after"))
        }
        return grants.map { written[$0.eventId] ?? .refusedAtBalanceMax }
    }

    /// The account and the ledger row (a user's grants keep their order).
    static func keys(_ grant: ValidatedGrant) -> [String] {
        ["user " + UUIDText.lowercased(grant.userId), "event " + grant.eventId]
    }

    /// A lone grant runs the single `GrantStatement`, exactly as without batching.
    static func execute(_ grants: [ValidatedGrant], on connection: PostgresConnection) async throws -> [Outcome] {
        if grants.count == 1 {
            return [
                try GrantStatement.outcome(
                    try await connection.query(GrantStatement.sql, GrantStatement.parameters(grants[0])))
            ]
        }
        return try outcomes(try await connection.query(sql, parameters(grants)), of: grants)
    }

    static let beforeCommitFault: String? = "points.grant_before_commit"
}
