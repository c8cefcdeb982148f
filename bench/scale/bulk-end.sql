-- After the bulk load (see bulk-begin.sql): builds every remembered
-- constraint and index (a duplicate key fails here, loudly), and gives the
-- tables back to autovacuum.
set maintenance_work_mem = '512MB';
select ddl from scale_index_defs order by kind, name \gexec
select format('alter table %s reset (autovacuum_enabled)', table_name) from (select distinct table_name from scale_index_defs) t \gexec
drop table scale_index_defs;
