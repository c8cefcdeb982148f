import Foundation
import PostgresClient
import StrictJSON

/// A spend's whole write in one round trip: a call of the database function
/// `points_spend` (PointsSchema migration 5), which locks the account, looks
/// for the event id, checks the balance, takes the credits from the open
/// lots oldest first (the attribution rule of `CreditLots.take`), records
/// the shares as the spend's movements, and writes the consume row and the
/// account's new figures. The account's row lock is held only while the
/// database works, never across a network round trip. Run autocommitted it
/// is its own transaction; run inside a transaction (after the lots were
/// healed) it joins it.
enum SpendStatement {
    static let sql = """
        select o_outcome as outcome, o_balance as balance, o_entry_id as id, o_attribution as attribution
        from points_spend($1::uuid, $2, $3::bigint, $4, $5, $6, $7::jsonb)
        """

    static func parameters(_ spend: ValidatedSpend) -> [PostgresValue] {
        [
            .uuid(spend.userId), .text(spend.eventId), .int64(spend.amount), .text(spend.bizType), .text(spend.bizId),
            .text(spend.fingerprint), .json(JSONWriter.string(of: spend.metadata ?? .object(JSONObject()))),
        ]
    }

    /// Calls the function for `spend`: autocommitted, or inside the caller's transaction.
    static func run(_ spend: ValidatedSpend, on connection: PostgresConnection) async throws -> (
        Outcome, balance: Int64
    ) {
        try outcome(of: try await connection.query(sql, parameters(spend)).first!)
    }

    /// What the function answered.
    enum Outcome: Equatable {
        /// Written: the ledger row's id and the attribution (JSON list).
        case applied(entryId: UUID, attribution: String)
        /// The event id is already in the ledger: the caller decides replay or conflict.
        case stored
        /// The balance is below the amount; nothing written.
        case insufficient
        /// The open lots do not add up to the balance; nothing written.
        case drift
    }

    /// The outcome and the balance the function read under the lock.
    static func outcome(of row: PostgresRow) throws -> (Outcome, balance: Int64) {
        let balance = try row.int64("balance")
        switch try row.string("outcome") {
        case "applied":
            return (.applied(entryId: try row.uuid("id"), attribution: try row.string("attribution")), balance)
        case "stored": return (.stored, balance)
        case "insufficient": return (.insufficient, balance)
        case "drift": return (.drift, balance)
        case let other: throw PointsError.internalFailure(detail: "points_spend answered \(other)")
        }
    }
}
