-- Where an lctrace database's bytes go on PostgreSQL, per table and per index, per event:
--   psql URL -v schema=NAME -f Benchmarks/postgres-sizes.sql
-- `table` rows: the heap (main fork) and the rest of the table's own forks and TOAST
-- (free space map, visibility map, TOAST table with its index); `index` rows: the index.
-- The last row is the sum over the schema, as Benchmarks/postgres.py counts it.
WITH n AS (SELECT count(*)::numeric AS events FROM events),
rels AS (
    SELECT c.oid, c.relname, c.relkind,
           CASE c.relkind WHEN 'r' THEN 'table' ELSE 'index on ' || t.relname END AS kind,
           CASE c.relkind WHEN 'r' THEN pg_table_size(c.oid) ELSE pg_relation_size(c.oid) END AS bytes,
           pg_relation_size(c.oid) AS main
    FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
    LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
    WHERE ns.nspname = :'schema' AND c.relkind IN ('r', 'i')
)
SELECT relname AS relation, kind, bytes, main AS main_fork, round(bytes / n.events, 1) AS bytes_per_event
FROM rels, n
UNION ALL
SELECT 'all', '', sum(bytes), sum(main), round(sum(bytes) / min(n.events), 1) FROM rels, n
ORDER BY 3 DESC;
