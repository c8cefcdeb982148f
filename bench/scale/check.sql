-- The ledger invariants PointsService's tests check per user
-- (PointsTestDatabase.assertInvariants), over the whole prefilled points
-- database at once: one line "name violations"; every count must be 0.
-- (The prefill skips the foreign keys' triggers: account_figures and
-- lot_owners find any row without its account.)
set work_mem = '512MB';
select 'balance_after_chain', count(*) from (
    select balance_after, sum(direction * amount) over (partition by user_id order by seq) as running
    from points_ledger) chain
where balance_after <> running;
with sums as (
    select user_id, sum(direction * amount) as balance,
           sum(direction * amount) filter (where change_type not in ('consume', 'consume_reversal')) as earned,
           coalesce(-sum(direction * amount) filter (where change_type in ('consume', 'consume_reversal')), 0) as spent
    from points_ledger group by user_id
)
select 'account_figures', count(*) from user_points a full join sums s using (user_id)
where s.user_id is null or a.user_id is null or a.balance <> s.balance or a.lifetime_earned <> s.earned or a.lifetime_spent <> s.spent;
select 'lots_add_up_to_balance', count(*) from user_points a
left join (select user_id, sum(remaining) as remaining from credit_lots group by user_id) l using (user_id)
where a.balance <> coalesce(l.remaining, 0);
select 'spend_movements', count(*) from points_ledger c
left join (select event_id, sum(amount) as amount from lot_movements group by event_id) m using (event_id)
where c.change_type = 'consume' and c.amount is distinct from m.amount;
select 'lot_owners', count(*) from credit_lots l where not exists (select 1 from user_points a where a.user_id = l.user_id);
