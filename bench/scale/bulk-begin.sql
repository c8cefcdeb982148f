-- Before a bulk load into the tables named by the psql variable `tables`
-- (a quoted, comma-separated list of names): remember the definitions of
-- their unique/primary key constraints and indexes (those no foreign key
-- depends on), drop them, and pause autovacuum on the tables. Inserting
-- millions of rows into random-key B-trees that outgrow shared_buffers
-- costs a full-page image in the WAL for nearly every row after each
-- checkpoint; building each index once afterwards (bulk-end.sql, as
-- pg_restore does) costs a sort. The schema after bulk-end.sql is the one
-- the migrations made: same names, same definitions.
create unlogged table scale_index_defs as
select c.conrelid::regclass::text as table_name, c.conname as name, 'constraint' as kind,
       format('alter table %s add constraint %I %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid)) as ddl
from pg_constraint c
where c.conrelid::regclass::text in (:tables) and c.contype in ('p', 'u')
  and not exists (select 1 from pg_constraint f where f.contype = 'f' and f.conindid = c.conindid)
union all
select i.indrelid::regclass::text, ic.relname, 'index', pg_get_indexdef(i.indexrelid)
from pg_index i join pg_class ic on ic.oid = i.indexrelid
where i.indrelid::regclass::text in (:tables)
  and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid);
select format('alter table %s drop constraint %I', table_name, name) from scale_index_defs where kind = 'constraint' \gexec
select format('drop index %I', name) from scale_index_defs where kind = 'index' \gexec
select format('alter table %s set (autovacuum_enabled = off)', t) from unnest(array[:tables]) as t \gexec
