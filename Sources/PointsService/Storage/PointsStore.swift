import Contracts
import Foundation
import PostgresClient
import ServiceKit
import ServiceKitDatabase
import StrictJSON
import UUIDText

/// PointsService's storage edge: each RPC is one short transaction over the
/// pool; the decisions inside come from the pure rules (validation, plans,
/// replay decision). Validation happens before any I/O, so bad input writes nothing.
final class PointsStore: Sendable {
    let pool: PostgresPool
    let catalog: PackageCatalog
    /// Commits concurrent regular grants together.
    private let grantBatcher: CommitBatcher<GrantBatchStatement>
    /// Commits concurrent spends (of distinct users) together.
    private let spendBatcher: CommitBatcher<SpendBatchStatement>

    /// `observeGrantCommits` and `observeSpendCommits` are told of every
    /// grant and spend statement (metrics); the batches run on
    /// `batchExecutor` (the service's loop; nil: the cooperative pool).
    init(
        pool: PostgresPool, catalog: PackageCatalog,
        observeGrantCommits: CommitBatcher<GrantBatchStatement>.Observer? = nil,
        observeSpendCommits: CommitBatcher<SpendBatchStatement>.Observer? = nil,
        batchExecutor: (any TaskExecutor)? = nil
    ) {
        self.pool = pool
        self.catalog = catalog
        let limits = CommitBatchLimits(connectionsMax: pool.configuration.connectionsMax)
        grantBatcher = CommitBatcher(pool: pool, limits: limits, observer: observeGrantCommits, executor: batchExecutor)
        // A spend batch's statement waits on its commit more than it works: a second one may overlap it.
        spendBatcher = CommitBatcher(
            pool: pool, limits: .overlapping(connectionsMax: pool.configuration.connectionsMax),
            observer: observeSpendCommits, executor: batchExecutor)
    }

    /// Applies the schema migrations (safe to run from several instances at once).
    func migrate() async throws(PointsError) {
        try await mappingErrors { try await PointsSchema.migrate(self.pool) }
    }

    // MARK: Queries

    func getBalance(userId: String) async throws(PointsError) -> PointsBalance {
        let id = try PointsValidation.userId(userId)
        return try await reading {
            try await self.pool.withConnection { connection in
                let row = try await connection.query(
                    "select balance, lifetime_earned, lifetime_spent from user_points where user_id = $1::uuid",
                    [.uuid(id)]
                ).first
                guard let row else { return PointsBalance(userId: id, balance: 0, lifetimeEarned: 0, lifetimeSpent: 0) }
                return try Self.balance(of: id, row)
            }
        }
    }

    /// Several users' balances from one statement, one per id in the order
    /// given (a user never seen: zero). Reads only, like `getBalance`.
    func getBalances(userIds: [String]) async throws(PointsError) -> [PointsBalance] {
        let ids = try PointsValidation.userIds(userIds)
        let idList = Self.uuidArrayLiteral(ids)
        let found = try await reading {
            try await self.pool.withConnection { connection in
                var found: [UUID: PointsBalance] = [:]
                for row in try await connection.query(
                    "select user_id, balance, lifetime_earned, lifetime_spent from user_points where user_id = any($1::uuid[])",
                    [.text(idList)])
                {
                    let id = try row.uuid("user_id")
                    found[id] = try Self.balance(of: id, row)
                }
                return found
            }
        }
        return ids.map { found[$0] ?? PointsBalance(userId: $0, balance: 0, lifetimeEarned: 0, lifetimeSpent: 0) }
    }

    /// `{id,id,...}`: a `uuid[]` parameter's text, written in one buffer.
    static func uuidArrayLiteral(_ ids: [UUID]) -> String {
        let length = ids.isEmpty ? 2 : 1 + ids.count * (UUIDText.byteCount + 1)
        return String(unsafeUninitializedCapacity: length) { text in
            text[0] = UInt8(ascii: "{")
            var at = 1
            for id in ids {
                if at > 1 {
                    text[at] = UInt8(ascii: ",")
                    at += 1
                }
                UUIDText.writeLowercased(id, into: text, at: at)
                at += UUIDText.byteCount
            }
            text[at] = UInt8(ascii: "}")
            return at + 1
        }
    }

    /// A `user_points` row's figures.
    private static func balance(of userId: UUID, _ row: PostgresRow) throws(PostgresError) -> PointsBalance {
        PointsBalance(
            userId: userId, balance: try row.int64("balance"),
            lifetimeEarned: try row.int64("lifetime_earned"), lifetimeSpent: try row.int64("lifetime_spent"))
    }

    /// One purchase's credit lot, or nil when it has none (see `PurchaseConsumption`).
    func purchaseConsumption(userId: String, purchaseEventId: String) async throws(PointsError) -> PurchaseConsumption?
    {
        let id = try PointsValidation.userId(userId)
        let eventId = try PointsValidation.eventId(purchaseEventId, field: "purchase_event_id")
        return try await reading {
            try await self.pool.withConnection { connection in
                let row = try await connection.query(
                    "select credited, spent, remaining from credit_lots where user_id = $1::uuid and source_event_id = $2",
                    [.uuid(id), .text(eventId)]
                ).first
                guard let row else { return nil }
                return PurchaseConsumption(
                    credited: try row.int64("credited"), spent: try row.int64("spent"),
                    remaining: try row.int64("remaining"))
            }
        }
    }

    func listPackages(userId: String, emailHash: String) async throws(PointsError) -> PackageListing {
        _ = try PointsValidation.userId(userId)
        let hash = try PointsValidation.emailHash(emailHash)
        let purchased = try await reading {
            try await self.pool.withConnection { connection in
                try await connection.query(
                    "select has_purchased_starter_pack from register_bonus_claims where email_hash = $1", [.text(hash)]
                ).first?.bool("has_purchased_starter_pack") ?? false
            }
        }
        return PackageListing(
            packages: catalog.purchasable(starterPackPurchased: purchased), starterPackPurchased: purchased)
    }

    func listLedger(userId: String, pageSize: Int32, pageToken: String) async throws(PointsError) -> LedgerPage {
        let id = try PointsValidation.userId(userId)
        let size = try PointsValidation.pageSize(pageSize)
        let before = try LedgerPageToken.decode(pageToken)
        let rows = try await reading {
            try await self.pool.withConnection { connection in
                try await connection.query(
                    """
                    select id, seq, event_id, change_type, direction, amount, balance_after, biz_type,
                           coalesce(biz_id, '') as biz_id, metadata::text as metadata,
                           (extract(epoch from created_at) * 1000)::bigint as created_at_ms
                    from points_ledger
                    where user_id = $1::uuid and ($2::bigint is null or seq < $2::bigint)
                    order by seq desc limit $3::bigint
                    """, [.uuid(id), before.map(PostgresValue.int64) ?? .null, .int64(Int64(size + 1))])
            }
        }
        return try mappingErrors { () throws(PostgresError) -> LedgerPage in
            var entries: [LedgerRecord] = []
            var lastSequence: Int64 = 0
            for row in rows.prefix(size) {
                entries.append(
                    LedgerRecord(
                        id: try row.uuid("id"), eventId: try row.string("event_id"),
                        changeType: try row.string("change_type"),
                        direction: Int32(try row.int64("direction")), amount: try row.int64("amount"),
                        balanceAfter: try row.int64("balance_after"), bizType: try row.string("biz_type"),
                        bizId: try row.string("biz_id"), metadataJSON: try row.json("metadata"),
                        createdAtUnixMilliseconds: try row.int64("created_at_ms")))
                lastSequence = try row.int64("seq")
            }
            let more = rows.count > size
            return LedgerPage(
                entries: entries, nextPageToken: more ? LedgerPageToken.encode(lastSequence: lastSequence) : "")
        }
    }

    // MARK: Commands

    /// Credits a purchase exactly once per event id. A regular package is one
    /// autocommitted statement (`GrantStatement`, or with the grants that
    /// arrived meanwhile, one `GrantBatchStatement`: `CommitBatcher`): the
    /// database's unique event id decides a replay, which is then answered
    /// from the stored row. A starter pack also locks its email identity's
    /// claim, in one transaction (`applyStarterGrant`). A grant the catalog
    /// refuses now (a product since removed or changed) is answered from its
    /// stored row when it was credited before: its reply may have been lost
    /// before the catalog changed, and the saga must see it applied.
    func grant(_ request: GrantRequest) async throws(PointsError) -> GrantResult {
        let identity = try ValidatedGrant.Identity(request: request)
        let grant: ValidatedGrant
        do {
            grant = try ValidatedGrant(identity, catalog: catalog)
        } catch {
            if let replay = try await storedGrant(identity) { return replay }
            throw error
        }
        let result: GrantResult
        if grant.package.kind == .starter {
            result = try await retryingUniqueRaces {
                try await self.pool.withTransaction { transaction in
                    let result = try await self.applyStarterGrant(grant, in: transaction)
                    FaultInjection.hit("points.grant_before_commit")
                    return result
                }
            }
        } else {
            switch await grantBatcher.submit(grant) {
            case .outcome(let outcome):
                result = try Self.grantResult(grant, outcome)
            case .runAlone:
                result = try await grantAlone(grant)
            }
        }
        FaultInjection.hit("points.grant_after_commit")
        return result
    }

    /// A regular grant on its own: the statement, then a replay or a
    /// conflict when the event id is taken, and again on a fresh connection
    /// when the pooled one was found dead.
    private func grantAlone(_ grant: ValidatedGrant) async throws(PointsError) -> GrantResult {
        try await retryingUniqueRaces {
            do {
                return try await self.pool.withConnection { connection in
                    // The statement is its own transaction: dying here is dying before the commit.
                    FaultInjection.hit("points.grant_before_commit")
                    return try await self.runGrantStatement(grant, in: connection)
                }
            } catch let error as PostgresError where error.isUniqueViolation {
                // The event id is taken: answer as a replay or a conflict.
                return try await self.pool.withConnection { connection in
                    try await self.replayedGrant(grant, in: connection)
                }
            } catch let error as PostgresError where error.isConnectionLoss {
                // A pooled connection found dead (e.g. after a database
                // restart): running the grant again on a fresh one is safe,
                // because the event id makes it apply at most once.
                throw RetryAttempt.connectionLost
            }
        }
    }

    /// Takes a purchase back exactly once (see `applyClawback`).
    func clawback(_ command: ClawbackCommand) async throws(PointsError) -> ClawbackResult {
        let clawback = try command.validated()
        let result = try await retryingUniqueRaces {
            try await self.pool.withTransaction { transaction in try await self.applyClawback(clawback, in: transaction)
            }
        }
        // Committed, not yet answered: the caller's reply is lost (tests of "outcome unknown").
        FaultInjection.hit("points.clawback_after_commit")
        return result
    }

    /// Gives back what a clawback deducted, once (see `applyReversal`).
    func reverseClawback(_ command: ReverseClawbackCommand) async throws(PointsError) -> ReverseClawbackResult {
        let reversal = try command.validated()
        return try await retryingUniqueRaces {
            try await self.pool.withTransaction { transaction in try await self.applyReversal(reversal, in: transaction)
            }
        }
    }

    /// Spends credits once per event id, never below zero: one autocommitted
    /// call of `SpendStatement` (a round trip, the account locked only inside
    /// the database). Lots that disagree with the balance (rows written
    /// outside this store) make it write nothing; the spend then runs in a
    /// transaction that heals them first (`applySpend`).
    ///
    /// Spends are not batched like grants (`CommitBatcher`): measured, a
    /// batch gained nothing, because a spend's cost is the function's own
    /// work in the database (about 0.4 ms), not its round trip or commit.
    func spend(_ command: SpendCommand) async throws(PointsError) -> SpendResult {
        let spend = try command.validated()
        return try await retryingUniqueRaces {
            let answer: SpendResult?
            do {
                let outcome: SpendBatchStatement.Outcome
                switch await self.spendBatcher.submit(spend) {
                case .outcome(let decided):
                    outcome = decided
                case .runAlone:
                    outcome = try await self.pool.withConnection {
                        try await SpendBatchStatement.execute([spend], on: $0)[0]
                    }
                }
                answer = try await self.spendResult(spend, outcome: outcome.decision, balance: outcome.balance)
            } catch let error as PostgresError where error.isConnectionLoss {
                // Safe to run again on a fresh connection: the event id makes it apply at most once.
                throw RetryAttempt.connectionLost
            }
            if let answer { return answer }
            return try await self.pool.withTransaction { transaction in
                try await self.applySpend(spend, in: transaction)
            }
        }
    }

    /// Gives a spend back once (see `applySpendReversal`).
    func reverseSpend(_ command: ReverseSpendCommand) async throws(PointsError) -> ReverseSpendResult {
        let reversal = try command.validated()
        return try await retryingUniqueRaces {
            try await self.pool.withTransaction { transaction in
                try await self.applySpendReversal(reversal, in: transaction)
            }
        }
    }

    /// An operator's adjustment (`PointsService adjust`), once per event id:
    /// one `adjust` ledger row (biz_type support) and the account's new
    /// balance and lifetime_earned, in one transaction under the account lock.
    func adjust(_ command: AdjustCommand) async throws(PointsError) -> AdjustResult {
        try await adjust(try command.validated())
    }

    func adjust(_ adjustment: ValidatedAdjustment) async throws(PointsError) -> AdjustResult {
        try await retryingUniqueRaces {
            try await self.pool.withTransaction { transaction in
                try await self.applyAdjustment(adjustment, in: transaction)
            }
        }
    }

    // MARK: Transactions

    /// The answer of a grant stored before under `identity`'s event id (a
    /// replay, or a conflict when its content differs); nil when none is.
    private func storedGrant(_ identity: ValidatedGrant.Identity) async throws(PointsError) -> GrantResult? {
        try await mappingErrors {
            try await self.pool.withConnection { connection in
                try await self.storedGrant(eventId: identity.eventId, fingerprint: identity.fingerprint, in: connection)
            }
        }
    }

    /// The grant whose statement found its event id taken: a replay or a conflict.
    private func replayedGrant(_ grant: ValidatedGrant, in connection: PostgresConnection) async throws -> GrantResult {
        guard let answer = try await storedGrant(eventId: grant.eventId, fingerprint: grant.fingerprint, in: connection)
        else {
            // The row that collided is gone (its transaction rolled back): try again.
            throw RetryAttempt.racedARolledBackGrant
        }
        return answer
    }

    /// A stored grant's answer to a grant sent again (replay), or a conflict
    /// when the event id holds other content; nil when nothing is stored.
    private func storedGrant(eventId: String, fingerprint: String, in connection: PostgresConnection) async throws
        -> GrantResult?
    {
        let stored = try await findEvent(eventId, in: connection)
        switch ReplayDecision.decide(
            stored: stored.map { ($0.changeType, $0.fingerprint) },
            expectedChangeType: "purchase", fingerprint: fingerprint)
        {
        case .replay:
            let first = stored!
            return GrantResult(
                eventId: eventId, replayed: true, creditsAdded: first.amount, balanceAfter: first.balanceAfter,
                balance: try await currentBalance(first.userId, in: connection), ledgerEntryId: first.id)
        case .conflict(let problem):
            throw PointsError.eventConflict(eventId: eventId, problem: problem)
        case .apply:
            return nil
        }
    }

    /// Adds the credits and writes the purchase row in one statement.
    private func runGrantStatement(_ grant: ValidatedGrant, in connection: PostgresConnection) async throws
        -> GrantResult
    {
        try Self.grantResult(
            grant,
            try GrantStatement.outcome(try await connection.query(GrantStatement.sql, GrantStatement.parameters(grant)))
        )
    }

    /// The answer to a grant its statement applied, or the refusal at the balance cap.
    private static func grantResult(_ grant: ValidatedGrant, _ outcome: GrantBatchStatement.Outcome) throws(PointsError)
        -> GrantResult
    {
        switch outcome {
        case .applied(let ledgerEntryId, let balanceAfter):
            return GrantResult(
                eventId: grant.eventId, replayed: false, creditsAdded: grant.credits, balanceAfter: balanceAfter,
                balance: balanceAfter, ledgerEntryId: ledgerEntryId)
        case .refusedAtBalanceMax:
            throw PointsError.balanceLimitReached(credits: grant.credits)
        }
    }

    /// Claim lock, replay check, eligibility, then the grant statement and
    /// the claim's mark: one transaction. The claim is locked BEFORE the
    /// event id is looked up: a second submission of the same grant waits
    /// here for the first to commit, then finds its row and answers as a
    /// replay, instead of finding the identity marked and answering
    /// STARTER_PACK_INELIGIBLE for a grant that was credited.
    private func applyStarterGrant(_ grant: ValidatedGrant, in transaction: PostgresConnection) async throws
        -> GrantResult
    {
        let alreadyPurchased = try await lockStarterClaim(grant, in: transaction)
        if try await findEvent(grant.eventId, in: transaction) != nil {
            return try await replayedGrant(grant, in: transaction)
        }
        if alreadyPurchased { throw PointsError.starterPackIneligible }
        let result = try await runGrantStatement(grant, in: transaction)
        if let emailHash = grant.emailHash {
            try await transaction.query(
                """
                update register_bonus_claims set has_purchased_starter_pack = true, grant_event_id = $2, updated_at = now()
                where email_hash = $1
                """, [.text(emailHash), .text(grant.eventId)])
        }
        return result
    }

    /// Creates or locks the email identity's claim for the rest of the
    /// transaction; returns whether the identity already bought the starter pack.
    private func lockStarterClaim(_ grant: ValidatedGrant, in transaction: PostgresConnection) async throws -> Bool {
        guard let emailHash = grant.emailHash else {
            throw PointsError.validationFailed(field: "email_hash", problem: "is required for a starter pack")
        }
        // Creates or locks the claim in one statement (the no-op DO UPDATE
        // takes the row lock and returns the latest committed flag).
        return try await transaction.query(
            """
            insert into register_bonus_claims (email_hash, has_purchased_starter_pack, user_email_snapshot, first_user_id_snapshot)
            values ($1, false, nullif($2, ''), $3::uuid)
            on conflict (email_hash) do update set email_hash = excluded.email_hash
            returning has_purchased_starter_pack
            """, [.text(emailHash), .text(grant.emailMasked), .uuid(grant.userId)]
        ).first!.bool("has_purchased_starter_pack")
    }

    /// Lock the account, then: find the purchase, replay check, refuse a
    /// second unreversed clawback of the purchase, deduct what is there,
    /// record overdue. Taking the lock first serializes every clawback of
    /// the user's purchases (and two submissions of one event id): each
    /// statement after it sees what the others committed (READ COMMITTED),
    /// so the checks below cannot race. The purchase is read before the
    /// replay check because the fingerprint depends on its credits.
    private func applyClawback(_ clawback: ValidatedClawback, in transaction: PostgresConnection) async throws
        -> ClawbackResult
    {
        let account = try await lockAccount(clawback.userId, in: transaction)
        let purchase = try await findEvent(clawback.originalEventId, in: transaction)
            .flatMap { $0.changeType == "purchase" && $0.userId == clawback.userId ? $0 : nil }
        let fingerprint = clawback.fingerprint(purchaseCredits: purchase?.amount)
        let stored = try await findEvent(clawback.eventId, in: transaction)
        switch ReplayDecision.decide(
            stored: stored.map { ($0.changeType, $0.fingerprint) },
            expectedChangeType: "refund", fingerprint: fingerprint)
        {
        case .replay:
            let first = stored!
            return ClawbackResult(
                eventId: clawback.eventId, replayed: true, creditsDeducted: first.amount,
                overdueAmount: first.overdueAmount, balance: try await currentBalance(first.userId, in: transaction))
        case .conflict(let problem):
            throw PointsError.eventConflict(eventId: clawback.eventId, problem: problem)
        case .apply:
            break
        }
        guard let purchase else { throw PointsError.eventNotFound(eventId: clawback.originalEventId) }
        let amount = try ClawbackPlan.amountToTakeBack(requested: clawback.amount, purchaseCredits: purchase.amount)
        let history = try await refundHistory(purchaseEventId: clawback.originalEventId, in: transaction)
        guard history.unreversed == 0 else {
            throw PointsError.eventConflict(
                eventId: clawback.eventId, problem: "the purchase has a clawback that is not reversed")
        }
        let plan = try ClawbackPlan.make(
            balance: account.balance, lifetimeEarned: account.lifetimeEarned, amount: amount)
        // What is left of the purchase goes first, then the user's other credits, oldest first;
        // what those others give in place of the purchase's spent credits counts as spent from them.
        let lots = try await CreditLotLedger.openLots(clawback.userId, balance: account.balance, in: transaction).lots
        let taken = CreditLots.take(plan.creditsDeducted, from: lots, preferring: clawback.originalEventId)
        let spentElsewhere = CreditLots.spentElsewhere(
            taken: taken, purchase: clawback.originalEventId,
            purchaseSpent: try await CreditLotLedger.spent(
                clawback.originalEventId, of: clawback.userId, in: transaction))
        try await CreditLotLedger.move(
            taken, of: clawback.userId, eventId: clawback.eventId, taking: true, countsAsSpent: false, in: transaction)
        try await CreditLotLedger.shiftSpent(spentElsewhere, of: clawback.userId, adding: true, in: transaction)
        _ = try await appendLedgerEntry(
            columns:
                "user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id, related_event_id, request_fingerprint, metadata",
            values: "$1::uuid, $2, 'refund', -1, $3::bigint, $4::bigint, 'payment', $5, $6, $7, $8::jsonb",
            parameters: [
                .uuid(clawback.userId), .text(clawback.eventId), .int64(plan.creditsDeducted),
                .int64(plan.balanceAfter),
                .text(clawback.bizId), .text(clawback.originalEventId), .text(fingerprint),
                .json(
                    LedgerMetadata.refund(
                        clawback, plan: plan, requestedAmount: amount, purchaseCredits: purchase.amount,
                        cycle: history.refunds + 1,
                        spentAttributed: spentElsewhere.reduce(0) { $0 + $1.amount })),
                .int64(plan.balanceAfter), .int64(plan.lifetimeEarnedAfter),
            ],
            in: transaction)
        return ClawbackResult(
            eventId: clawback.eventId, replayed: false, creditsDeducted: plan.creditsDeducted,
            overdueAmount: plan.overdueAmount, balance: plan.balanceAfter)
    }

    /// Replay check, find the clawback, lock the account, restore exactly
    /// what it took: its deduction and what settlements paid of its overdue.
    private func applyReversal(_ reversal: ValidatedReversal, in transaction: PostgresConnection) async throws
        -> ReverseClawbackResult
    {
        let stored = try await findEvent(reversal.eventId, in: transaction)
        switch ReplayDecision.decide(
            stored: stored.map { ($0.changeType, $0.fingerprint) },
            expectedChangeType: "refund_reversal", fingerprint: reversal.fingerprint)
        {
        case .replay:
            let first = stored!
            return ReverseClawbackResult(
                eventId: reversal.eventId, replayed: true, creditsRestored: first.amount,
                balance: try await currentBalance(first.userId, in: transaction))
        case .conflict(let problem):
            throw PointsError.eventConflict(eventId: reversal.eventId, problem: problem)
        case .apply:
            break
        }
        guard let refund = try await findEvent(reversal.clawbackEventId, in: transaction),
            refund.changeType == "refund", refund.userId == reversal.userId
        else {
            throw PointsError.eventNotFound(eventId: reversal.clawbackEventId)
        }
        if try await isReversed(clawbackEventId: reversal.clawbackEventId, in: transaction) {
            throw PointsError.eventConflict(
                eventId: reversal.eventId, problem: "the clawback was already reversed by another event")
        }
        let account = try await lockAccount(reversal.userId, in: transaction)
        // What spend reversals settled of its overdue was taken by the clawback too: it comes back with the deduction.
        let settled = try await settlements(of: reversal.clawbackEventId, reversal.userId, in: transaction)
        let plan = try ReversalPlan.make(
            balance: account.balance, lifetimeEarned: account.lifetimeEarned, clawbackDeducted: refund.amount,
            overdueSettled: settled.reduce(0) { $0 + $1.amount })
        _ = try await CreditLotLedger.openLots(reversal.userId, balance: account.balance, in: transaction)
        // What the clawback counted as spent from other lots (the same shares: its movements in lot order) first,
        // so no lot holds more than it was credited while the credits go back.
        try await CreditLotLedger.shiftSpent(
            CreditLots.spentElsewhere(
                taken: try await movements(of: reversal.clawbackEventId, in: transaction),
                purchase: refund.relatedEventId, purchaseSpent: refund.spentAttributed),
            of: reversal.userId, adding: false, in: transaction)
        _ = try await CreditLotLedger.restore(
            reversal.clawbackEventId, amount: refund.amount, of: reversal.userId,
            countsAsSpent: false, in: transaction)
        for settlement in settled {
            _ = try await CreditLotLedger.restore(
                settlement.sourceEventId, amount: settlement.amount, of: reversal.userId,
                countsAsSpent: false, in: transaction)
        }
        _ = try await appendLedgerEntry(
            columns:
                "user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id, related_event_id, request_fingerprint, metadata",
            values: "$1::uuid, $2, 'refund_reversal', 1, $3::bigint, $4::bigint, 'payment', $5, $6, $7, $8::jsonb",
            parameters: [
                .uuid(reversal.userId), .text(reversal.eventId), .int64(plan.creditsRestored),
                .int64(plan.balanceAfter),
                .text(reversal.bizId), .text(reversal.clawbackEventId), .text(reversal.fingerprint),
                .json(LedgerMetadata.reversal(reversal, plan: plan)),
                .int64(plan.balanceAfter), .int64(plan.lifetimeEarnedAfter),
            ],
            in: transaction)
        return ReverseClawbackResult(
            eventId: reversal.eventId, replayed: false, creditsRestored: plan.creditsRestored,
            balance: plan.balanceAfter)
    }

    /// Lock the account, then replay check (under the lock, so a concurrent
    /// run of the same command waits and answers as a replay), then the plan
    /// (a negative adjustment beyond the balance is refused) and the row.
    private func applyAdjustment(_ adjustment: ValidatedAdjustment, in transaction: PostgresConnection) async throws
        -> AdjustResult
    {
        let account = try await lockAccount(adjustment.userId, in: transaction)
        let stored = try await findEvent(adjustment.eventId, in: transaction)
        switch ReplayDecision.decide(
            stored: stored.map { ($0.changeType, $0.fingerprint) },
            expectedChangeType: "adjust", fingerprint: adjustment.fingerprint)
        {
        case .replay:
            let first = stored!
            return AdjustResult(
                eventId: adjustment.eventId, userId: adjustment.userId, amount: adjustment.amount,
                balanceBefore: first.balanceAfter - adjustment.amount, balanceAfter: first.balanceAfter,
                replayed: true, ledgerEntryId: first.id)
        case .conflict(let problem):
            throw PointsError.eventConflict(eventId: adjustment.eventId, problem: problem)
        case .apply:
            break
        }
        let plan = try AdjustmentPlan.make(
            balance: account.balance, lifetimeEarned: account.lifetimeEarned, amount: adjustment.amount)
        let lots = try await CreditLotLedger.openLots(adjustment.userId, balance: account.balance, in: transaction).lots
        if adjustment.amount > 0 {
            try await CreditLotLedger.addLot(
                adjustment.userId, sourceEventId: adjustment.eventId, credits: adjustment.amount, in: transaction)
        } else {
            try await CreditLotLedger.move(
                CreditLots.take(-adjustment.amount, from: lots), of: adjustment.userId, eventId: adjustment.eventId,
                taking: true, countsAsSpent: false, in: transaction)
        }
        let id = try await appendLedgerEntry(
            columns:
                "user_id, event_id, change_type, direction, amount, balance_after, biz_type, request_fingerprint, metadata",
            values: "$1::uuid, $2, 'adjust', $3::smallint, $4::bigint, $5::bigint, 'support', $6, $7::jsonb",
            parameters: [
                .uuid(adjustment.userId), .text(adjustment.eventId), .int64(adjustment.amount > 0 ? 1 : -1),
                .int64(abs(adjustment.amount)),
                .int64(plan.balanceAfter), .text(adjustment.fingerprint), .json(LedgerMetadata.adjustment(adjustment)),
                .int64(plan.balanceAfter), .int64(plan.lifetimeEarnedAfter),
            ],
            in: transaction)
        return AdjustResult(
            eventId: adjustment.eventId, userId: adjustment.userId, amount: adjustment.amount,
            balanceBefore: plan.balanceBefore, balanceAfter: plan.balanceAfter, replayed: false, ledgerEntryId: id)
    }

    /// Lock the account, replay check (under the lock: a concurrent
    /// submission of the same spend waits, then answers as a replay), refuse
    /// to overdraw, take the credits from the lots oldest first, then the
    /// consume row and the account's figures in one statement.
    private func applySpend(_ spend: ValidatedSpend, in transaction: PostgresConnection) async throws -> SpendResult {
        // The function locks the account again (a no-op: this transaction holds it after the first call).
        let account = try await lockAccount(spend.userId, in: transaction)
        _ = try await CreditLotLedger.openLots(spend.userId, balance: account.balance, in: transaction)
        let (outcome, balance) = try await SpendStatement.run(spend, on: transaction)
        guard let result = try await spendResult(spend, outcome: outcome, balance: balance, in: transaction) else {
            throw PointsError.internalFailure(detail: "credit lots do not add up to the balance")
        }
        return result
    }

    /// `spendResult` for a spend's outcome, whoever ran it: a connection is
    /// taken only to read a stored event.
    private func spendResult(_ spend: ValidatedSpend, outcome: SpendStatement.Outcome, balance: Int64) async throws
        -> SpendResult?
    {
        guard outcome == .stored else { return try Self.newSpendResult(spend, outcome: outcome, balance: balance) }
        return try await pool.withConnection { connection in
            try await self.spendResult(spend, outcome: outcome, balance: balance, in: connection)
        }
    }

    /// The answer to a spend from `SpendStatement`'s outcome; nil for
    /// `.drift` (nothing was written: heal the lots and run it again).
    private func spendResult(
        _ spend: ValidatedSpend, outcome: SpendStatement.Outcome, balance: Int64,
        in connection: PostgresConnection
    ) async throws -> SpendResult? {
        guard outcome == .stored else { return try Self.newSpendResult(spend, outcome: outcome, balance: balance) }
        // A committed row never changes: read it (and its movements) without a lock.
        let stored = try await findEvent(spend.eventId, in: connection)
        switch ReplayDecision.decide(
            stored: stored.map { ($0.changeType, $0.fingerprint) },
            expectedChangeType: "consume", fingerprint: spend.fingerprint)
        {
        case .replay:
            let first = stored!
            return SpendResult(
                eventId: spend.eventId, replayed: true, amount: first.amount, balanceAfter: first.balanceAfter,
                balance: balance, ledgerEntryId: first.id,
                attributions: try await movements(of: spend.eventId, in: connection))
        case .conflict(let problem):
            throw PointsError.eventConflict(eventId: spend.eventId, problem: problem)
        case .apply:
            throw PointsError.internalFailure(detail: "points_spend found event \(spend.eventId) that is not there")
        }
    }

    /// The answer to a spend whose event id was not stored: applied, refused, or nil for `.drift`.
    private static func newSpendResult(_ spend: ValidatedSpend, outcome: SpendStatement.Outcome, balance: Int64) throws
        -> SpendResult?
    {
        switch outcome {
        case .applied(let entryId, let attribution):
            let balanceAfter = balance - spend.amount
            return SpendResult(
                eventId: spend.eventId, replayed: false, amount: spend.amount, balanceAfter: balanceAfter,
                balance: balanceAfter, ledgerEntryId: entryId, attributions: try shares(attribution))
        case .insufficient:
            throw PointsError.insufficientCredits(balance: balance)
        case .drift:
            return nil
        case .stored:
            preconditionFailure("a stored event is answered from the ledger")
        }
    }

    /// The attribution list a spend statement returns.
    static func shares(_ json: String) throws -> [LotShare] {
        guard case .array(let items) = try StrictJSONParser().parse(json) else { return [] }
        return items.compactMap { item in
            guard case .string(let source)? = item["source_event_id"], case .number(let amount)? = item["amount"],
                let value = Int64(amount.text)
            else { return nil }
            return LotShare(sourceEventId: source, amount: value)
        }
    }

    /// Lock the account, replay check, find the spend (this user's), refuse
    /// a second reversal, give back exactly what it took to the lots it took
    /// it from; what goes back to the lot of a purchase whose clawback is
    /// still owed credits settles that debt instead (`OverdueSettlement`).
    private func applySpendReversal(_ reversal: ValidatedSpendReversal, in transaction: PostgresConnection) async throws
        -> ReverseSpendResult
    {
        let account = try await lockAccount(reversal.userId, in: transaction)
        let stored = try await findEvent(reversal.eventId, in: transaction)
        switch ReplayDecision.decide(
            stored: stored.map { ($0.changeType, $0.fingerprint) },
            expectedChangeType: "consume_reversal", fingerprint: reversal.fingerprint)
        {
        case .replay:
            let first = stored!
            return ReverseSpendResult(
                eventId: reversal.eventId, replayed: true, creditsRestored: first.amount - first.overdueSettled,
                overdueSettled: first.overdueSettled, balance: account.balance)
        case .conflict(let problem):
            throw PointsError.eventConflict(eventId: reversal.eventId, problem: problem)
        case .apply:
            break
        }
        guard let spent = try await findEvent(reversal.spendEventId, in: transaction), spent.changeType == "consume",
            spent.userId == reversal.userId
        else {
            throw PointsError.eventNotFound(eventId: reversal.spendEventId)
        }
        if try await !transaction.query(
            "select 1 from points_ledger where change_type = 'consume_reversal' and related_event_id = $1",
            [.text(reversal.spendEventId)]
        ).isEmpty {
            throw PointsError.eventConflict(
                eventId: reversal.eventId, problem: "the spend was already given back by another event")
        }
        guard account.balance <= PointsLimits.balanceMax - spent.amount else {
            throw PointsError.balanceLimitReached(credits: spent.amount)
        }
        _ = try await CreditLotLedger.openLots(reversal.userId, balance: account.balance, in: transaction)
        let restored = try await CreditLotLedger.restore(
            reversal.spendEventId, amount: spent.amount, of: reversal.userId,
            countsAsSpent: true, in: transaction)
        let settlements = OverdueSettlement.plan(
            restored: restored,
            owed: try await owedClawbacks(
                reversal.userId, purchaseEventIds: restored.map(\.sourceEventId), in: transaction))
        let settled = settlements.reduce(0) { $0 + $1.amount }
        let balanceRestored = account.balance + spent.amount
        _ = try await appendSpendingEntry(
            columns:
                "user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id, related_event_id, request_fingerprint, metadata",
            values:
                "$1::uuid, $2, 'consume_reversal', 1, $3::bigint, $4::bigint, $5, nullif($6, ''), $7, $8, $9::jsonb",
            parameters: [
                .uuid(reversal.userId), .text(reversal.eventId), .int64(spent.amount), .int64(balanceRestored),
                .text(spent.bizType),
                .text(spent.bizId), .text(reversal.spendEventId), .text(reversal.fingerprint),
                .json(LedgerMetadata.spendReversal(reversal, overdueSettled: settled)),
                .int64(balanceRestored), .int64(max(0, account.lifetimeSpent - spent.amount)),
            ],
            in: transaction)
        let balanceAfter = try await settle(
            settlements, of: reversal, balance: balanceRestored, lifetimeEarned: account.lifetimeEarned,
            in: transaction)
        return ReverseSpendResult(
            eventId: reversal.eventId, replayed: false, creditsRestored: spent.amount - settled,
            overdueSettled: settled, balance: balanceAfter)
    }

    /// The unreversed clawbacks of `purchaseEventIds` still owed credits:
    /// each one's overdue at clawback time less what settlements paid since.
    /// Under the account lock, like every write of this user's ledger.
    private func owedClawbacks(_ userId: UUID, purchaseEventIds: [String], in transaction: PostgresConnection)
        async throws -> [OwedClawback]
    {
        guard !purchaseEventIds.isEmpty else { return [] }
        // The change types are literals so the partial indexes apply to the prepared statement's generic plan.
        return try await transaction.query(
            """
            select refund.event_id, refund.related_event_id, coalesce(refund.biz_id, '') as biz_id,
                   (coalesce((refund.metadata -> 'ext' ->> 'overdue_amount')::bigint, 0) - coalesce((
                       select sum(settlement.amount) from points_ledger settlement
                       where settlement.user_id = $1::uuid and settlement.change_type = 'refund_settlement'
                         and settlement.related_event_id = refund.event_id), 0))::bigint as outstanding
            from points_ledger refund
            where refund.change_type = 'refund' and refund.user_id = $1::uuid
              and refund.related_event_id = any(array(select jsonb_array_elements_text($2::jsonb)))
              and not exists (select 1 from points_ledger reversal
                              where reversal.change_type = 'refund_reversal' and reversal.related_event_id = refund.event_id)
            """, [.uuid(userId), .json(JSONWriter.string(of: .array(purchaseEventIds.map(JSONValue.string))))]
        ).map { row in
            OwedClawback(
                clawbackEventId: try row.string("event_id"), purchaseEventId: try row.string("related_event_id"),
                bizId: try row.string("biz_id"), outstanding: try row.int64("outstanding"))
        }
    }

    /// Writes each settlement: takes its credits back out of the purchase's
    /// lot (recorded as the settlement's movements, so the clawback's
    /// reversal gives them back) and one `refund_settlement` row, which
    /// lowers the balance and lifetime_earned as the clawback's deduction
    /// did. Returns the balance after them.
    private func settle(
        _ settlements: [OverdueSettlement], of reversal: ValidatedSpendReversal, balance: Int64, lifetimeEarned: Int64,
        in transaction: PostgresConnection
    ) async throws -> Int64 {
        var balance = balance
        var earned = lifetimeEarned
        for settlement in settlements {
            guard settlement.amount <= balance, settlement.amount <= earned else {
                throw PointsError.internalFailure(
                    detail: "a settlement of \(settlement.amount) exceeds the restored balance or lifetime_earned")
            }
            balance -= settlement.amount
            earned -= settlement.amount
            let eventId = OverdueSettlement.eventId(
                spendReversalEventId: reversal.eventId, clawbackEventId: settlement.clawbackEventId)
            try await CreditLotLedger.move(
                [LotShare(sourceEventId: settlement.purchaseEventId, amount: settlement.amount)],
                of: reversal.userId, eventId: eventId, taking: true, countsAsSpent: false, in: transaction)
            _ = try await appendLedgerEntry(
                columns:
                    "user_id, event_id, change_type, direction, amount, balance_after, biz_type, biz_id, related_event_id, request_fingerprint, metadata",
                values:
                    "$1::uuid, $2, 'refund_settlement', -1, $3::bigint, $4::bigint, 'payment', $5, $6, $7, $8::jsonb",
                parameters: [
                    .uuid(reversal.userId), .text(eventId), .int64(settlement.amount), .int64(balance),
                    .text(settlement.bizId),
                    .text(settlement.clawbackEventId), .text(reversal.fingerprint),
                    .json(LedgerMetadata.settlement(settlement, reversal: reversal)),
                    .int64(balance), .int64(earned),
                ],
                in: transaction)
        }
        return balance
    }

    /// The settlements that paid part of a clawback's overdue (event id, amount), oldest first.
    private func settlements(of clawbackEventId: String, _ userId: UUID, in transaction: PostgresConnection)
        async throws -> [LotShare]
    {
        try await transaction.query(
            """
            select event_id, amount from points_ledger
            where user_id = $1::uuid and change_type = 'refund_settlement' and related_event_id = $2 order by seq
            """, [.uuid(userId), .text(clawbackEventId)]
        ).map { LotShare(sourceEventId: try $0.string("event_id"), amount: try $0.int64("amount")) }
    }

    /// The lots an event took credits from, oldest first.
    private func movements(of eventId: String, in transaction: PostgresConnection) async throws -> [LotShare] {
        try await transaction.query(
            """
            select m.source_event_id, m.amount from lot_movements m
            join credit_lots lot on lot.user_id = m.user_id and lot.source_event_id = m.source_event_id
            where m.event_id = $1 order by lot.seq
            """, [.text(eventId)]
        ).map { LotShare(sourceEventId: try $0.string("source_event_id"), amount: try $0.int64("amount")) }
    }

    // MARK: Statements

    private struct LockedAccount {
        let balance: Int64
        let lifetimeEarned: Int64
        let lifetimeSpent: Int64
    }

    private func findEvent(_ eventId: String, in transaction: PostgresConnection) async throws -> StoredLedgerEvent? {
        guard let row = try await transaction.query(StoredLedgerEvent.selectSQL, [.text(eventId)]).first else {
            return nil
        }
        return try StoredLedgerEvent(row: row)
    }

    /// Whether a clawback already has its reversal (one per clawback; the
    /// unique index points_ledger_reversal_unique backs it).
    private func isReversed(clawbackEventId: String, in transaction: PostgresConnection) async throws -> Bool {
        // The change type is a literal so the partial index applies to the prepared statement's generic plan.
        try await !transaction.query(
            "select 1 from points_ledger where change_type = 'refund_reversal' and related_event_id = $1",
            [.text(clawbackEventId)]
        ).isEmpty
    }

    /// How many clawbacks a purchase has had, and how many of them are not
    /// reversed (at most one, which `applyClawback` keeps under the account lock).
    private func refundHistory(purchaseEventId: String, in transaction: PostgresConnection) async throws -> (
        refunds: Int64, unreversed: Int64
    ) {
        let row = try await transaction.query(
            """
            select count(*) as refunds,
                   count(*) filter (where not exists (
                       select 1 from points_ledger reversal
                       where reversal.change_type = 'refund_reversal' and reversal.related_event_id = refund.event_id)) as unreversed
            from points_ledger refund
            where refund.change_type = 'refund' and refund.related_event_id = $1
            """, [.text(purchaseEventId)]
        ).first!
        return (try row.int64("refunds"), try row.int64("unreversed"))
    }

    private func currentBalance(_ userId: UUID, in transaction: PostgresConnection) async throws -> Int64 {
        try await transaction.query("select balance from user_points where user_id = $1::uuid", [.uuid(userId)]).first?
            .int64("balance") ?? 0
    }

    /// Creates the account row if needed and locks it for the rest of the
    /// transaction, in one statement: the no-op DO UPDATE takes the row lock
    /// (as `SELECT ... FOR UPDATE` would) and returns the current figures.
    private func lockAccount(_ userId: UUID, in transaction: PostgresConnection) async throws -> LockedAccount {
        let row = try await transaction.query(
            """
            insert into user_points (user_id) values ($1::uuid)
            on conflict (user_id) do update set user_id = excluded.user_id
            returning balance, lifetime_earned, lifetime_spent
            """, [.uuid(userId)]
        ).first!
        return LockedAccount(
            balance: try row.int64("balance"), lifetimeEarned: try row.int64("lifetime_earned"),
            lifetimeSpent: try row.int64("lifetime_spent"))
    }

    /// Writes one ledger row and the account's new figures in one statement
    /// (a data-modifying CTE runs exactly once), returning the row's id.
    /// `columns`/`values` are the ledger insert's; `$1` must be the user id
    /// and the last two parameters the new balance and lifetime_earned.
    private func appendLedgerEntry(
        columns: String, values: String, parameters: [PostgresValue], in transaction: PostgresConnection
    ) async throws -> UUID {
        let balanceIndex = parameters.count - 1
        let rows = try await transaction.query(
            """
            with entry as (insert into points_ledger (\(columns)) values (\(values)) returning id),
                 account as (update user_points set balance = $\(balanceIndex)::bigint, lifetime_earned = $\(balanceIndex + 1)::bigint,
                                 updated_at = now() where user_id = $1::uuid)
            select id from entry
            """, parameters)
        return try rows.first!.uuid("id")
    }

    /// As `appendLedgerEntry`, for spending: the last two parameters are the
    /// new balance and lifetime_spent.
    private func appendSpendingEntry(
        columns: String, values: String, parameters: [PostgresValue], in transaction: PostgresConnection
    ) async throws -> UUID {
        let balanceIndex = parameters.count - 1
        let rows = try await transaction.query(
            """
            with entry as (insert into points_ledger (\(columns)) values (\(values)) returning id),
                 account as (update user_points set balance = $\(balanceIndex)::bigint, lifetime_spent = $\(balanceIndex + 1)::bigint,
                                 updated_at = now() where user_id = $1::uuid)
            select id from entry
            """, parameters)
        return try rows.first!.uuid("id")
    }

    // MARK: Errors

    /// Why the store runs an attempt again on its own (an internal signal,
    /// never a made-up database error).
    private enum RetryAttempt: Error {
        /// A pooled connection was found dead (e.g. after a database restart):
        /// running the idempotent write again on a fresh one is safe.
        case connectionLost
        /// A grant's event id collided with a row whose transaction then
        /// rolled back: nothing was applied, try again.
        case racedARolledBackGrant
    }

    /// Re-runs a transaction that lost a race on a unique key or a lock (the
    /// next attempt sees the winner's row and answers as a replay), that ran
    /// a statement prepared before a migration changed its result's types
    /// (it is prepared afresh), or that asked to be run again
    /// (`RetryAttempt`), a bounded number of times.
    private func retryingUniqueRaces<Value>(_ body: () async throws -> Value) async throws(PointsError) -> Value {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch let error as PostgresError
                where (error.isUniqueViolation || error.isSerializationFailure || error.code == .staleStatement)
                && attempt < PointsLimits.uniqueRaceAttemptsMax
            {
                attempt += 1
            } catch let signal as RetryAttempt {
                guard attempt < PointsLimits.uniqueRaceAttemptsMax else {
                    throw signal == .connectionLost
                        ? PointsError.databaseUnavailable(detail: "connection lost \(attempt) times")
                        : PointsError.internalFailure(detail: "grant kept racing rolled-back grants")
                }
                attempt += 1
            } catch {
                throw Self.pointsError(from: error)
            }
        }
    }

    /// Runs a read, once more on a fresh connection if the first one was found
    /// dead (a read has no effect to repeat), so a database restart costs no error.
    private func reading<Value>(_ body: () async throws -> Value) async throws(PointsError) -> Value {
        do {
            return try await body()
        } catch let error as PostgresError where error.isConnectionLoss {
            return try await mappingErrors(body)
        } catch {
            throw Self.pointsError(from: error)
        }
    }

    private func mappingErrors<Value>(_ body: () async throws -> Value) async throws(PointsError) -> Value {
        do {
            return try await body()
        } catch {
            throw Self.pointsError(from: error)
        }
    }

    private func mappingErrors<Value>(_ body: () throws(PostgresError) -> Value) throws(PointsError) -> Value {
        do {
            return try body()
        } catch {
            throw Self.pointsError(from: error)
        }
    }

    /// Domain errors pass through; outages and overload are DATABASE_UNAVAILABLE; the rest is a bug.
    static func pointsError(from error: any Error) -> PointsError {
        if let error = error as? PointsError { return error }
        guard let error = error as? PostgresError else { return .internalFailure(detail: String(describing: error)) }
        // A stale statement (a migration changed a type it returns) runs again once prepared afresh: transient too.
        let unavailableCodes: [PostgresError.Code] = [
            .connectionFailed, .timeout, .poolExhausted, .poolClosed, .staleStatement,
        ]
        if error.isConnectionLoss || unavailableCodes.contains(error.code) || error.isSerializationFailure {
            return .databaseUnavailable(detail: error.description)
        }
        if let sqlState = error.sqlState, sqlState == "57014" || sqlState == "55P03" || sqlState.hasPrefix("53") {
            return .databaseUnavailable(detail: error.description)
        }
        return .internalFailure(detail: error.description)
    }
}
