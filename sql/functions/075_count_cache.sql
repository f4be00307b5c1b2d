-- 075_count_cache: the per-library item-count cache of seed 002
-- (docs/count-cache.md; tables in sql/schema/009_count_cache.sql).
--
-- Pages: a visit reads at most 20,001 ordered ids of one library and
-- counts (lo, hi] ranges of at most 20,000 rows (K1). Capacity: 32 registry
-- and 128 summary slots, taken only when free with SKIP LOCKED; no free
-- slot withholds the count (K2). Writes to a watched library must hold the
-- write lock (cleanup.write_key, namespace 3 of cleanup.engine_locks) of
-- every old and new library before rows change, or, for cleanup steps, the
-- engine's library lock (namespace 2); a statement trigger checks, never
-- acquires (K3). A visit takes both without waiting. The same trigger bumps
-- the library's revision and marks the cached pages the statement's rows
-- fall in dirty, in the writer's transaction (K4); overflow, changes in a
-- released gap, missing application, truncate and mismatches force a
-- restart that no later write clears (K5).
--
-- These locks are row locks of cleanup.engine_locks, not advisory keys in
-- pg_locks (seed 002's wording): since the privilege model any login role could take
-- or forge advisory keys; cleanup.holds_lock() proves this transaction
-- locked the row. Like the admission guards this is a correctness check,
-- not a boundary against a database owner who disables triggers.
--
-- SQLSTATEs (exit codes through core/src/error.c's classes):
--   CU110  gateway: the batch breaks a limit (size, count, field, timestamp)  exit 2
--   CU111  gateway: unknown identifier (library)                              exit 2
--   CU112  library locks declared out of ascending order                      exit 2
--   CU410  write to a watched library without its declared library locks    exit 4
--   CU411  gateway: expected membership differs; the whole batch rolled back  exit 4
--   CU412  gateway: deletes need DELETE on inventory.items                    exit 4

-- The contract's numbers, in one place.
CREATE OR REPLACE FUNCTION cleanup.count_page_rows()
RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT 20000;
END;
-- Rows of one statement a watched library's invalidation handles one by
-- one; a larger transition set invalidates the library's whole cache.
CREATE OR REPLACE FUNCTION cleanup.count_transition_limit()
RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT 1024;
END;
-- Another library's watch is reclaimed after this long without a visit.
CREATE OR REPLACE FUNCTION cleanup.count_idle_reclaim()
RETURNS interval LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT interval '7 days';
END;
-- A published count not confirmed by a visit for this long is expired; a
-- page not recounted for this long is recounted by the next idle visit.
CREATE OR REPLACE FUNCTION cleanup.count_freshness()
RETURNS interval LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT interval '1 hour';
END;

-- Namespace 3 of cleanup.engine_locks: a library's write lock, the lock of
-- the declared-lock protocol. Writers take it (cleanup.count_declare,
-- waiting, ascending), a visit takes it without waiting to measure and
-- publish. It is not the library lock of namespace 2, which cleanup steps
-- take and which the admission guard reads as "the engine's own update"
-- (020_admission.sql): a writer holding that one would pass for the
-- engine. The guard accepts either: a step holds namespace 2 (its deletes
-- and claims are engine work), a declared writer namespace 3.
CREATE OR REPLACE FUNCTION cleanup.write_key(library bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT cleanup.lock_key(3, library);
END;

-- Frees registry slot P_SLOT and its summaries (the library is no longer
-- watched). The caller holds the library's lock or the library is gone.
CREATE OR REPLACE FUNCTION cleanup.count_release(p_slot int)
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE cleanup.count_summaries
       SET registry_slot = NULL, epoch = NULL, lo = NULL, hi = NULL, item_count = NULL,
           dirty = false, dirty_since = NULL, verified_at = NULL
     WHERE registry_slot = p_slot;
    UPDATE cleanup.count_registry
       SET library_id = NULL, built_through = NULL, restart_reason = NULL, last_restart = NULL,
           allocated_at = NULL, last_visit_at = NULL, published_count = NULL, published_revision = NULL,
           published_epoch = NULL, published_at = NULL
     WHERE slot = p_slot;
END $$;

-- Takes the library locks of P_LIBS (strictly ascending ids) for this
-- transaction, waiting for each (bounded by the session's lock_timeout:
-- 55P03). Locks are declared in ascending order across calls too: a
-- library lock already held with a larger id is refused (CU112), so two
-- declaring writers can never wait for each other in a cycle.
CREATE OR REPLACE FUNCTION cleanup.count_declare(p_libs bigint[])
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_held bigint;
BEGIN
    IF p_libs IS NULL OR cardinality(p_libs) = 0 THEN
        RETURN;
    END IF;
    FOR i IN 1 .. cardinality(p_libs) LOOP
        IF p_libs[i] IS NULL OR p_libs[i] <= 0 OR p_libs[i] >= (1::bigint << 40) THEN
            RAISE EXCEPTION 'library lock declaration: % is not a library id', coalesce(p_libs[i]::text, 'NULL')
                USING ERRCODE = 'CU112';
        END IF;
        IF i > 1 AND p_libs[i] <= p_libs[i - 1] THEN
            RAISE EXCEPTION 'library locks must be declared in ascending order: library % after library %',
                p_libs[i], p_libs[i - 1]
                USING ERRCODE = 'CU112',
                      HINT = 'sort the distinct old and new libraries of the transaction and declare them at once';
        END IF;
    END LOOP;
    -- (Locks a released savepoint took carry its id, not this
    -- transaction's, and are not seen here: this check keeps the order of
    -- declarations, the guard's cleanup.holds_lock sees them.)
    SELECT max(l.key) - cleanup.write_key(0) INTO v_held
      FROM cleanup.engine_locks l
     WHERE l.key > cleanup.write_key(p_libs[1]) AND l.key < cleanup.lock_key(4, 0)
       AND l.key <> ALL (SELECT cleanup.write_key(x) FROM unnest(p_libs) AS x)
       AND l.xmax = pg_current_xact_id_if_assigned()::xid;
    -- Declared locks make cleanup steps of these libraries busy until this
    -- transaction ends: a writer that leaves it idle is ended after a
    -- minute (T3), unless its session already has a shorter limit.
    IF current_setting('idle_in_transaction_session_timeout')::interval NOT BETWEEN interval '1 ms' AND interval '60 s' THEN
        PERFORM set_config('idle_in_transaction_session_timeout', '60s', true);
    END IF;
    IF v_held IS NOT NULL THEN
        RAISE EXCEPTION 'library locks must be taken in ascending order: this transaction holds library % and declares library %',
            v_held, p_libs[1]
            USING ERRCODE = 'CU112',
                  HINT = 'declare every library of the transaction before writing, in one ascending list';
    END IF;
    FOR i IN 1 .. cardinality(p_libs) LOOP
        PERFORM 1 FROM cleanup.engine_locks WHERE key = cleanup.write_key(p_libs[i]) FOR UPDATE;
        IF NOT FOUND THEN
            -- The library's first declared write creates its lock row.
            INSERT INTO cleanup.engine_locks (key) VALUES (cleanup.write_key(p_libs[i])) ON CONFLICT DO NOTHING;
            PERFORM 1 FROM cleanup.engine_locks WHERE key = cleanup.write_key(p_libs[i]) FOR UPDATE;
        END IF;
    END LOOP;
END $$;

-- The invalidation of one statement (called by the count_guard_* triggers,
-- which alone can read the transition tables). P_TOUCHED: the watched
-- libraries among the statement's old and new libraries; P_LIBS/P_IDS:
-- (library, item id) of every membership change (an insert, a delete, each
-- side of a move); P_ROWS: their number. Checks the locks first (K3), then
-- bumps revisions, applies them, and marks the pages the changes fall in
-- dirty (K4); a change inside the built coverage without a page (a
-- released gap) and an oversized transition set force a restart (K5).
CREATE OR REPLACE FUNCTION cleanup.count_apply(p_touched bigint[], p_libs bigint[], p_ids bigint[], p_rows bigint)
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    v_missing  bigint;
    v_overflow boolean := p_rows > cleanup.count_transition_limit();
BEGIN
    SELECT l INTO v_missing FROM unnest(p_touched) AS l
     WHERE NOT cleanup.holds_lock(cleanup.write_key(l)) AND NOT cleanup.holds_lock(cleanup.library_key(l))
     ORDER BY l LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'library % is watched by the count cache: a write needs its library lock (and those of every other library it touches) before any row changes',
            v_missing
            USING ERRCODE = 'CU410',
                  HINT = 'write through the mutation gateway, inventory.write_items(jsonb) (cleanupctl writer does), or declare the locks first in the same transaction: inventory.count_declare(ARRAY[...]) with every old and new library, ascending';
    END IF;
    IF NOT v_overflow AND cardinality(p_ids) > 0 THEN
        UPDATE cleanup.count_summaries s
           SET dirty = true, dirty_since = now()
          FROM unnest(p_libs, p_ids) AS c(lib, id)
          JOIN cleanup.count_registry r ON r.library_id = c.lib
         WHERE s.registry_slot = r.slot AND c.id > s.lo AND c.id <= s.hi AND NOT s.dirty;
    END IF;
    -- Revision and application in one statement, with the restart reasons
    -- of this statement (overflow; a change inside the built coverage where
    -- no page is: a released gap).
    UPDATE cleanup.count_registry r
       SET revision = CASE WHEN r.revision = r.applied_revision THEN r.revision + 1 ELSE r.revision END,
           applied_revision = CASE WHEN r.revision = r.applied_revision THEN r.revision + 1 ELSE r.revision END,
           restart_reason = coalesce(r.restart_reason,
               CASE WHEN v_overflow
                    THEN format('transition set overflow: one statement changed %s rows (limit %s)',
                                p_rows, cleanup.count_transition_limit()) END,
               (SELECT format('change in a released empty range (item %s)', min(c.id))
                  FROM unnest(p_libs, p_ids) AS c(lib, id)
                 WHERE NOT v_overflow AND c.lib = r.library_id
                   AND r.built_through IS NOT NULL AND c.id <= r.built_through
                   AND NOT EXISTS (SELECT 1 FROM cleanup.count_summaries s
                                    WHERE s.registry_slot = r.slot AND c.id > s.lo AND c.id <= s.hi)
                HAVING count(*) > 0))
     WHERE r.library_id = ANY (p_touched);
END $$;

-- Statement triggers on inventory.items (AFTER, with transition tables).
-- Without any watched library they return at once.
--
-- Deletes: each old row is a membership change of its library (the
-- transition table is named changed_rows). Inserts are counted by the
-- admission trigger (cleanup.items_after_insert, 020_admission.sql),
-- with the same statements over its new_rows.
CREATE OR REPLACE FUNCTION cleanup.count_guard_rows()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_touched bigint[];
    v_libs    bigint[];
    v_ids     bigint[];
    v_rows    bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM cleanup.count_registry WHERE library_id IS NOT NULL) THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(DISTINCT c.library_id), count(*), array_agg(c.library_id), array_agg(c.id)
      INTO v_touched, v_rows, v_libs, v_ids
      FROM changed_rows c JOIN cleanup.count_registry r ON r.library_id = c.library_id;
    IF v_touched IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM cleanup.count_apply(v_touched, v_libs, v_ids, v_rows);
    RETURN NULL;
END $$;

-- Updates: every old and new library is touched (a retitle needs the lock
-- too); only moves change membership, on both sides. Counted first (the
-- moves' two sides), collected only within count_transition_limit(), so
-- an oversized statement builds no arrays.
CREATE OR REPLACE FUNCTION cleanup.count_guard_update()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_touched bigint[];
    v_libs    bigint[];
    v_ids     bigint[];
    v_rows    bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM cleanup.count_registry WHERE library_id IS NOT NULL) THEN
        RETURN NULL;
    END IF;
    SELECT array_agg(DISTINCT r.library_id) INTO v_touched
      FROM cleanup.count_registry r
     WHERE r.library_id IN (SELECT o.library_id FROM old_rows o UNION SELECT n.library_id FROM new_rows n);
    IF v_touched IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT count(*) INTO v_rows
      FROM (SELECT o.library_id FROM old_rows o JOIN new_rows n USING (id) WHERE o.library_id <> n.library_id
            UNION ALL
            SELECT n.library_id FROM old_rows o JOIN new_rows n USING (id) WHERE o.library_id <> n.library_id) m
     WHERE m.library_id = ANY (v_touched);
    IF v_rows <= cleanup.count_transition_limit() THEN
        SELECT array_agg(m.library_id), array_agg(m.id) INTO v_libs, v_ids
          FROM (SELECT o.library_id, o.id FROM old_rows o JOIN new_rows n USING (id) WHERE o.library_id <> n.library_id
                UNION ALL
                SELECT n.library_id, n.id FROM old_rows o JOIN new_rows n USING (id) WHERE o.library_id <> n.library_id) m
         WHERE m.library_id = ANY (v_touched);
    END IF;
    PERFORM cleanup.count_apply(v_touched, coalesce(v_libs, '{}'), coalesce(v_ids, '{}'), v_rows);
    RETURN NULL;
END $$;

-- TRUNCATE (refused by cleanup.inventory_truncate_guard unless the owner's
-- bypass is on): its ACCESS EXCLUSIVE lock is the barrier against every
-- reader and writer, and every watched library restarts in its
-- transaction (K5), so no count survives it.
CREATE OR REPLACE FUNCTION cleanup.count_guard_truncate()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE cleanup.count_registry
       SET revision = revision + 1, applied_revision = revision + 1,
           restart_reason = coalesce(restart_reason, 'truncate of inventory.items')
     WHERE library_id IS NOT NULL;
    RETURN NULL;
END $$;

-- A deleted library (a cleanup job's finalize step) stops being watched,
-- and its write lock row goes.
CREATE OR REPLACE FUNCTION cleanup.count_library_deleted()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_slot int;
BEGIN
    SELECT slot INTO v_slot FROM cleanup.count_registry WHERE library_id = OLD.id;
    IF FOUND THEN
        PERFORM cleanup.count_release(v_slot);
    END IF;
    -- A writer's declared lock on the library (count_declare) would make
    -- this delete wait: busy instead, naming it (T3). (A missing row is
    -- made and taken, and goes below.)
    PERFORM cleanup.take_engine_lock(cleanup.write_key(OLD.id),
        pg_catalog.format('library %s has a declared sync write in flight (its count-cache write lock)', OLD.id),
        pg_catalog.format('the declared write lock (count cache) of library %s', OLD.id));
    DELETE FROM cleanup.engine_locks WHERE key = cleanup.write_key(OLD.id);
    RETURN NULL;
END $$;

-- A new library gets its write lock row (see 009_count_cache.sql).
CREATE OR REPLACE FUNCTION cleanup.count_library_created()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO cleanup.engine_locks (key) VALUES (cleanup.write_key(NEW.id)) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER libraries_count_cache_insert AFTER INSERT ON inventory.libraries
    FOR EACH ROW EXECUTE FUNCTION cleanup.count_library_created();

-- Inserts: the admission trigger items_admit_insert does the count
-- cache's part too (020_admission.sql: one trigger call a
-- statement instead of two).
DROP TRIGGER IF EXISTS items_count_cache_insert ON inventory.items;
CREATE OR REPLACE TRIGGER items_count_cache_update AFTER UPDATE ON inventory.items
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION cleanup.count_guard_update();
CREATE OR REPLACE TRIGGER items_count_cache_delete AFTER DELETE ON inventory.items
    REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION cleanup.count_guard_rows();
-- The separate insert and delete guards of the first version.
DROP FUNCTION IF EXISTS cleanup.count_guard_insert();
DROP FUNCTION IF EXISTS cleanup.count_guard_delete();
CREATE OR REPLACE TRIGGER items_count_cache_truncate AFTER TRUNCATE ON inventory.items
    FOR EACH STATEMENT EXECUTE FUNCTION cleanup.count_guard_truncate();
-- TRUNCATE of inventory.libraries (with the owner's bypass; it cascades
-- to the items, whose trigger restarts every watch) removes every library:
-- every watch ends, so a library created later with a reused id is not
-- taken for the old one.
CREATE OR REPLACE FUNCTION cleanup.count_libraries_truncated()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM cleanup.count_release(slot) FROM cleanup.count_registry WHERE library_id IS NOT NULL;
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER libraries_count_cache_truncate AFTER TRUNCATE ON inventory.libraries
    FOR EACH STATEMENT EXECUTE FUNCTION cleanup.count_libraries_truncated();
CREATE OR REPLACE TRIGGER libraries_count_cache_delete AFTER DELETE ON inventory.libraries
    FOR EACH ROW EXECUTE FUNCTION cleanup.count_library_deleted();

-- The state of registry row R as an operator sees it at P_NOW: fresh (the
-- published count is the library's count), dirty (published, but writes
-- came since: stale), expired (not confirmed by a visit within
-- count_freshness()), withheld (no count can be given, and why).
CREATE OR REPLACE FUNCTION cleanup.count_state(r cleanup.count_registry, p_now timestamptz,
                                               OUT state text, OUT reason text)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_dirty int;
BEGIN
    IF r.library_id IS NULL THEN
        state := 'unwatched';
        reason := 'not watched: cleanupctl counts --library ID starts a watch';
    ELSIF r.restart_reason IS NOT NULL THEN
        state := 'withheld';
        reason := 'restart required: ' || r.restart_reason;
    ELSIF r.revision <> r.applied_revision THEN
        state := 'withheld';
        reason := format('restart required: missing application (source revision %s, applied %s)',
                         r.revision, r.applied_revision);
    ELSIF r.built_through IS DISTINCT FROM 9223372036854775807 THEN
        state := 'withheld';
        reason := CASE WHEN r.built_through IS NULL THEN 'building: no page counted yet'
                       ELSE format('building: pages cover ids up to %s', r.built_through) END;
    ELSE
        SELECT count(*) INTO v_dirty FROM cleanup.count_summaries s WHERE s.registry_slot = r.slot AND s.dirty;
        IF v_dirty > 0 OR r.published_epoch IS DISTINCT FROM r.epoch
           OR r.published_revision IS DISTINCT FROM r.revision THEN
            state := 'dirty';
            reason := format('stale: %s page(s) changed since the count was published (revision %s, now %s)',
                             v_dirty, coalesce(r.published_revision::text, '-'), r.revision);
        ELSIF r.published_at < p_now - cleanup.count_freshness() THEN
            state := 'expired';
            reason := format('expired: not confirmed by a visit since %s',
                             to_char(r.published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS"Z"'));
        ELSE
            state := 'fresh';
            reason := NULL;
        END IF;
    END IF;
END $$;

-- One visit's answer: the library's state after it, what the visit did
-- (ACTION), how many ids it read, and the published figures.
CREATE OR REPLACE FUNCTION cleanup.count_result(p_library bigint, p_state text, p_reason text,
                                                p_action text, p_read bigint, p_now timestamptz)
RETURNS jsonb LANGUAGE plpgsql STABLE
AS $$
DECLARE
    r       cleanup.count_registry;
    v_state text := p_state;
    v_reason text := p_reason;
    st      record;
BEGIN
    SELECT * INTO r FROM cleanup.count_registry WHERE library_id = p_library;
    IF v_state IS NULL THEN
        SELECT * INTO st FROM cleanup.count_state(r, p_now);
        v_state := st.state;
        v_reason := st.reason;
    END IF;
    RETURN jsonb_build_object(
        'library_id', p_library, 'slot', r.slot, 'state', v_state, 'reason', v_reason,
        'action', p_action, 'ids_read', p_read,
        'count', CASE WHEN v_state = 'fresh' THEN r.published_count END,
        'published_count', r.published_count, 'revision', r.revision, 'epoch', r.epoch,
        'pages', (SELECT count(*) FROM cleanup.count_summaries s WHERE s.registry_slot = r.slot AND r.slot IS NOT NULL),
        'dirty_pages', (SELECT count(*) FROM cleanup.count_summaries s
                         WHERE s.registry_slot = r.slot AND r.slot IS NOT NULL AND s.dirty));
END $$;

-- Starts watching P_LIBRARY: a free registry slot (SKIP LOCKED), else one
-- reclaimed from another library idle for count_idle_reclaim() whose lock
-- is free without waiting, else the count is withheld (capacity). The
-- transaction first takes SHARE on inventory.items (at most 200 ms, else
-- withheld as busy): every write that began before the library was
-- watched has ended, and none runs until the watch commits, so no write
-- the guard did not check can be missing from a count. Counting begins at
-- the next visit.
CREATE OR REPLACE FUNCTION cleanup.count_watch(p_library bigint, p_now timestamptz)
RETURNS jsonb LANGUAGE plpgsql
AS $$
DECLARE
    v_slot int;
    v_old  cleanup.count_registry;
    v_timeout text := current_setting('lock_timeout');
BEGIN
    BEGIN
        PERFORM set_config('lock_timeout', '200ms', true);
        LOCK TABLE inventory.items IN SHARE MODE;
        PERFORM set_config('lock_timeout', v_timeout, true);
    EXCEPTION WHEN lock_not_available THEN
        PERFORM set_config('lock_timeout', v_timeout, true);
        RETURN jsonb_build_object('library_id', p_library, 'state', 'withheld',
                                  'reason', 'busy: writes in flight; the watch starts at a later visit',
                                  'action', 'none', 'ids_read', 0);
    END;
    SELECT slot INTO v_slot FROM cleanup.count_registry WHERE library_id IS NULL
     ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        FOR v_old IN SELECT * FROM cleanup.count_registry
                      WHERE library_id IS NOT NULL AND library_id <> p_library
                        AND last_visit_at < p_now - cleanup.count_idle_reclaim()
                      ORDER BY last_visit_at, slot
                      FOR UPDATE SKIP LOCKED LOOP
            IF cleanup.try_engine_lock(cleanup.write_key(v_old.library_id))
               AND cleanup.try_engine_lock(cleanup.library_key(v_old.library_id)) THEN
                PERFORM cleanup.count_release(v_old.slot);
                PERFORM cleanup.log_event(NULL, 'count-cache',
                    format('count cache: library %s idle since %s, its slot %s reclaimed for library %s',
                           v_old.library_id, v_old.last_visit_at, v_old.slot, p_library));
                v_slot := v_old.slot;
                EXIT;
            END IF;
        END LOOP;
    END IF;
    IF v_slot IS NULL THEN
        RETURN jsonb_build_object('library_id', p_library, 'state', 'withheld',
                                  'reason', 'capacity: all 32 registry slots are in use (none idle for 7 days with a free library lock); retry later',
                                  'action', 'none', 'ids_read', 0);
    END IF;
    UPDATE cleanup.count_registry
       SET library_id = p_library, epoch = nextval('cleanup.count_epoch_seq'), revision = 0, applied_revision = 0,
           built_through = NULL, restart_reason = NULL, last_restart = 'new watch',
           allocated_at = p_now, last_visit_at = p_now,
           published_count = NULL, published_revision = NULL, published_epoch = NULL, published_at = NULL
     WHERE slot = v_slot;
    RETURN cleanup.count_result(p_library, 'withheld', 'watch started: counting begins at the next visit',
                                'watch', 0, p_now);
END $$;

-- Counts the ids of P_LIBRARY in (P_LO, P_HI], reading at most
-- count_page_rows() + 1 of them in id order: *N the number read, *B the
-- count_page_rows()-th id (or the last one read).
CREATE OR REPLACE FUNCTION cleanup.count_read_page(p_library bigint, p_lo bigint, p_hi bigint,
                                                   OUT n bigint, OUT b bigint)
LANGUAGE sql STABLE
AS $$
    SELECT count(*), max(x.id) FILTER (WHERE x.rn <= cleanup.count_page_rows())
      FROM (SELECT p.id, row_number() OVER (ORDER BY p.library_id, p.id) AS rn
              FROM (SELECT i.library_id, i.id FROM inventory.items i
                     WHERE (i.library_id, i.id) > (p_library, p_lo) AND (i.library_id, i.id) <= (p_library, p_hi)
                     ORDER BY i.library_id, i.id
                     LIMIT cleanup.count_page_rows() + 1) p) x
$$;

-- One scheduled visit of P_LIBRARY, one transaction, at most one page
-- (K1): starts a watch when there is none; otherwise takes the library
-- lock without waiting (busy: withheld, nothing done), restarts on a
-- recorded reason, missing application, a clock that went backwards or
-- a selected library not visited for count_idle_reclaim(), then builds the
-- next page, or repairs the oldest dirty page (splitting it after
-- count_page_rows() rows, releasing it when empty), or recounts the page
-- verified longest ago once count_freshness() has passed (a clean page
-- that changed is a mismatch: sticky restart). With every page built and
-- clean it publishes the sum, holding the library lock throughout. P_NOW
-- (NULL: the clock) is injectable for tests. Returns count_result().
CREATE OR REPLACE FUNCTION cleanup.count_visit(p_library bigint, p_now timestamptz DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now    timestamptz := coalesce(p_now, clock_timestamp());
    v_max    constant bigint := 9223372036854775807;
    v_min    constant bigint := -9223372036854775808;
    v_rows   constant int := cleanup.count_page_rows();
    r        cleanup.count_registry;
    s        cleanup.count_summaries;
    v_reason text;
    v_action text := 'none';
    v_lo     bigint;
    v_hi     bigint;
    pg       record;
    v_free   int;
    v_read   bigint := 0;
BEGIN
    IF p_library IS NULL OR NOT EXISTS (SELECT 1 FROM inventory.libraries WHERE id = p_library) THEN
        RAISE EXCEPTION 'library % does not exist', coalesce(p_library::text, 'NULL') USING ERRCODE = 'CU001';
    END IF;
    SELECT * INTO r FROM cleanup.count_registry WHERE library_id = p_library;
    IF NOT FOUND THEN
        RETURN cleanup.count_watch(p_library, v_now);
    END IF;
    -- The source-table lock, then the library lock (the writers' order).
    LOCK TABLE inventory.items IN ACCESS SHARE MODE;
    IF NOT cleanup.try_engine_lock(cleanup.library_key(p_library))
       OR NOT cleanup.try_engine_lock(cleanup.write_key(p_library)) THEN
        RETURN cleanup.count_result(p_library, 'withheld',
                                    'busy: a writer or a cleanup step holds the library lock; retry later',
                                    'none', 0, v_now);
    END IF;
    SELECT * INTO r FROM cleanup.count_registry WHERE slot = r.slot FOR UPDATE;
    IF r.library_id IS DISTINCT FROM p_library THEN
        RETURN jsonb_build_object('library_id', p_library, 'state', 'withheld',
                                  'reason', 'the watch ended during the visit; visit again', 'action', 'none',
                                  'ids_read', 0);
    END IF;

    -- Lifecycle of the selected library (K5).
    v_reason := r.restart_reason;
    IF v_reason IS NULL AND r.revision <> r.applied_revision THEN
        v_reason := format('missing application (source revision %s, applied %s)', r.revision, r.applied_revision);
    END IF;
    IF v_reason IS NULL AND r.last_visit_at > v_now THEN
        v_reason := format('clock moved backwards (last visit %s, now %s)', r.last_visit_at, v_now);
    END IF;
    IF v_reason IS NULL AND r.last_visit_at < v_now - cleanup.count_idle_reclaim() THEN
        v_reason := format('age: not visited since %s', r.last_visit_at);
    END IF;
    IF v_reason IS NOT NULL THEN
        UPDATE cleanup.count_summaries
           SET registry_slot = NULL, epoch = NULL, lo = NULL, hi = NULL, item_count = NULL,
               dirty = false, dirty_since = NULL, verified_at = NULL
         WHERE registry_slot = r.slot;
        UPDATE cleanup.count_registry
           SET epoch = nextval('cleanup.count_epoch_seq'), applied_revision = revision, built_through = NULL,
               restart_reason = NULL, last_restart = v_reason
         WHERE slot = r.slot
        RETURNING * INTO r;
        v_action := 'restart';
    END IF;

    IF r.built_through IS DISTINCT FROM v_max THEN
        -- Build the next page: (built_through, 20,000th id], or to the end.
        v_lo := coalesce(r.built_through, v_min);
        SELECT * INTO pg FROM cleanup.count_read_page(p_library, v_lo, v_max);
        v_read := pg.n;
        v_hi := CASE WHEN pg.n > v_rows THEN pg.b ELSE v_max END;
        SELECT slot INTO v_free FROM cleanup.count_summaries WHERE registry_slot IS NULL
         ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            UPDATE cleanup.count_registry SET last_visit_at = v_now WHERE slot = r.slot;
            RETURN cleanup.count_result(p_library, 'withheld',
                                        'capacity: all 128 summary slots are in use; retry later', v_action,
                                        v_read, v_now);
        END IF;
        UPDATE cleanup.count_summaries
           SET registry_slot = r.slot, epoch = r.epoch, lo = v_lo, hi = v_hi, item_count = least(pg.n, v_rows),
               dirty = false, dirty_since = NULL, verified_at = v_now
         WHERE slot = v_free;
        UPDATE cleanup.count_registry SET built_through = v_hi WHERE slot = r.slot;
        v_action := CASE WHEN v_action = 'restart' THEN 'restart+build' ELSE 'build' END;
    ELSE
        SELECT * INTO s FROM cleanup.count_summaries
         WHERE registry_slot = r.slot AND (dirty OR verified_at < v_now - cleanup.count_freshness())
         ORDER BY dirty DESC, coalesce(dirty_since, verified_at), lo
         LIMIT 1 FOR UPDATE;
        IF FOUND THEN
            SELECT * INTO pg FROM cleanup.count_read_page(p_library, s.lo, s.hi);
            v_read := pg.n;
            IF NOT s.dirty AND pg.n <> s.item_count THEN
                UPDATE cleanup.count_registry
                   SET restart_reason = format('mismatch: page (%s, %s] holds %s items, the cache said %s',
                                               s.lo, s.hi, pg.n, s.item_count)
                 WHERE slot = r.slot AND restart_reason IS NULL;
                v_action := 'mismatch';
            ELSIF pg.n > v_rows THEN
                SELECT slot INTO v_free FROM cleanup.count_summaries WHERE registry_slot IS NULL
                 ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED;
                IF NOT FOUND THEN
                    UPDATE cleanup.count_registry SET last_visit_at = v_now WHERE slot = r.slot;
                    RETURN cleanup.count_result(p_library, 'withheld',
                                                'capacity: a page outgrew 20,000 rows and all 128 summary slots are in use; retry later',
                                                'none', v_read, v_now);
                END IF;
                UPDATE cleanup.count_summaries
                   SET registry_slot = r.slot, epoch = r.epoch, lo = pg.b, hi = s.hi, item_count = 0,
                       dirty = true, dirty_since = coalesce(s.dirty_since, v_now), verified_at = NULL
                 WHERE slot = v_free;
                UPDATE cleanup.count_summaries
                   SET hi = pg.b, item_count = v_rows, dirty = false, dirty_since = NULL, verified_at = v_now
                 WHERE slot = s.slot;
                v_action := 'split';
            ELSIF pg.n = 0 AND s.hi <> v_max THEN
                -- An empty page other than the last (where new ids land):
                -- released; a later change in its range forces a rebuild.
                UPDATE cleanup.count_summaries
                   SET registry_slot = NULL, epoch = NULL, lo = NULL, hi = NULL, item_count = NULL,
                       dirty = false, dirty_since = NULL, verified_at = NULL
                 WHERE slot = s.slot;
                v_action := 'release';
            ELSE
                UPDATE cleanup.count_summaries
                   SET item_count = pg.n, dirty = false, dirty_since = NULL, verified_at = v_now
                 WHERE slot = s.slot;
                v_action := CASE WHEN s.dirty THEN 'repair' ELSE 'verify' END;
            END IF;
        END IF;
    END IF;

    -- Publication, under the library lock: every page built and clean.
    UPDATE cleanup.count_registry SET last_visit_at = v_now WHERE slot = r.slot RETURNING * INTO r;
    IF r.restart_reason IS NULL AND r.built_through = v_max
       AND NOT EXISTS (SELECT 1 FROM cleanup.count_summaries WHERE registry_slot = r.slot AND dirty) THEN
        UPDATE cleanup.count_registry
           SET published_count = (SELECT coalesce(sum(item_count), 0) FROM cleanup.count_summaries
                                   WHERE registry_slot = r.slot),
               published_revision = revision, published_epoch = epoch, published_at = v_now
         WHERE slot = r.slot;
    END IF;
    RETURN cleanup.count_result(p_library, NULL, NULL, v_action, v_read, v_now);
END $$;

-- Every library with its cache state at P_NOW (NULL: the clock), for
-- cleanupctl counts and the console. COUNT is given only when fresh.
CREATE OR REPLACE FUNCTION cleanup.count_report(p_now timestamptz DEFAULT NULL)
RETURNS TABLE (library_id bigint, server_id bigint, name text, slot int, state text, reason text,
               count bigint, published_count bigint, revision bigint, applied_revision bigint, epoch bigint,
               pages bigint, dirty_pages bigint, last_visit_at timestamptz, published_at timestamptz,
               last_restart text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
-- A report never waits long behind a lock (T3): 55P03 after 2 s.
SET lock_timeout = '2s'
AS $$
    SELECT l.id, l.server_id, l.name, r.slot, st.state, st.reason,
           CASE WHEN st.state = 'fresh' THEN r.published_count END, r.published_count,
           r.revision, r.applied_revision, r.epoch,
           (SELECT count(*) FROM cleanup.count_summaries s WHERE s.registry_slot = r.slot),
           (SELECT count(*) FROM cleanup.count_summaries s WHERE s.registry_slot = r.slot AND s.dirty),
           r.last_visit_at, r.published_at, r.last_restart
      FROM inventory.libraries l
      LEFT JOIN cleanup.count_registry r ON r.library_id = l.id
      CROSS JOIN LATERAL cleanup.count_state(r, coalesce(p_now, clock_timestamp())) st
     ORDER BY l.server_id, l.id
$$;

-- The bounded mutation gateway (seed 002): the supported writer of watched
-- libraries. P_OPS is a JSON array of 1 to 128 operations, at most 64 KiB:
--   {"op": "insert", "library_id": L, "external_id": X, "title": T, "media_type": M, "updated_at": TS}
--   {"op": "replace", "item_id": I, "expected_library_id": E, "library_id": L, "title": T, "media_type": M,
--    "updated_at": TS}   (full replacement of the mutable columns; L may differ from E: a move)
--   {"op": "delete", "item_id": I, "expected_library_id": E}   (with its retries and previews)
-- title, media_type and updated_at are optional on insert; updated_at on
-- replace. Everything is validated before any lock is taken (fields,
-- identifiers, sizes, timestamps between 2000-01-01 and a day ahead);
-- then, in this order: the source-table lock, the distinct old and new
-- libraries' locks in ascending id, the source rows in ascending id.
-- A row not in its expected library refuses the whole batch (CU411).
-- Returns {"inserted": [{"id", "library_id", "external_id"}...], "replaced": n,
-- "deleted": n, "libraries": [...]}.
CREATE OR REPLACE FUNCTION cleanup.write_items(p_ops jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e        jsonb;
    k        int := 0;
    v_op     text;
    v_extra  text;
    v_rest   jsonb;
    v_bytes  int;
    v_lib    bigint;
    v_item   bigint;
    v_exp    bigint;
    v_ts     timestamptz;
    v_text   text;
    ins_lib  bigint[] := '{}';
    ins_ext  text[] := '{}';
    ins_title text[] := '{}';
    ins_type text[] := '{}';
    ins_ts   timestamptz[] := '{}';
    rep_id   bigint[] := '{}';
    rep_exp  bigint[] := '{}';
    rep_lib  bigint[] := '{}';
    rep_title text[] := '{}';
    rep_type text[] := '{}';
    rep_ts   timestamptz[] := '{}';
    del_id   bigint[] := '{}';
    del_exp  bigint[] := '{}';
    v_libs   bigint[];
    v_bad    record;
    v_inserted jsonb := '[]';
    v_nrep   bigint := 0;
    v_ndel   bigint := 0;
    v_watched boolean;
    v_mismatch boolean := false;
BEGIN
    IF p_ops IS NULL OR jsonb_typeof(p_ops) <> 'array' THEN
        RAISE EXCEPTION 'gateway: the batch must be a JSON array of operations' USING ERRCODE = 'CU110';
    END IF;
    v_bytes := octet_length(p_ops::text);
    IF v_bytes > 65536 THEN
        RAISE EXCEPTION 'gateway: the batch is % bytes; the limit is 65536', v_bytes USING ERRCODE = 'CU110';
    END IF;
    IF jsonb_array_length(p_ops) NOT BETWEEN 1 AND 128 THEN
        RAISE EXCEPTION 'gateway: the batch has % operations; 1 to 128 are allowed', jsonb_array_length(p_ops)
            USING ERRCODE = 'CU110';
    END IF;
    FOR e IN SELECT value FROM jsonb_array_elements(p_ops) LOOP
        k := k + 1;
        IF jsonb_typeof(e) <> 'object' THEN
            RAISE EXCEPTION 'gateway: operation % is not a JSON object', k USING ERRCODE = 'CU110';
        END IF;
        v_op := e ->> 'op';
        IF v_op IS NULL OR v_op NOT IN ('insert', 'replace', 'delete') THEN
            RAISE EXCEPTION 'gateway: operation %: "op" must be insert, replace or delete, not %', k,
                coalesce(e -> 'op', 'null'::jsonb)::text USING ERRCODE = 'CU110';
        END IF;
        -- Unknown fields: what is left of the object without the known
        -- ones (an expression, no query per operation); named on refusal.
        v_rest := e - CASE v_op
                         WHEN 'insert' THEN ARRAY['op', 'library_id', 'external_id', 'title', 'media_type', 'updated_at']
                         WHEN 'replace' THEN ARRAY['op', 'item_id', 'expected_library_id', 'library_id', 'title',
                                                   'media_type', 'updated_at']
                         ELSE ARRAY['op', 'item_id', 'expected_library_id'] END;
        IF v_rest <> '{}'::jsonb THEN
            SELECT string_agg(x, ', ' ORDER BY x) INTO v_extra FROM jsonb_object_keys(v_rest) AS x;
            RAISE EXCEPTION 'gateway: operation % (%): unknown field(s) %', k, v_op, v_extra USING ERRCODE = 'CU110';
        END IF;
        v_lib := cleanup.gateway_id(e, 'library_id', k, v_op <> 'delete');
        v_item := cleanup.gateway_id(e, 'item_id', k, v_op <> 'insert');
        v_exp := cleanup.gateway_id(e, 'expected_library_id', k, v_op <> 'insert');
        v_ts := cleanup.gateway_timestamp(e, k);
        IF v_op = 'insert' THEN
            v_text := cleanup.gateway_text(e, 'external_id', k, true, 256);
            v_extra := cleanup.external_id_problem(v_text);
            IF v_extra IS NOT NULL THEN
                RAISE EXCEPTION 'gateway: operation % (insert): external_id %', k, v_extra USING ERRCODE = 'CU110';
            END IF;
            ins_lib := ins_lib || v_lib;
            ins_ext := ins_ext || v_text;
            ins_title := ins_title || coalesce(cleanup.gateway_text(e, 'title', k, false, 1000), '');
            ins_type := ins_type || coalesce(cleanup.gateway_text(e, 'media_type', k, false, 40), 'movie');
            ins_ts := ins_ts || coalesce(v_ts, now());
        ELSIF v_op = 'replace' THEN
            rep_id := rep_id || v_item;
            rep_exp := rep_exp || v_exp;
            rep_lib := rep_lib || v_lib;
            rep_title := rep_title || cleanup.gateway_text(e, 'title', k, true, 1000);
            rep_type := rep_type || cleanup.gateway_text(e, 'media_type', k, true, 40);
            rep_ts := rep_ts || coalesce(v_ts, now());
        ELSE
            del_id := del_id || v_item;
            del_exp := del_exp || v_exp;
        END IF;
    END LOOP;
    IF cardinality(rep_id) + cardinality(del_id) > 1 THEN
        SELECT x INTO v_item FROM unnest(rep_id || del_id) AS x GROUP BY x HAVING count(*) > 1 LIMIT 1;
    END IF;
    IF v_item IS NOT NULL AND cardinality(rep_id) + cardinality(del_id) > 1 THEN
        RAISE EXCEPTION 'gateway: item % appears in more than one operation of the batch', v_item
            USING ERRCODE = 'CU110';
    END IF;
    SELECT array_agg(DISTINCT x ORDER BY x) INTO v_libs FROM unnest(ins_lib || rep_exp || rep_lib || del_exp) AS x;
    SELECT x INTO v_lib FROM unnest(v_libs) AS x
     WHERE NOT EXISTS (SELECT 1 FROM inventory.libraries l WHERE l.id = x) ORDER BY x LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'gateway: unknown identifier: library % does not exist', v_lib
            USING ERRCODE = 'CU111', HINT = 'cleanupctl status lists the libraries';
    END IF;
    IF cardinality(del_id) > 0 AND NOT has_table_privilege(session_user, 'inventory.items', 'DELETE') THEN
        RAISE EXCEPTION 'gateway: role % may not delete items (no DELETE on inventory.items)', session_user
            USING ERRCODE = 'CU412', HINT = 'removal is what cleanup jobs are for (docs/roles.md)';
    END IF;

    -- The declared order: source table, libraries ascending, rows ascending.
    LOCK TABLE inventory.items IN ROW EXCLUSIVE MODE;
    PERFORM cleanup.count_declare(v_libs);
    v_watched := EXISTS (SELECT 1 FROM cleanup.count_registry WHERE library_id = ANY (v_libs));
    IF v_watched THEN
        UPDATE cleanup.count_registry SET revision = revision + 1
         WHERE library_id = ANY (v_libs) AND revision = applied_revision;
    END IF;
    IF cardinality(rep_id) + cardinality(del_id) > 0 THEN
        PERFORM 1 FROM inventory.items WHERE id = ANY (rep_id || del_id) ORDER BY id FOR UPDATE;
        SELECT x.id, x.exp, i.library_id AS actual INTO v_bad
          FROM unnest(rep_id || del_id, rep_exp || del_exp) AS x(id, exp)
          LEFT JOIN inventory.items i ON i.id = x.id
         WHERE i.library_id IS DISTINCT FROM x.exp
         ORDER BY x.id LIMIT 1;
        v_mismatch := FOUND;
    END IF;
    IF v_mismatch THEN
        RAISE EXCEPTION 'gateway: membership mismatch: item % is %, the batch expected library %; nothing of the batch was applied',
            v_bad.id, CASE WHEN v_bad.actual IS NULL THEN 'absent' ELSE 'in library ' || v_bad.actual END, v_bad.exp
            USING ERRCODE = 'CU411', HINT = 'refresh the evidence (read the items again) and retry';
    END IF;

    IF cardinality(del_id) > 0 THEN
        -- Retries and review previews follow a deleted item (seed 001;
        -- their keys are RESTRICT): removed first, under the item's lock.
        DELETE FROM inventory.item_retries WHERE item_id = ANY (del_id);
        DELETE FROM inventory.identity_review_previews WHERE item_id = ANY (del_id);
        DELETE FROM inventory.items WHERE id = ANY (del_id);
        GET DIAGNOSTICS v_ndel = ROW_COUNT;
    END IF;
    IF cardinality(rep_id) > 0 THEN
        UPDATE inventory.items i
           SET library_id = x.lib, title = x.title, media_type = x.mtype, updated_at = x.ts
          FROM unnest(rep_id, rep_lib, rep_title, rep_type, rep_ts) AS x(id, lib, title, mtype, ts)
         WHERE i.id = x.id;
        GET DIAGNOSTICS v_nrep = ROW_COUNT;
    END IF;
    IF cardinality(ins_lib) > 0 THEN
        WITH ins AS (
            INSERT INTO inventory.items (library_id, external_id, title, media_type, updated_at)
            SELECT x.lib, x.ext, x.title, x.mtype, x.ts
              FROM unnest(ins_lib, ins_ext, ins_title, ins_type, ins_ts) WITH ORDINALITY
                   AS x(lib, ext, title, mtype, ts, ord)
             ORDER BY x.ord
            RETURNING id, library_id, external_id)
        SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'library_id', library_id, 'external_id', external_id)
                                  ORDER BY id), '[]')
          INTO v_inserted FROM ins;
    END IF;

    -- Application check: every declared revision must have been applied by
    -- the statement triggers; if not (a trigger disabled), the library
    -- restarts, and stays so whatever follows (K5).
    IF v_watched THEN
        UPDATE cleanup.count_registry
           SET restart_reason = format('missing application (source revision %s, applied %s)', revision, applied_revision)
         WHERE library_id = ANY (v_libs) AND revision <> applied_revision AND restart_reason IS NULL;
    END IF;
    RETURN jsonb_build_object('inserted', v_inserted, 'replaced', v_nrep, 'deleted', v_ndel,
                              'libraries', to_jsonb(v_libs));
END $$;

-- Gateway field helpers: each names the operation and the field it refuses.
CREATE OR REPLACE FUNCTION cleanup.gateway_id(e jsonb, p_key text, p_op int, p_required boolean)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    v jsonb := e -> p_key;
BEGIN
    IF v IS NULL OR v = 'null'::jsonb THEN
        IF p_required THEN
            RAISE EXCEPTION 'gateway: operation %: "%" is required', p_op, p_key USING ERRCODE = 'CU110';
        END IF;
        RETURN NULL;
    END IF;
    IF jsonb_typeof(v) <> 'number' OR v::text !~ '^[1-9][0-9]{0,17}$' THEN
        RAISE EXCEPTION 'gateway: operation %: "%" must be a positive integer id, not %', p_op, p_key, left(v::text, 40)
            USING ERRCODE = 'CU110';
    END IF;
    RETURN v::text::bigint;
END $$;

CREATE OR REPLACE FUNCTION cleanup.gateway_text(e jsonb, p_key text, p_op int, p_required boolean, p_max int)
RETURNS text LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    v jsonb := e -> p_key;
BEGIN
    IF v IS NULL OR v = 'null'::jsonb THEN
        IF p_required THEN
            RAISE EXCEPTION 'gateway: operation %: "%" is required', p_op, p_key USING ERRCODE = 'CU110';
        END IF;
        RETURN NULL;
    END IF;
    IF jsonb_typeof(v) <> 'string' THEN
        RAISE EXCEPTION 'gateway: operation %: "%" must be a string', p_op, p_key USING ERRCODE = 'CU110';
    END IF;
    IF octet_length(v ->> 0) > p_max THEN
        RAISE EXCEPTION 'gateway: operation %: "%" is % bytes long; the limit is %', p_op, p_key,
            octet_length(v ->> 0), p_max USING ERRCODE = 'CU110';
    END IF;
    RETURN e ->> p_key;
END $$;

-- updated_at: an ISO 8601 string between 2000-01-01 and a day from now.
CREATE OR REPLACE FUNCTION cleanup.gateway_timestamp(e jsonb, p_op int)
RETURNS timestamptz LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v  jsonb := e -> 'updated_at';
    ts timestamptz;
BEGIN
    IF v IS NULL OR v = 'null'::jsonb THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(v) <> 'string'
       OR (e ->> 'updated_at') !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?$' THEN
        RAISE EXCEPTION 'gateway: operation %: "updated_at" must be an ISO 8601 timestamp, not %', p_op,
            left(v::text, 40) USING ERRCODE = 'CU110';
    END IF;
    BEGIN
        ts := (e ->> 'updated_at')::timestamptz;
    EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format THEN
        RAISE EXCEPTION 'gateway: operation %: "updated_at" is not a valid timestamp: %', p_op, left(e ->> 'updated_at', 40)
            USING ERRCODE = 'CU110';
    END;
    IF ts < timestamptz '2000-01-01 00:00:00+00' OR ts > now() + interval '1 day' THEN
        RAISE EXCEPTION 'gateway: operation %: "updated_at" % is out of range (2000-01-01 to a day from now)', p_op,
            e ->> 'updated_at' USING ERRCODE = 'CU110';
    END IF;
    RETURN ts;
END $$;
