-- bench_shapes, fresh shapes: nothing analyzes the data behind the
-- measurement's back (autovacuum off for the engine's and inventory's tables).
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT c.oid::regclass AS t FROM pg_class c
              WHERE c.relnamespace IN ('cleanup'::regnamespace, 'inventory'::regnamespace) AND c.relkind = 'r' LOOP
        EXECUTE format('ALTER TABLE %s SET (autovacuum_enabled = off)', r.t);
    END LOOP;
END $$
