-- bench/prune_floor.sh and bench_shapes --floor: the floor of a conforming step, measured.
--
-- A bench-only prototype (schema floor, never installed by cleanupctl):
-- the first pass and the final check of a prune written as one flat
-- PL/pgSQL function a step, holding only what the seeds' rules ask of
-- every step, each part as the engine writes it or leaner:
--
--   L1   the source tables ROW EXCLUSIVE NOWAIT; the coordinator, the job
--        row and the library locked without waiting, in that order
--   F2   the runner's lease renewed (a column of the job row here: the
--        same statement locks the row)
--   001  the schema contract compared (cleanup.contract_assert, its fast
--        path), and D1 asked (cleanup.has_unknown_references)
--   S1   discovery: at most 1,024 items examined, 128 candidates, merged
--        with the manifest in key order (cleanup.drain_key_batch's
--        statement, its bound kept as the engine keeps it)
--   S2-5 the candidates locked FOR UPDATE SKIP LOCKED by ctid, scope and
--   D2   xmin compared, dependents probed, the held or changed ones looked
--        up and retained, the rest deleted by ctid: the engine's own
--        cleanup.step_drain (no dependents exist here, so it claims none)
--   T7   the job's departures looked up
--   S7   the job row's cursor and counters and the step's record, one
--        statement, in the step's transaction
--   S6   the final absence check, in pages (cleanup.final_check_page)
--
-- What it leaves out is the engine's own: the step's layering into
-- functions, the count stripes' lock ahead of the DELETE (a writer's
-- stripe is never waited for), the claims read, the busy messages that
-- name holders, failpoints, replay (S8), the preview. Its DELETE fires
-- the same triggers as the one DELETE's (the library is open: the job
-- was cancelled before, bench/sql/anchor_open.sql), where a step's own
-- DELETE takes the steps' path through them.
--
-- floor.step(JOB) runs one step of job JOB (a row of floor.jobs made by
-- floor.start from a sealed, cancelled cleanup job of the same id) and
-- returns whether the job goes on.
--
-- floor.remove_step(JOB) is the same for a remove-library's drain: the
-- library's items in id order from the cursor, 128 a step, locked,
-- compared and deleted as above, the removal's tables locked (L1). The
-- parent's own step (the library row locked NOWAIT and deleted once its
-- inventory is empty, S10, S13) is left out: one step of thousands, and
-- the engine's guards refuse a parent delete outside the protocol (S12),
-- so the floor is lower by that step.
CREATE SCHEMA IF NOT EXISTS floor;

CREATE TABLE IF NOT EXISTS floor.jobs (
    id            bigint PRIMARY KEY,
    server_id     bigint NOT NULL,
    library_id    bigint NOT NULL,
    high_water_id bigint NOT NULL,
    phase         text NOT NULL DEFAULT 'draining',
    step_no       int NOT NULL DEFAULT 0,
    key_cursor    text NOT NULL DEFAULT '',
    key_bound     text,
    key_bound_end boolean NOT NULL DEFAULT false,
    check_cursor  text NOT NULL DEFAULT '',
    cursor_id     bigint NOT NULL DEFAULT 0,
    examined      bigint NOT NULL DEFAULT 0,
    kept          bigint NOT NULL DEFAULT 0,
    visited       bigint NOT NULL DEFAULT 0,
    deleted       bigint NOT NULL DEFAULT 0,
    retained      bigint NOT NULL DEFAULT 0,
    moved         bigint NOT NULL DEFAULT 0,
    absent        bigint NOT NULL DEFAULT 0,
    lease         bigint NOT NULL DEFAULT 1,
    renewed_at    timestamptz
);

CREATE TABLE IF NOT EXISTS floor.steps (
    job_id      bigint NOT NULL,
    step_no     int NOT NULL,
    examined    int NOT NULL,
    kept        int NOT NULL,
    visited     int NOT NULL CHECK (visited <= 128),
    deleted     int NOT NULL CHECK (deleted <= 128),
    retained    int NOT NULL,
    moved       int NOT NULL,
    absent      int NOT NULL,
    check_from  text,
    check_to    text,
    xact_id     xid8 NOT NULL,
    duration_ms double precision NOT NULL,
    PRIMARY KEY (job_id, step_no)
);

-- The floor's job JOB from cleanup job JOB (sealed, then cancelled).
CREATE OR REPLACE FUNCTION floor.start(p_job bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO floor.jobs (id, server_id, library_id, high_water_id)
    SELECT j.id, j.server_id, j.library_id, j.high_water_id FROM cleanup.jobs j WHERE j.id = p_job;
$$;

-- A step's start, for a prune or (P_REMOVAL) a removal: L1's locks (every
-- table the step may write ROW EXCLUSIVE NOWAIT, the coordinator, the job
-- row with F2's lease renewed in the same statement, the library), then
-- the contract compared and D1 asked for the tables the job deletes from.
-- Returns the job row.
--
-- Ablation (bench/prune_floor.sh ABLATE=1): the parts named in the
-- setting floor.skip are left out, to count what each rule costs: locks
-- (L1 and F2 but the job row's own lock), contract (seed 001 and D1);
-- floor.step reads verdict and record.
CREATE OR REPLACE FUNCTION floor.enter(p_job bigint, p_removal boolean) RETURNS floor.jobs LANGUAGE plpgsql
AS $$
DECLARE
    j      floor.jobs;
    v_skip text := coalesce(current_setting('floor.skip', true), '');
BEGIN
    IF strpos(v_skip, 'locks') = 0 THEN
        IF p_removal THEN
            LOCK TABLE inventory.items, inventory.libraries, inventory.media_servers,
                       inventory.item_retries, inventory.identity_review_previews,
                       inventory.library_collections, inventory.library_sync_status,
                       inventory.classification_history,
                       cleanup.library_admission, cleanup.server_admission
                IN ROW EXCLUSIVE MODE NOWAIT;
        ELSE
            LOCK TABLE inventory.items, inventory.item_retries, inventory.identity_review_previews
                IN ROW EXCLUSIVE MODE NOWAIT;
        END IF;
        IF NOT pg_try_advisory_xact_lock(1, (SELECT server_id FROM floor.jobs WHERE id = p_job)::int) THEN
            RAISE EXCEPTION 'coordinator busy' USING ERRCODE = '55P03';
        END IF;
        UPDATE floor.jobs x SET renewed_at = clock_timestamp() WHERE x.id = p_job AND x.lease = 1 RETURNING * INTO j;
        IF NOT pg_try_advisory_xact_lock(2, j.library_id::int) THEN
            RAISE EXCEPTION 'library busy' USING ERRCODE = '55P03';
        END IF;
    ELSE
        SELECT * INTO j FROM floor.jobs x WHERE x.id = p_job FOR UPDATE;
    END IF;
    IF strpos(v_skip, 'contract') = 0 THEN
        PERFORM cleanup.contract_assert();
        IF cleanup.has_unknown_references(CASE WHEN p_removal
                                               THEN ARRAY['inventory.items'::regclass, 'inventory.libraries'::regclass]
                                               ELSE ARRAY['inventory.items'::regclass] END) THEN
            RAISE EXCEPTION 'unknown references' USING ERRCODE = 'CU404';
        END IF;
    END IF;
    RETURN j;
END $$;

CREATE OR REPLACE FUNCTION floor.step(p_job bigint) RETURNS boolean LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_sort = off
SET enable_incremental_sort = off
AS $$
DECLARE
    t0      timestamptz := clock_timestamp();
    j       floor.jobs;
    b       record;
    bt      record;
    v_ids   bigint[];
    v_xmins xid[];
    v_ctids tid[];
    v_read  int := 0;
    v_kept  int := 0;
    v_above int := 0;
    v       record;
    f       record;
    v_from  text;
    v_n_del int := 0;
    v_n_ret int := 0;
    v_moved int := 0;
    v_abs   int := 0;
    v_more  boolean;
    -- Ablation (floor.enter): verdict (S2-S5: the discovered ctids
    -- deleted unlocked, unchecked), record (the step's row of S7; the job
    -- row's cursor and counters stay).
    v_skip  text := coalesce(current_setting('floor.skip', true), '');
BEGIN
    j := floor.enter(p_job, false);

    IF j.phase = 'checking' THEN
        -- S6: one page of the final absence check.
        SELECT x.checked, x.last_key, x.eligible, x.more INTO f
          FROM cleanup.final_check_page(p_job, j.library_id, j.high_water_id, j.check_cursor) x;
        IF f.eligible IS NOT NULL THEN
            RAISE EXCEPTION 'final check found % eligible rows', cardinality(f.eligible);
        END IF;
        UPDATE floor.jobs SET check_cursor = coalesce(f.last_key, check_cursor), step_no = step_no + 1,
                              phase = CASE WHEN f.more THEN phase ELSE 'completed' END
         WHERE id = p_job;
        RETURN f.more;
    END IF;

    -- S1: discovery, bounded as the engine bounds it: at most two batches,
    -- the second past the manifest bound the first reached with budget
    -- left (cleanup.step_discover_keyed).
    v_from := j.key_cursor;
    FOR v_batch IN 1 .. 2 LOOP
        IF j.key_bound IS NULL THEN
            j.key_bound := (SELECT x.external_id FROM cleanup.manifest x
                             WHERE x.job_id = p_job AND x.external_id > j.key_cursor
                             ORDER BY x.job_id, x.external_id OFFSET 1023 LIMIT 1);
            j.key_bound_end := j.key_bound IS NULL;
            IF j.key_bound_end THEN
                j.key_bound := coalesce((SELECT max(i.external_id) FROM inventory.items i
                                          WHERE i.library_id = j.library_id), '');
            END IF;
        END IF;
        SELECT x.ids, x.xmins, x.ctids, x.n_read, x.n_kept, x.n_above, x.last_key INTO bt
          FROM cleanup.drain_key_batch(p_job, j.library_id, j.high_water_id, j.key_cursor, j.key_bound,
                                       128 - coalesce(cardinality(v_ids), 0), 1024 - v_read) x;
        v_ids := v_ids || bt.ids;
        v_xmins := v_xmins || bt.xmins;
        v_ctids := v_ctids || bt.ctids;
        v_read := v_read + bt.n_read;
        v_kept := v_kept + bt.n_kept;
        v_above := v_above + bt.n_above;
        IF coalesce(cardinality(v_ids), 0) = 128 OR v_read = 1024 THEN
            v_more := true;
            j.key_cursor := bt.last_key;
            IF j.key_cursor >= j.key_bound AND NOT j.key_bound_end THEN
                j.key_bound := NULL;
            END IF;
            EXIT;
        ELSIF j.key_bound_end THEN
            v_more := false;
            j.key_cursor := coalesce(bt.last_key, j.key_cursor);
            EXIT;
        END IF;
        v_more := true;
        j.key_cursor := j.key_bound;
        j.key_bound := NULL;
    END LOOP;
    SELECT v_ids AS ids, v_xmins AS xmins, v_ctids AS ctids, v_read AS n_read, v_kept AS n_kept,
           v_above AS n_above INTO b;

    IF b.ids IS NOT NULL AND strpos(v_skip, 'verdict') > 0 THEN
        DELETE FROM inventory.items i WHERE i.ctid = ANY (b.ctids);
        GET DIAGNOSTICS v_n_del = ROW_COUNT;
    ELSIF b.ids IS NOT NULL THEN
        -- S2-S5 and D2: the engine's own (cleanup.step_drain).
        SELECT x.* INTO v FROM cleanup.step_drain(p_job, j.library_id, j.server_id, b.ids, b.xmins, b.ctids,
                                                  false, false, 128) x;
        IF v.n_claimed + v.n_retries + v.n_previews > 0 THEN
            RAISE EXCEPTION 'the floor prototype drains no dependents';
        END IF;
        v_n_del := v.n_deleted;
        v_moved := v.n_moved;
        v_abs := v.n_absent;
        v_n_ret := v.n_retained;
    END IF;
    IF NOT v_more AND (j.retained > 0 OR v_n_ret > 0) THEN
        RAISE EXCEPTION 'the floor prototype runs no later pass (retained rows)';
    END IF;
    -- T7.
    PERFORM 1 FROM cleanup.job_departures d WHERE d.job_id = p_job LIMIT 1;

    -- S7.
    IF strpos(v_skip, 'record') > 0 THEN
        UPDATE floor.jobs
           SET step_no = step_no + 1, key_cursor = j.key_cursor, key_bound = j.key_bound,
               key_bound_end = j.key_bound_end,
               phase = CASE WHEN v_more THEN phase ELSE 'checking' END,
               examined = examined + b.n_read - b.n_above, kept = kept + b.n_kept,
               visited = visited + coalesce(cardinality(b.ids), 0), deleted = deleted + v_n_del
         WHERE id = p_job;
        RETURN true;
    END IF;
    WITH u AS (
        UPDATE floor.jobs
           SET step_no = step_no + 1, key_cursor = j.key_cursor, key_bound = j.key_bound,
               key_bound_end = j.key_bound_end,
               phase = CASE WHEN v_more THEN phase ELSE 'checking' END,
               examined = examined + b.n_read - b.n_above, kept = kept + b.n_kept,
               visited = visited + coalesce(cardinality(b.ids), 0), deleted = deleted + v_n_del,
               retained = retained + v_n_ret,
               moved = moved + v_moved, absent = absent + v_abs
         WHERE id = p_job
        RETURNING step_no)
    INSERT INTO floor.steps
    SELECT p_job, u.step_no, b.n_read - b.n_above, b.n_kept, coalesce(cardinality(b.ids), 0), v_n_del,
           v_n_ret, v_moved, v_abs,
           v_from, j.key_cursor, pg_current_xact_id(), extract(epoch FROM clock_timestamp() - t0) * 1000
      FROM u;
    RETURN true;
END $$;

CREATE OR REPLACE FUNCTION floor.remove_step(p_job bigint) RETURNS boolean LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_sort = off
SET enable_incremental_sort = off
AS $$
DECLARE
    t0      timestamptz := clock_timestamp();
    j       floor.jobs;
    b       record;
    v       record;
    v_n_del int := 0;
    v_moved int := 0;
    v_abs   int := 0;
BEGIN
    j := floor.enter(p_job, true);
    -- S1: the next 128 items of the library in id order.
    SELECT array_agg(i.id) AS ids, array_agg(i.xmin) AS xmins, array_agg(i.ctid) AS ctids, max(i.id) AS max_id
      INTO b
      FROM (SELECT i.id, i.xmin, i.ctid FROM inventory.items i
             WHERE (i.library_id, i.id) > (j.library_id, j.cursor_id)
               AND (i.library_id, i.id) <= (j.library_id, j.high_water_id)
             ORDER BY i.library_id, i.id LIMIT 128) i;
    IF b.ids IS NOT NULL THEN
        -- S2-S5 and D2, as floor.step.
        SELECT x.* INTO v FROM cleanup.step_drain(p_job, j.library_id, j.server_id, b.ids, b.xmins, b.ctids,
                                                  false, false, 128) x;
        IF v.n_claimed + v.n_retries + v.n_previews > 0 THEN
            RAISE EXCEPTION 'the floor prototype drains no dependents';
        ELSIF v.n_retained > 0 THEN
            RAISE EXCEPTION 'the floor prototype runs no later pass (retained rows)';
        END IF;
        v_n_del := v.n_deleted;
        v_moved := v.n_moved;
        v_abs := v.n_absent;
    END IF;
    -- T7.
    PERFORM 1 FROM cleanup.job_departures d WHERE d.job_id = p_job LIMIT 1;
    -- S7.
    WITH u AS (
        UPDATE floor.jobs
           SET step_no = step_no + 1, cursor_id = coalesce(b.max_id, cursor_id),
               phase = CASE WHEN b.ids IS NULL OR cardinality(b.ids) < 128 THEN 'completed' ELSE phase END,
               examined = examined + coalesce(cardinality(b.ids), 0),
               visited = visited + coalesce(cardinality(b.ids), 0), deleted = deleted + v_n_del,
               moved = moved + v_moved, absent = absent + v_abs
         WHERE id = p_job
        RETURNING step_no)
    INSERT INTO floor.steps
    SELECT p_job, u.step_no, coalesce(cardinality(b.ids), 0), 0, coalesce(cardinality(b.ids), 0), v_n_del,
           0, v_moved, v_abs, j.cursor_id::text, b.max_id::text, pg_current_xact_id(),
           extract(epoch FROM clock_timestamp() - t0) * 1000
      FROM u;
    RETURN b.ids IS NOT NULL AND cardinality(b.ids) = 128;
END $$;
