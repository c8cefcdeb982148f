import Foundation
import PostgresClient
import ServiceKitDatabase
import StrictJSON
import UUIDText

/// `SpendStatement` for several users' spends at once (group commit, see
/// `CommitBatcher`): one call of `points_spend_many` (PointsSchema migration
/// 9), which decides and writes per spend exactly what `points_spend` does
/// (the replay check, the balance, the open lots oldest first, their
/// movements, the consume row, the account), set-based, in one statement
/// and one commit. Every spend gets its own outcome, `.drift` and `.stored`
/// included, which its caller answers as after a lone call. The users and
/// event ids are distinct (`BatchQueue`); an error (a concurrent
/// insert of one of the event ids, above all) fails the whole call and
/// writes nothing, and the batcher then runs each spend alone.
enum SpendBatchStatement: BatchedWrite {
    typealias Item = ValidatedSpend

    /// What the database decided for one spend, and the balance it read under the lock.
    struct Outcome: Sendable, Equatable {
        let decision: SpendStatement.Outcome
        let balance: Int64
    }

    static let sql = """
        select o_event as event_id, o_outcome as outcome, o_balance as balance, o_entry_id as id, o_attribution as attribution
        from points_spend_many($1::jsonb)
        """

    static func parameters(_ spends: [ValidatedSpend]) -> [PostgresValue] {
        let rows: [JSONValue] = spends.map { spend in
            var row = JSONObject()
            row.insert("user_id", .string(UUIDText.lowercased(spend.userId)))
            row.insert("event_id", .string(spend.eventId))
            row.insert("amount", .integer(spend.amount))
            row.insert("biz_type", .string(spend.bizType))
            row.insert("biz_id", .string(spend.bizId))
            row.insert("fingerprint", .string(spend.fingerprint))
            row.insert("ext", spend.metadata ?? .object(JSONObject()))
            return .object(row)
        }
        return [.json(JSONWriter.string(of: .array(rows)))]
    }

    /// One outcome per spend, in the spends' order.
    static func outcomes(_ rows: PostgresRows, of spends: [ValidatedSpend]) throws -> [Outcome] {
        var decided: [String: Outcome] = [:]
        for row in rows {
            let (decision, balance) = try SpendStatement.outcome(of: row)
            decided[try row.string("event_id")] = Outcome(decision: decision, balance: balance)
        }
        return try spends.map { spend in
            guard let outcome = decided[spend.eventId] else {
                throw PointsError.internalFailure(detail: "points_spend_many left out event \(spend.eventId)")
            }
            return outcome
        }
    }

    /// The account and the ledger row (a user's spends keep their order).
    static func keys(_ spend: ValidatedSpend) -> [String] {
        ["user " + UUIDText.lowercased(spend.userId), "event " + spend.eventId]
    }

    /// A lone spend calls `points_spend`, exactly as without batching.
    static func execute(_ spends: [ValidatedSpend], on connection: PostgresConnection) async throws -> [Outcome] {
        if spends.count == 1 {
            let (decision, balance) = try await SpendStatement.run(spends[0], on: connection)
            return [Outcome(decision: decision, balance: balance)]
        }
        return try outcomes(try await connection.query(sql, parameters(spends)), of: spends)
    }

    /// The lone path has no fault point before its commit either.
    static let beforeCommitFault: String? = nil
}
