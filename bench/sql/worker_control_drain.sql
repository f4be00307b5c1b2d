-- bench_workers, control: the same deletions without the engine. A loop in
-- the server deletes the library named by bench.control_library
-- (worker_control_library.sql) 128 rows a transaction in id order until
-- none is left: no client round trip, no manifest, no re-check, no step
-- record, no counters. 1 session (libraries in turn) against 4 (one each,
-- at once) says how far this machine scales bare PostgreSQL work of the
-- same shape, the ceiling the runners are measured against
-- (docs/benchmarks-workers.md). Sent with the simple protocol (COMMIT in a
-- DO block); on a copy of the template only.
DO $$
DECLARE
    lib bigint := current_setting('bench.control_library')::bigint;
    n int;
BEGIN
    LOOP
        DELETE FROM inventory.items
         WHERE id IN (SELECT id FROM inventory.items WHERE library_id = lib ORDER BY id LIMIT 128);
        GET DIAGNOSTICS n = ROW_COUNT;
        COMMIT;
        EXIT WHEN n = 0;
    END LOOP;
END $$
