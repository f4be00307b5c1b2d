-- 010_seed_demo: the lab's demo data (cleanupctl seed, cleanupctl demo,
-- the tests' fixtures) with set-based SQL (one INSERT per table), so a
-- million items take seconds. Writers' triggers still run, once per statement.
--
-- P_DEPENDENTS (seed 001): about that many dependent records per item on
-- average, with a spread: every tenth item has none, one in a thousand has
-- 300 (item retries and identity review previews, two to one), the others
-- between 0 and 2 x P_DEPENDENTS; and per library 20 collections, a sync
-- status and 5 x P_DEPENDENTS classification history records (none of
-- these when P_DEPENDENTS is 0).
--
-- Owner only (no USAGE on schema cleanup_lab for anyone else); a definer,
-- so that it runs as the owner whoever may call it, with a pinned
-- search_path.
CREATE OR REPLACE FUNCTION cleanup_lab.seed_demo(p_servers int, p_libraries int, p_items bigint,
                                                 p_dependents int DEFAULT 0)
RETURNS jsonb LANGUAGE plpgsql
AS $$
DECLARE
    base    bigint;
    n_srv   int;
    n_lib   int;
    n_item  bigint;
    n_dep   bigint := 0;
    n_x     bigint;
BEGIN
    IF p_servers < 0 OR p_servers > 1000 OR p_libraries < 0 OR p_libraries > 1000
       OR p_items < 0 OR p_items > 100000000 OR p_dependents < 0 OR p_dependents > 50 THEN
        RAISE EXCEPTION 'seed sizes out of range: servers % (0-1000), libraries % (0-1000), items % (0-100000000), dependents % (0-50)',
            p_servers, p_libraries, p_items, p_dependents USING ERRCODE = 'CU101';
    END IF;
    SELECT coalesce(max(id), 0) INTO base FROM inventory.media_servers;

    CREATE TEMP TABLE seed_servers ON COMMIT DROP AS
    WITH ins AS (
        INSERT INTO inventory.media_servers (name)
        SELECT format('server-%s', base + g) FROM generate_series(1, p_servers) g
        RETURNING id)
    SELECT id FROM ins;
    GET DIAGNOSTICS n_srv = ROW_COUNT;

    CREATE TEMP TABLE seed_libraries ON COMMIT DROP AS
    WITH ins AS (
        INSERT INTO inventory.libraries (server_id, name)
        SELECT s.id, (ARRAY['Movies', 'Shows', 'Music', 'Photos', 'Audiobooks', 'Podcasts'])[1 + (g - 1) % 6]
                     || CASE WHEN g > 6 THEN format(' %s', (g - 1) / 6 + 1) ELSE '' END
          FROM seed_servers s, generate_series(1, p_libraries) g
         ORDER BY s.id, g
        RETURNING id)
    SELECT id FROM ins;
    GET DIAGNOSTICS n_lib = ROW_COUNT;

    -- In (library, external ID) order: the unique index on those columns
    -- then grows at its right edge instead of splitting pages everywhere,
    -- which makes a million-item seed about a third faster.
    INSERT INTO inventory.items (library_id, external_id, title, media_type)
    SELECT l.id, format('ext-%s-%s', l.id, g), format('Title %s', g),
           (ARRAY['movie', 'episode', 'track', 'photo'])[1 + g % 4]
      FROM seed_libraries l, generate_series(1, p_items) g
     ORDER BY 1, 2;
    GET DIAGNOSTICS n_item = ROW_COUNT;

    IF p_dependents > 0 THEN
        CREATE TEMP TABLE seed_spread ON COMMIT DROP AS
        SELECT i.id, CASE WHEN i.n % 10 = 0 THEN 0
                          WHEN i.n % 1000 = 1 THEN 300
                          ELSE (i.n * 7919) % (2 * p_dependents + 1) END AS k
          FROM (SELECT it.id, row_number() OVER (ORDER BY it.id) AS n
                  FROM inventory.items it JOIN seed_libraries l ON l.id = it.library_id) i;
        INSERT INTO inventory.item_retries (item_id, reason, attempt)
        SELECT s.id, 'transient error ' || g, 1 + g % 5
          FROM seed_spread s, generate_series(1, s.k - s.k / 3) g
         ORDER BY s.id, g;
        GET DIAGNOSTICS n_x = ROW_COUNT;
        n_dep := n_dep + n_x;
        INSERT INTO inventory.identity_review_previews (item_id, candidate, score)
        SELECT s.id, 'candidate ' || g, (g % 100) / 100.0
          FROM seed_spread s, generate_series(1, s.k / 3) g
         ORDER BY s.id, g;
        GET DIAGNOSTICS n_x = ROW_COUNT;
        n_dep := n_dep + n_x;
        INSERT INTO inventory.library_collections (library_id, name)
        SELECT l.id, 'Collection ' || g FROM seed_libraries l, generate_series(1, 20) g ORDER BY 1, 2;
        GET DIAGNOSTICS n_x = ROW_COUNT;
        n_dep := n_dep + n_x;
        INSERT INTO inventory.library_sync_status (library_id, state) SELECT l.id, 'idle' FROM seed_libraries l;
        GET DIAGNOSTICS n_x = ROW_COUNT;
        n_dep := n_dep + n_x;
        INSERT INTO inventory.classification_history (library_id, status, error, payload)
        SELECT l.id, (ARRAY['completed', 'completed', 'failed', 'running'])[1 + g % 4],
               CASE WHEN g % 4 = 2 THEN 'classifier timed out' END, jsonb_build_object('run', g)
          FROM seed_libraries l, generate_series(1, 5 * p_dependents) g ORDER BY 1, 2;
        GET DIAGNOSTICS n_x = ROW_COUNT;
        n_dep := n_dep + n_x;
    END IF;

    RETURN jsonb_build_object('servers', n_srv, 'libraries', n_lib, 'items', n_item, 'dependents', n_dep);
END $$
SET work_mem = '128MB';
ALTER FUNCTION cleanup_lab.seed_demo(int, int, bigint, int)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION cleanup_lab.seed_demo(int, int, bigint, int) FROM PUBLIC;
