import PostgresClient
import ServiceKitDatabase

/// PointsService's database schema as versioned migrations (applied at
/// start-up by `PostgresMigrator`). Never edit an applied migration: add one.
enum PointsSchema {
    /// The advisory lock key serialising PointsService migration runners.
    static let migrationLockKey: Int64 = 0x706F_696E_7473_0001

    static let migrations: [PostgresMigration] = [
        PostgresMigration(
            version: 1, name: "points_core",
            sql: """
                create table user_points (
                    user_id uuid primary key,
                    balance bigint not null default 0 check (balance >= 0),
                    lifetime_earned bigint not null default 0 check (lifetime_earned >= 0),
                    lifetime_spent bigint not null default 0 check (lifetime_spent >= 0),
                    created_at timestamptz not null default now(),
                    updated_at timestamptz not null default now()
                );

                create table points_ledger (
                    id uuid primary key default gen_random_uuid(),
                    -- Insertion order: rows of one user are written under that user's row lock,
                    -- so seq orders them exactly; ListLedger pages on it.
                    seq bigint generated always as identity unique,
                    user_id uuid not null references user_points (user_id),
                    event_id varchar(200) not null check (event_id <> ''),
                    change_type varchar(32) not null
                        check (change_type in ('register', 'consume', 'grant', 'adjust', 'purchase', 'refund', 'refund_reversal')),
                    direction smallint not null check (direction in (1, -1)),
                    amount bigint not null check (amount >= 0),
                    balance_after bigint not null check (balance_after >= 0),
                    biz_type varchar(32) not null check (biz_type in ('chat', 'payment')),
                    biz_id varchar(200),
                    -- The purchase a refund takes back, or the refund a reversal undoes.
                    related_event_id varchar(200),
                    -- SHA-256 of the request's identifying fields: same id + other content = conflict.
                    request_fingerprint varchar(64) not null,
                    metadata jsonb not null default '{}'::jsonb,
                    created_at timestamptz not null default clock_timestamp(),
                    constraint points_ledger_user_event_unique unique (user_id, event_id),
                    constraint points_ledger_event_unique unique (event_id),
                    constraint points_ledger_purchase_direction check (change_type <> 'purchase' or direction = 1),
                    constraint points_ledger_refund_direction check (change_type <> 'refund' or direction = -1),
                    constraint points_ledger_refund_reversal_direction check (change_type <> 'refund_reversal' or direction = 1),
                    constraint points_ledger_payment_biz check (
                        change_type not in ('purchase', 'refund', 'refund_reversal')
                        or (biz_type = 'payment' and biz_id is not null and biz_id <> '')),
                    constraint points_ledger_related_event check (
                        change_type not in ('refund', 'refund_reversal') or related_event_id is not null)
                );
                -- One refund per purchase, one reversal per refund.
                create unique index points_ledger_related_event_unique
                    on points_ledger (change_type, related_event_id) where related_event_id is not null;
                create index points_ledger_user_seq on points_ledger (user_id, seq desc);

                create table register_bonus_claims (
                    email_hash varchar(64) primary key check (email_hash ~ '^[0-9a-f]{64}$'),
                    has_purchased_starter_pack boolean not null default false,
                    -- Masked only (a***@example.com); the address itself is never stored.
                    user_email_snapshot varchar(320),
                    first_user_id_snapshot uuid not null,
                    grant_event_id varchar(200),
                    created_at timestamptz not null default now(),
                    updated_at timestamptz not null default now()
                );
                """),
        // A purchase may be clawed back again once its previous clawback was
        // reversed (Apple: REFUND, REFUND_REVERSED, REFUND, ...): one refund
        // per purchase becomes at most one UNREVERSED refund per purchase,
        // which the store checks under the account's row lock (a partial
        // unique index cannot see whether another row reverses it). One
        // reversal per refund stays unique.
        PostgresMigration(
            version: 2, name: "refund_cycles",
            sql: """
                drop index points_ledger_related_event_unique;
                create unique index points_ledger_reversal_unique
                    on points_ledger (related_event_id) where change_type = 'refund_reversal';
                -- A purchase's refunds, for the one-unreversed check.
                create index points_ledger_refund_related
                    on points_ledger (related_event_id) where change_type = 'refund';
                """),
        // Operator adjustments (`PointsService adjust`) are `adjust` rows of
        // biz_type 'support' (and only they are). The new checks only widen
        // the old one or concern the new biz_type, so every stored row passes.
        PostgresMigration(
            version: 3, name: "support_adjustments",
            sql: """
                alter table points_ledger drop constraint points_ledger_biz_type_check;
                alter table points_ledger add constraint points_ledger_biz_type_check
                    check (biz_type in ('chat', 'payment', 'support'));
                alter table points_ledger add constraint points_ledger_support_biz
                    check (biz_type <> 'support' or change_type = 'adjust');
                """),
        // Spending (Points.Spend/ReverseSpend) and attribution: credit_lots
        // holds, per user, each source of credits (a purchase, an operator's
        // credit, the balance held before this migration as an "opening"
        // lot) and what is left of it; the lots add up to the balance.
        // lot_movements records which lots a spend, a clawback or a
        // negative adjustment took from, so undoing it restores exactly
        // those. Spends name what they were for (biz_type); "payment" and
        // "support" stay the ledger's own.
        PostgresMigration(
            version: 4, name: "spending_and_attribution",
            sql: """
                create table credit_lots (
                    user_id uuid not null references user_points (user_id),
                    source_event_id varchar(200) not null,
                    seq bigint generated always as identity,
                    credited bigint not null check (credited >= 0),
                    remaining bigint not null check (remaining >= 0),
                    spent bigint not null default 0 check (spent >= 0),
                    created_at timestamptz not null default now(),
                    primary key (user_id, source_event_id),
                    check (remaining + spent <= credited)
                );
                create index credit_lots_open on credit_lots (user_id, seq) where remaining > 0;
                create table lot_movements (
                    event_id varchar(200) not null,
                    source_event_id varchar(200) not null,
                    user_id uuid not null,
                    amount bigint not null check (amount > 0),
                    primary key (event_id, source_event_id)
                );
                insert into credit_lots (user_id, source_event_id, credited, remaining)
                select user_id, 'opening:' || user_id::text, balance, balance from user_points where balance > 0;

                alter table points_ledger drop constraint points_ledger_biz_type_check;
                alter table points_ledger add constraint points_ledger_biz_type_check check (biz_type ~ '^[a-z][a-z0-9_]{0,31}$');
                alter table points_ledger add constraint points_ledger_payment_biz_only
                    check (biz_type <> 'payment' or change_type in ('purchase', 'refund', 'refund_reversal'));
                alter table points_ledger drop constraint points_ledger_change_type_check;
                alter table points_ledger add constraint points_ledger_change_type_check check (change_type in
                    ('register', 'consume', 'consume_reversal', 'grant', 'adjust', 'purchase', 'refund', 'refund_reversal'));
                alter table points_ledger add constraint points_ledger_consume_direction check (change_type <> 'consume' or direction = -1);
                alter table points_ledger add constraint points_ledger_consume_reversal_direction
                    check (change_type <> 'consume_reversal' or (direction = 1 and related_event_id is not null));
                -- One reversal per spend.
                create unique index points_ledger_consume_reversal_unique
                    on points_ledger (related_event_id) where change_type = 'consume_reversal';
                """),
        // A spend in one round trip (`SpendStatement`): the whole spend runs
        // in this function, so the account's row lock is held only while the
        // server works, never across a network round trip, and each statement
        // after the lock takes a fresh snapshot (READ COMMITTED, a VOLATILE
        // function), so it sees every committed change of this user's lots
        // and ledger. It writes only a spend that applies, and decides
        // nothing a caller must explain: it answers 'stored' (the event id
        // exists: the caller decides replay or conflict), 'insufficient'
        // (also for a user without an account), 'drift' (the open lots do not add up to
        // the balance: nothing written, the caller heals the lots and calls
        // again in its transaction) or 'applied'.
        PostgresMigration(
            version: 5, name: "spend_function",
            sql: """
                create function points_spend(p_user uuid, p_event text, p_amount bigint, p_biz_type text, p_biz_id text,
                                             p_fingerprint text, p_ext jsonb)
                returns table (o_outcome text, o_balance bigint, o_entry_id uuid, o_attribution text)
                language plpgsql volatile as $$
                declare
                    v_balance bigint;
                    v_spent bigint;
                begin
                    -- No account means nothing to spend (and a refused spend creates none).
                    select account.balance, account.lifetime_spent into v_balance, v_spent
                    from user_points account where account.user_id = p_user for update;
                    v_balance := coalesce(v_balance, 0);
                    if exists (select 1 from points_ledger ledger where ledger.event_id = p_event) then
                        return query select 'stored'::text, v_balance, null::uuid, null::text;
                        return;
                    end if;
                    if v_balance < p_amount then
                        return query select 'insufficient'::text, v_balance, null::uuid, null::text;
                        return;
                    end if;
                    -- Take the credits from the open lots oldest first (the rule of
                    -- CreditLots.take, as a window), record the shares as the
                    -- spend's movements, write the consume row and the account's
                    -- new figures. Data-modifying CTEs run exactly once; nothing is
                    -- written unless the lots add up to the locked balance.
                    return query
                    with lots as (
                             select lot.source_event_id, lot.remaining, lot.seq,
                                    sum(lot.remaining) over (order by lot.seq) - lot.remaining as before
                             from credit_lots lot where lot.user_id = p_user and lot.remaining > 0),
                         held as (select coalesce(sum(lots.remaining), 0)::bigint as total from lots),
                         shares as (
                             select lots.source_event_id, least(lots.remaining, p_amount - lots.before) as amount, lots.seq
                             from lots, held where lots.before < p_amount and held.total = v_balance),
                         moved as (
                             update credit_lots lot set remaining = lot.remaining - s.amount, spent = lot.spent + s.amount
                             from shares s where lot.user_id = p_user and lot.source_event_id = s.source_event_id),
                         recorded as (
                             insert into lot_movements (event_id, source_event_id, user_id, amount)
                             select p_event, s.source_event_id, p_user, s.amount from shares s),
                         attribution as (
                             select coalesce(jsonb_agg(jsonb_build_object('source_event_id', s.source_event_id, 'amount', s.amount)
                                                       order by s.seq), '[]'::jsonb) as list
                             from shares s),
                         entry as (
                             insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type,
                                                        biz_id, request_fingerprint, metadata)
                             select p_user, p_event, 'consume', -1, p_amount, v_balance - p_amount, p_biz_type, nullif(p_biz_id, ''),
                                    p_fingerprint, jsonb_build_object('ext', p_ext, 'attribution', attribution.list)
                             from held, attribution where held.total = v_balance
                             returning id),
                         account as (
                             update user_points set balance = v_balance - p_amount, lifetime_spent = v_spent + p_amount,
                                                    updated_at = now()
                             where user_id = p_user and exists (select 1 from entry))
                    select case when (select id from entry) is null then 'drift' else 'applied' end,
                           v_balance, (select id from entry), (select list from attribution)::text;
                end
                $$;
                """),
        // The rules on one column become domain types that carry them as
        // named constraints (docs/PERFORMANCE.md, "CHECK constraints as
        // domains"): the same rules, checked only where a statement writes
        // the column, without PostgreSQL rebuilding them per statement.
        PostgresMigration(
            version: 6, name: "check_domains",
            sql: """
                -- PostgreSQL 15 rebuilds every CHECK of a table from its stored text
                -- (parse, plan, set up) on each INSERT and UPDATE statement, even for
                -- columns the statement leaves alone; a domain's constraints are
                -- planned once per connection (its type cache) and checked only for
                -- the columns a statement assigns. Rules that tie columns together
                -- stay table CHECKs. So do points_ledger.change_type and
                -- credit_lots.remaining: a partial index uses each of them, and
                -- PostgreSQL rebuilds a partial index whenever one of its columns
                -- changes type, even to a domain of that type.
                -- Nothing is rewritten: each domain has its column's type and no
                -- constraint yet when the column moves to it, in the statement that
                -- drops the old CHECK (so neither the table nor an index is
                -- rebuilt); then each domain gets its constraint, which checks the
                -- stored rows (one scan per domain, under the lock ALTER TABLE holds
                -- until commit). points_spend (migration 5) is plpgsql, which records
                -- no dependency on the columns it writes: its statements assign the
                -- domains as any other statement does.
                create domain credit_amount as bigint;
                create domain moved_credit_amount as bigint;
                create domain ledger_event_id as varchar(200);
                create domain ledger_direction as smallint;
                create domain ledger_biz_type as varchar(32);
                create domain email_hash_hex as varchar(64);
                alter table user_points
                    drop constraint user_points_balance_check,
                    drop constraint user_points_lifetime_earned_check,
                    drop constraint user_points_lifetime_spent_check,
                    alter column balance type credit_amount,
                    alter column lifetime_earned type credit_amount,
                    alter column lifetime_spent type credit_amount;
                alter table points_ledger
                    drop constraint points_ledger_event_id_check,
                    drop constraint points_ledger_direction_check,
                    drop constraint points_ledger_amount_check,
                    drop constraint points_ledger_balance_after_check,
                    drop constraint points_ledger_biz_type_check,
                    alter column event_id type ledger_event_id,
                    alter column direction type ledger_direction,
                    alter column amount type credit_amount,
                    alter column balance_after type credit_amount,
                    alter column biz_type type ledger_biz_type;
                alter table credit_lots
                    drop constraint credit_lots_credited_check,
                    drop constraint credit_lots_spent_check,
                    alter column credited type credit_amount,
                    alter column spent type credit_amount;
                alter table lot_movements
                    drop constraint lot_movements_amount_check,
                    alter column amount type moved_credit_amount;
                alter table register_bonus_claims
                    drop constraint register_bonus_claims_email_hash_check,
                    alter column email_hash type email_hash_hex;
                -- Balances, lifetime sums, ledger amounts and lots: never negative.
                alter domain credit_amount add constraint credit_amount_not_negative check (value >= 0);
                -- What a spend, clawback or adjustment took from one lot: something.
                alter domain moved_credit_amount add constraint moved_credit_amount_positive check (value > 0);
                alter domain ledger_event_id add constraint ledger_event_id_not_empty check (value <> '');
                -- A ledger row adds (1) or takes (-1) its amount.
                alter domain ledger_direction add constraint ledger_direction_plus_or_minus_one check (value in (1, -1));
                -- What the credits were for: a lower-case word the caller names (chat, payment, support, ...).
                alter domain ledger_biz_type add constraint ledger_biz_type_format check (value ~ '^[a-z][a-z0-9_]{0,31}$');
                -- The email identity's HMAC-SHA256, in lower-case hex.
                alter domain email_hash_hex add constraint email_hash_hex_format check (value ~ '^[0-9a-f]{64}$');
                """),
        // The unique (user_id, event_id) of migration 1 says nothing that
        // the unique event_id does not: a repeated event id is refused by
        // points_ledger_event_unique for every user. Its index cost every
        // ledger row an index entry and its WAL, and a third of the
        // ledger's index space (docs/PERFORMANCE.md). Dropping it takes
        // the table's lock only for the catalog change; nothing is scanned.
        PostgresMigration(
            version: 7, name: "drop_redundant_ledger_unique",
            sql: """
                alter table points_ledger drop constraint points_ledger_user_event_unique;
                """),
        // New ledger rows get time-ordered ids (uuid_v7(), a version 7 UUID)
        // instead of random ones: each insert then lands on the primary
        // key's newest leaves, not on a random leaf of a B-tree as large as
        // the ledger, which after a checkpoint costs a full page image in
        // the WAL (docs/PERFORMANCE.md, "Flat as it grows"). Stored ids stay
        // as they are; a new default changes only the catalog.
        PostgresMigration(
            version: 8, name: "time_ordered_ledger_ids",
            sql: UUIDv7Function.createSQL + """

                alter table points_ledger alter column id set default uuid_v7();
                """),
        // Spends of several users in one call (group commit of spends,
        // `SpendBatchStatement`; docs/PERFORMANCE.md, "Group commit of
        // spends"): per spend exactly what points_spend (migration 5)
        // decides and writes, set-based, so the batch pays one set of
        // statements, one commit. The first statement locks the accounts in
        // user id order (two batches never deadlock; a batch holds each user
        // once); the second runs with a fresh snapshot taken after those
        // locks (READ COMMITTED, a VOLATILE function), so it sees every
        // committed change of these users' lots and ledger. points_spend
        // stays: a lone spend runs it, as do processes built before this.
        //
        // The spends come in as a jsonb list, read by points_spend_input:
        // a function the planner does not inline, declared to return a
        // batch's usual handful of rows. Read directly, jsonb_to_recordset
        // counts as 100 rows, and for 100 users a hash join over a seq scan
        // of credit_lots or user_points looks cheaper than 100 index probes
        // while those tables hold some 100,000 rows: plpgsql keeps that plan
        // for the connection's life (measured: 11 ms per batch of 8 on the
        // bench's fresh database instead of 1.3 ms).
        PostgresMigration(
            version: 9, name: "spend_many_function",
            sql: """
                create function points_spend_input(p_spends jsonb)
                returns table (user_id uuid, event_id text, amount bigint, biz_type text, biz_id text, fingerprint text, ext jsonb)
                language plpgsql stable rows 8 as $$
                begin
                    return query select i.user_id, i.event_id, i.amount, i.biz_type, i.biz_id, i.fingerprint, i.ext
                        from jsonb_to_recordset(p_spends)
                            as i(user_id uuid, event_id text, amount bigint, biz_type text, biz_id text, fingerprint text, ext jsonb);
                end
                $$;

                create function points_spend_many(p_spends jsonb)
                returns table (o_event text, o_outcome text, o_balance bigint, o_entry_id uuid, o_attribution text)
                language plpgsql volatile as $$
                declare
                    v_locked uuid[];
                begin
                    if (select count(distinct spend ->> 'user_id') + count(distinct spend ->> 'event_id')
                        from jsonb_array_elements(p_spends) spend) <> 2 * jsonb_array_length(p_spends) then
                        raise exception 'points_spend_many takes each user and each event id once';
                    end if;
                    select array_agg(locked.user_id) into v_locked
                    from (select account.user_id from user_points account
                          where account.user_id in (select spend.user_id from points_spend_input(p_spends) spend)
                          order by account.user_id for update) locked;
                    return query
                    with input as (select * from points_spend_input(p_spends)),
                         -- What points_spend reads under the lock, per spend: the balance
                         -- (0 without an account), whether the event id is stored. Only
                         -- the accounts locked above count: one a grant created since is
                         -- not held by this call, and like points_spend, which found no
                         -- row to lock, the spend is insufficient.
                         spend as (
                             select input.*,
                                    (case when account.user_id = any(v_locked) then account.balance else 0 end)::bigint as balance,
                                    (case when account.user_id = any(v_locked) then account.lifetime_spent else 0 end)::bigint as spent,
                                    exists (select 1 from points_ledger ledger where ledger.event_id = input.event_id) as stored
                             from input left join user_points account on account.user_id = input.user_id),
                         payable as (select * from spend where not stored and balance >= amount),
                         lots as (
                             select lot.user_id, lot.source_event_id, lot.remaining, lot.seq,
                                    sum(lot.remaining) over (partition by lot.user_id order by lot.seq) - lot.remaining as before
                             from credit_lots lot join payable on payable.user_id = lot.user_id where lot.remaining > 0),
                         held as (
                             select payable.user_id, coalesce(sum(lots.remaining), 0)::bigint as total
                             from payable left join lots on lots.user_id = payable.user_id group by payable.user_id),
                         -- Written only where the open lots add up to the locked balance (else 'drift').
                         paid as (select payable.* from payable join held on held.user_id = payable.user_id where held.total = payable.balance),
                         shares as (
                             select lots.user_id, lots.source_event_id, least(lots.remaining, paid.amount - lots.before) as amount, lots.seq
                             from lots join paid on paid.user_id = lots.user_id where lots.before < paid.amount),
                         moved as (
                             update credit_lots lot set remaining = lot.remaining - shares.amount, spent = lot.spent + shares.amount
                             from shares where lot.user_id = shares.user_id and lot.source_event_id = shares.source_event_id),
                         recorded as (
                             insert into lot_movements (event_id, source_event_id, user_id, amount)
                             select paid.event_id, shares.source_event_id, shares.user_id, shares.amount
                             from shares join paid on paid.user_id = shares.user_id),
                         attribution as (
                             select paid.user_id,
                                    coalesce(jsonb_agg(jsonb_build_object('source_event_id', shares.source_event_id, 'amount', shares.amount)
                                                       order by shares.seq) filter (where shares.user_id is not null), '[]'::jsonb) as list
                             from paid left join shares on shares.user_id = paid.user_id group by paid.user_id),
                         entry as (
                             insert into points_ledger (user_id, event_id, change_type, direction, amount, balance_after, biz_type,
                                                        biz_id, request_fingerprint, metadata)
                             select paid.user_id, paid.event_id, 'consume', -1, paid.amount, paid.balance - paid.amount, paid.biz_type,
                                    nullif(paid.biz_id, ''), paid.fingerprint, jsonb_build_object('ext', paid.ext, 'attribution', attribution.list)
                             from paid join attribution on attribution.user_id = paid.user_id
                             returning id, event_id),
                         debited as (
                             update user_points set balance = paid.balance - paid.amount, lifetime_spent = paid.spent + paid.amount,
                                                    updated_at = now()
                             from paid where user_points.user_id = paid.user_id)
                    select spend.event_id,
                           case when spend.stored then 'stored' when spend.balance < spend.amount then 'insufficient'
                                when entry.id is null then 'drift' else 'applied' end,
                           spend.balance, entry.id, attribution.list::text
                    from spend left join entry on entry.event_id = spend.event_id
                         left join attribution on attribution.user_id = spend.user_id and entry.id is not null;
                end
                $$;
                """),
        // The ledger's ten row rules as one CHECK calling points_ledger_rules
        // (docs/PERFORMANCE.md, "The rules in one function"):
        // PostgreSQL rebuilds every table CHECK from its stored node tree on
        // each INSERT and UPDATE statement (about 15 KB of text to parse and
        // plan for these ten: half the CPU of a one-row ledger insert), where
        // a plpgsql function is compiled once per connection and its
        // expressions planned once. The function refuses what the ten
        // refused, in their order (by name, as PostgreSQL checks them), as a
        // check_violation naming the same constraint, so an error reads as
        // it did; it returns true for a row they accepted (a rule whose
        // result is NULL passes, as a CHECK's does). The new constraint is
        // NOT VALID: the stored rows passed these same rules under the ten
        // constraints dropped in this statement, so nothing is scanned and
        // the table is locked only for the catalog change; new and updated
        // rows are checked at once. (`VALIDATE CONSTRAINT` proves the old
        // rows again, without blocking writes: docs/OPERATIONS.md.)
        PostgresMigration(
            version: 10, name: "ledger_rules_function",
            sql: """
                create function points_ledger_rules(p_change_type text, p_direction smallint, p_biz_type text, p_biz_id text,
                                                    p_related_event_id text)
                returns boolean language plpgsql immutable as $$
                declare
                    v_broken text;
                begin
                    if (p_change_type in ('register', 'consume', 'consume_reversal', 'grant', 'adjust', 'purchase', 'refund',
                                          'refund_reversal')) is false then
                        v_broken := 'points_ledger_change_type_check';
                    elsif (p_change_type <> 'consume' or p_direction = -1) is false then
                        v_broken := 'points_ledger_consume_direction';
                    elsif (p_change_type <> 'consume_reversal' or (p_direction = 1 and p_related_event_id is not null)) is false then
                        v_broken := 'points_ledger_consume_reversal_direction';
                    elsif (p_change_type not in ('purchase', 'refund', 'refund_reversal')
                           or (p_biz_type = 'payment' and p_biz_id is not null and p_biz_id <> '')) is false then
                        v_broken := 'points_ledger_payment_biz';
                    elsif (p_biz_type <> 'payment' or p_change_type in ('purchase', 'refund', 'refund_reversal')) is false then
                        v_broken := 'points_ledger_payment_biz_only';
                    elsif (p_change_type <> 'purchase' or p_direction = 1) is false then
                        v_broken := 'points_ledger_purchase_direction';
                    elsif (p_change_type <> 'refund' or p_direction = -1) is false then
                        v_broken := 'points_ledger_refund_direction';
                    elsif (p_change_type <> 'refund_reversal' or p_direction = 1) is false then
                        v_broken := 'points_ledger_refund_reversal_direction';
                    elsif (p_change_type not in ('refund', 'refund_reversal') or p_related_event_id is not null) is false then
                        v_broken := 'points_ledger_related_event';
                    elsif (p_biz_type <> 'support' or p_change_type = 'adjust') is false then
                        v_broken := 'points_ledger_support_biz';
                    end if;
                    if v_broken is not null then
                        raise exception 'new row for relation "points_ledger" violates check constraint "%"', v_broken
                            using errcode = 'check_violation', constraint = v_broken, table = 'points_ledger';
                    end if;
                    return true;
                end
                $$;

                alter table points_ledger
                    drop constraint points_ledger_change_type_check,
                    drop constraint points_ledger_consume_direction,
                    drop constraint points_ledger_consume_reversal_direction,
                    drop constraint points_ledger_payment_biz,
                    drop constraint points_ledger_payment_biz_only,
                    drop constraint points_ledger_purchase_direction,
                    drop constraint points_ledger_refund_direction,
                    drop constraint points_ledger_refund_reversal_direction,
                    drop constraint points_ledger_related_event,
                    drop constraint points_ledger_support_biz,
                    add constraint points_ledger_rules
                        check (points_ledger_rules(change_type, direction, biz_type, biz_id, related_event_id)) not valid;
                """),
        // Lot updates that stay on their page (HOT): a spend lowers a lot's
        // `remaining`, and the partial index `credit_lots_open ... where
        // remaining > 0` named that column, so PostgreSQL gave every such
        // update a new entry in all three of the table's indexes. The index
        // now names a stored generated column, `open` (= remaining > 0),
        // which changes only when a lot empties; with room left on each
        // page (fillfactor 80) the update is HOT unless it does. In the
        // bench's database 79,311 of 79,399 lot updates were HOT, and a
        // batch of 8 spends wrote 15 % less WAL, its time within the noise
        // (docs/PERFORMANCE.md, "Session 12"). points_spend and points_spend_many are rewritten
        // to read `lot.open`, their only change; the migration fails if
        // either no longer holds the text it replaces.
        //
        // Adding a stored column rewrites the table under its exclusive
        // lock (docs/OPERATIONS.md gives the time per million lots).
        // `CreditLotLedger.openLots`, on the rare paths (clawbacks,
        // reversals, adjustments, healing), still filters `remaining > 0`
        // over the user's primary-key range.
        PostgresMigration(
            version: 11, name: "hot_lot_updates",
            sql: """
                alter table credit_lots set (fillfactor = 80);
                alter table credit_lots add column open boolean generated always as (remaining > 0) stored;
                drop index credit_lots_open;
                create index credit_lots_open on credit_lots (user_id, seq) where open;
                do $$
                declare
                    v_function regprocedure;
                    v_definition text;
                begin
                    foreach v_function in array array['points_spend(uuid,text,bigint,text,text,text,jsonb)'::regprocedure,
                                                      'points_spend_many(jsonb)'::regprocedure] loop
                        v_definition := pg_get_functiondef(v_function);
                        if strpos(v_definition, 'lot.remaining > 0') = 0 then
                            raise exception '% does not read open lots as "lot.remaining > 0"', v_function;
                        end if;
                        execute replace(v_definition, 'lot.remaining > 0', 'lot.open');
                    end loop;
                end
                $$;
                """),
        // Spend reversals settle refunds' overdue (`OverdueSettlement`): a
        // spend given back to the lot of a purchase whose clawback could
        // not take everything pays that clawback first, as one
        // `refund_settlement` row (direction -1, biz_type payment, the
        // clawback's biz_id, related_event_id the clawback). The rules
        // function gains that change type and its direction rule
        // (`points_ledger_refund_settlement_direction`, checked in name
        // order like the others); every other row is judged as before, so
        // the stored rows still pass. Catalog only: the CHECK keeps calling
        // the function by name, nothing is scanned or rebuilt. Settlements
        // are read by user (`points_ledger_user_seq`) on the rare paths that
        // need them, so no index is built under a lock. The function is
        // written out whole, as it now reads, rather than patched from
        // migration 10's text (as migration 11 patches the spend functions):
        // a rule list is reviewed as one piece.
        PostgresMigration(
            version: 12, name: "refund_settlements",
            sql: """
                create or replace function points_ledger_rules(p_change_type text, p_direction smallint, p_biz_type text, p_biz_id text,
                                                               p_related_event_id text)
                returns boolean language plpgsql immutable as $$
                declare
                    v_broken text;
                begin
                    if (p_change_type in ('register', 'consume', 'consume_reversal', 'grant', 'adjust', 'purchase', 'refund',
                                          'refund_reversal', 'refund_settlement')) is false then
                        v_broken := 'points_ledger_change_type_check';
                    elsif (p_change_type <> 'consume' or p_direction = -1) is false then
                        v_broken := 'points_ledger_consume_direction';
                    elsif (p_change_type <> 'consume_reversal' or (p_direction = 1 and p_related_event_id is not null)) is false then
                        v_broken := 'points_ledger_consume_reversal_direction';
                    elsif (p_change_type not in ('purchase', 'refund', 'refund_reversal', 'refund_settlement')
                           or (p_biz_type = 'payment' and p_biz_id is not null and p_biz_id <> '')) is false then
                        v_broken := 'points_ledger_payment_biz';
                    elsif (p_biz_type <> 'payment' or p_change_type in ('purchase', 'refund', 'refund_reversal', 'refund_settlement')) is false then
                        v_broken := 'points_ledger_payment_biz_only';
                    elsif (p_change_type <> 'purchase' or p_direction = 1) is false then
                        v_broken := 'points_ledger_purchase_direction';
                    elsif (p_change_type <> 'refund' or p_direction = -1) is false then
                        v_broken := 'points_ledger_refund_direction';
                    elsif (p_change_type <> 'refund_reversal' or p_direction = 1) is false then
                        v_broken := 'points_ledger_refund_reversal_direction';
                    elsif (p_change_type <> 'refund_settlement' or p_direction = -1) is false then
                        v_broken := 'points_ledger_refund_settlement_direction';
                    elsif (p_change_type not in ('refund', 'refund_reversal', 'refund_settlement') or p_related_event_id is not null) is false then
                        v_broken := 'points_ledger_related_event';
                    elsif (p_biz_type <> 'support' or p_change_type = 'adjust') is false then
                        v_broken := 'points_ledger_support_biz';
                    end if;
                    if v_broken is not null then
                        raise exception 'new row for relation "points_ledger" violates check constraint "%"', v_broken
                            using errcode = 'check_violation', constraint = v_broken, table = 'points_ledger';
                    end if;
                    return true;
                end
                $$;
                """),
    ]

    static func migrate(_ pool: PostgresPool) async throws {
        try await PostgresMigrator(migrations: migrations, advisoryLockKey: migrationLockKey).migrate(on: pool)
    }
}
