import Foundation
import PostgresClient
import StrictJSON
import UUIDText

/// The statements that keep `credit_lots` (where a user's credits came
/// from) in step with the balance. Every function runs inside the caller's
/// transaction and only while it holds the user's account row lock, so the
/// lots of one user change one movement at a time; the decisions come from
/// the pure `CreditLots`.
enum CreditLotLedger {
    /// The source of credits an account held before attribution began (and
    /// of any credits written outside this service, found as drift).
    static func openingSource(_ userId: UUID) -> String { "opening:\(UUIDText.lowercased(userId))" }

    /// The user's lots that still hold credits, oldest first, made to add up
    /// to `balance`: a difference (ledger rows written outside this store)
    /// is logged by the caller and absorbed by the opening lot, so a take
    /// never finds too little and the lots never claim more than the balance.
    static func openLots(_ userId: UUID, balance: Int64, in transaction: PostgresConnection) async throws -> (
        lots: [CreditLot], drift: Int64
    ) {
        let rows = try await transaction.query(
            """
            select source_event_id, remaining from credit_lots
            where user_id = $1::uuid and remaining > 0 order by seq
            """, [.uuid(userId)])
        var lots = try rows.map {
            CreditLot(sourceEventId: try $0.string("source_event_id"), remaining: try $0.int64("remaining"))
        }
        let drift = balance - lots.reduce(0) { $0 + $1.remaining }
        if drift > 0 {
            try await transaction.query(
                """
                insert into credit_lots as lot (user_id, source_event_id, credited, remaining) values ($1::uuid, $2, $3::bigint, $3::bigint)
                on conflict (user_id, source_event_id) do update
                    set credited = lot.credited + excluded.credited, remaining = lot.remaining + excluded.remaining
                """, [.uuid(userId), .text(openingSource(userId)), .int64(drift)])
            lots = try await openLots(userId, balance: balance, in: transaction).lots
        } else if drift < 0 {
            let shares = CreditLots.take(-drift, from: lots)
            try await move(shares, of: userId, eventId: nil, taking: true, countsAsSpent: false, in: transaction)
            lots = try await openLots(userId, balance: balance, in: transaction).lots
        }
        return (lots, drift)
    }

    /// A new source of credits (an operator's credit; purchases add theirs
    /// inside `GrantStatement`).
    static func addLot(_ userId: UUID, sourceEventId: String, credits: Int64, in transaction: PostgresConnection)
        async throws
    {
        try await transaction.query(
            """
            insert into credit_lots (user_id, source_event_id, credited, remaining) values ($1::uuid, $2, $3::bigint, $3::bigint)
            """, [.uuid(userId), .text(sourceEventId), .int64(credits)])
    }

    /// Takes `shares` from the lots (or gives them back) and, with an
    /// `eventId`, records them as that event's movements so it can be
    /// undone exactly; `countsAsSpent` moves the lots' spent figure too.
    static func move(
        _ shares: [LotShare], of userId: UUID, eventId: String?, taking: Bool, countsAsSpent: Bool,
        in transaction: PostgresConnection
    ) async throws {
        guard !shares.isEmpty else { return }
        let sign: Int64 = taking ? -1 : 1
        try await transaction.query(
            """
            with shares as (select * from jsonb_to_recordset($2::jsonb) as s(source_event_id text, amount bigint)),
                 moved as (
                     update credit_lots lot set remaining = lot.remaining + $3::bigint * s.amount,
                         spent = lot.spent - case when $4::boolean then $3::bigint * s.amount else 0 end
                     from shares s where lot.user_id = $1::uuid and lot.source_event_id = s.source_event_id
                     returning lot.source_event_id),
                 recorded as (
                     insert into lot_movements (event_id, source_event_id, user_id, amount)
                     select $5::text, source_event_id, $1::uuid, amount from shares where $5::text is not null)
            select count(*) as moved from moved
            """,
            [
                .uuid(userId), .json(json(shares)), .int64(sign), .bool(countsAsSpent),
                eventId.map(PostgresValue.text) ?? .null,
            ])
    }

    /// Moves the lots' spent figure alone by `shares` (up when `adding`):
    /// credits a clawback took from other lots in place of its purchase's
    /// spent ones (`CreditLots.spentElsewhere`), and their return.
    static func shiftSpent(_ shares: [LotShare], of userId: UUID, adding: Bool, in transaction: PostgresConnection)
        async throws
    {
        guard !shares.isEmpty else { return }
        try await transaction.query(
            """
            with shares as (select * from jsonb_to_recordset($2::jsonb) as s(source_event_id text, amount bigint))
            update credit_lots lot set spent = lot.spent + $3::bigint * s.amount
            from shares s where lot.user_id = $1::uuid and lot.source_event_id = s.source_event_id
            """, [.uuid(userId), .json(json(shares)), .int64(adding ? 1 : -1)])
    }

    /// What has been spent of one lot (0 when there is none).
    static func spent(_ sourceEventId: String, of userId: UUID, in transaction: PostgresConnection) async throws
        -> Int64
    {
        try await transaction.query(
            "select spent from credit_lots where user_id = $1::uuid and source_event_id = $2",
            [.uuid(userId), .text(sourceEventId)]
        ).first?.int64("spent") ?? 0
    }

    /// Gives back what `eventId` took (its recorded movements) and returns
    /// the shares. Credits it took before movements were recorded (before
    /// attribution began) go back to the opening lot, so the lots still add
    /// up to the balance.
    static func restore(
        _ eventId: String, amount: Int64, of userId: UUID, countsAsSpent: Bool,
        in transaction: PostgresConnection
    ) async throws -> [LotShare] {
        let recorded = try await transaction.query(
            """
            select m.source_event_id, m.amount from lot_movements m join credit_lots lot
                on lot.user_id = m.user_id and lot.source_event_id = m.source_event_id
            where m.event_id = $1 and m.user_id = $2::uuid order by lot.seq
            """, [.text(eventId), .uuid(userId)]
        ).map { LotShare(sourceEventId: try $0.string("source_event_id"), amount: try $0.int64("amount")) }
        var shares = recorded
        let unrecorded = amount - recorded.reduce(0) { $0 + $1.amount }
        if unrecorded > 0 {
            try await transaction.query(
                """
                insert into credit_lots (user_id, source_event_id, credited, remaining) values ($1::uuid, $2, 0, 0)
                on conflict (user_id, source_event_id) do nothing
                """, [.uuid(userId), .text(openingSource(userId))])
            // Spent before attribution began counts as spent from the opening lot.
            try await transaction.query(
                """
                update credit_lots set credited = credited + $3::bigint, spent = spent + case when $4::boolean then $3::bigint else 0 end
                where user_id = $1::uuid and source_event_id = $2
                """, [.uuid(userId), .text(openingSource(userId)), .int64(unrecorded), .bool(countsAsSpent)])
            shares.append(LotShare(sourceEventId: openingSource(userId), amount: unrecorded))
        }
        try await move(shares, of: userId, eventId: nil, taking: false, countsAsSpent: countsAsSpent, in: transaction)
        return shares
    }

    static func json(_ shares: [LotShare]) -> String {
        JSONWriter.string(
            of: .array(
                shares.map { share in
                    var object = JSONObject()
                    object.insert("source_event_id", .string(share.sourceEventId))
                    object.insert("amount", .integer(share.amount))
                    return .object(object)
                }))
    }
}
