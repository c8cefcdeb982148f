import Foundation
import PostgresClient

/// The points ledger's invariants for one user, read straight from the
/// points database, as a list of violations (empty when all hold):
/// - balance == Σ direction × amount over the user's rows, and >= 0;
/// - lifetime_spent == Σ consume − Σ consume_reversal;
/// - lifetime_earned == Σ direction × amount of every other row;
/// - the credit lots' remaining add up to the balance, and no lot gave more
///   than it had (remaining + spent <= credited).
public enum LedgerInvariants {
    public static func violations(pool: PostgresPool, user: UUID) async throws -> [String] {
        try await pool.withConnection { connection in
            let row = try await connection.query(
                """
                select coalesce((select balance from user_points where user_id = $1::uuid), 0) as balance,
                       coalesce((select lifetime_earned from user_points where user_id = $1::uuid), 0) as earned,
                       coalesce((select lifetime_spent from user_points where user_id = $1::uuid), 0) as spent,
                       (select coalesce(sum(direction * amount), 0)::bigint from points_ledger where user_id = $1::uuid) as total,
                       (select coalesce(sum(case when change_type in ('consume', 'consume_reversal') then 0 else direction * amount end), 0)::bigint
                        from points_ledger where user_id = $1::uuid) as earned_sum,
                       (select coalesce(sum(case when change_type in ('consume', 'consume_reversal') then -direction * amount else 0 end), 0)::bigint
                        from points_ledger where user_id = $1::uuid) as spent_sum,
                       (select coalesce(sum(remaining), 0)::bigint from credit_lots where user_id = $1::uuid) as lots,
                       (select count(*) from credit_lots where user_id = $1::uuid and remaining + spent > credited) as overdrawn
                """, [.uuid(user)]
            ).first!
            var violations: [String] = []
            let balance = try row.int64("balance")
            func check(_ holds: Bool, _ text: @autoclosure () throws -> String) rethrows {
                if !holds { violations.append("\(user): \(try text())") }
            }
            try check(balance == row.int64("total"), "balance \(balance) != ledger sum \(try row.int64("total"))")
            check(balance >= 0, "negative balance \(balance)")
            try check(
                row.int64("earned") == row.int64("earned_sum"),
                "lifetime_earned \(try row.int64("earned")) != \(try row.int64("earned_sum"))")
            try check(
                row.int64("spent") == row.int64("spent_sum"),
                "lifetime_spent \(try row.int64("spent")) != \(try row.int64("spent_sum"))")
            try check(
                row.int64("lots") == balance, "credit lots hold \(try row.int64("lots")), the balance is \(balance)")
            try check(row.int64("overdrawn") == 0, "\(try row.int64("overdrawn")) lots gave more than they had")
            return violations
        }
    }
}
