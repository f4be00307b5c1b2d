-- 020_admission: the database guards every sync writer passes through,
-- whatever client it uses (A1-A6, S12).
--
-- Writers lock the destination server and library admission rows
-- FOR SHARE NOWAIT; the lock lasts until their commit, so a fence
-- (FOR UPDATE NOWAIT, taken by seal and by removal jobs) can never overtake
-- an admitted write. The checks run once per statement over the statement's
-- transition table, so a bulk INSERT ... SELECT pays them once per library.
--
-- These are correctness guards for the tested writer family, not a security
-- boundary: a database owner can disable triggers or bypass the protocol.

-- Locks the admission rows of LIBS (ascending) and their servers FOR SHARE
-- without waiting and rejects missing or draining parents. Returns whether
-- a prune job collects for one of LIBS (C9: the caller then protects its
-- rows). P_WHAT: for a dependent table's rows (055_dependents.sql), a
-- draining parent is refused with CUA11 naming that table, not CUA01.
-- SKIP LOCKED, then a read of the skipped row to tell held from missing,
-- not NOWAIT in an EXCEPTION block: a lock taken in a subtransaction
-- carries the subtransaction's id as the row's xmax, which no pg_locks
-- row names once it ends inside the writer's transaction, so every busy
-- answer about this writer (a seal's or a fence's, T3) named "a
-- transaction that has ended since" while the writer was alive. A fence
-- that holds a row is named here in turn (cleanup.raise_row_busy).
DROP FUNCTION IF EXISTS cleanup.admit_writes(bigint[]);
CREATE OR REPLACE FUNCTION cleanup.admit_writes(libs bigint[], p_what text DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql
AS $$
DECLARE
    l          bigint;
    la         cleanup.library_admission;
    sa         cleanup.server_admission;
    libname    text;
    v_xmax     xid;
    collecting boolean := false;
BEGIN
    FOR l IN SELECT DISTINCT x FROM unnest(libs) AS x ORDER BY x LOOP
        SELECT * INTO la FROM cleanup.library_admission WHERE library_id = l FOR SHARE SKIP LOCKED;
        IF NOT FOUND THEN
            SELECT a.xmax INTO v_xmax FROM cleanup.library_admission a WHERE a.library_id = l;
            IF FOUND THEN
                PERFORM cleanup.raise_row_busy(
                    pg_catalog.format('library %s is being fenced by a cleanup job; retry later', l),
                    pg_catalog.format('the admission row of library %s', l), v_xmax);
            END IF;
            RAISE EXCEPTION 'library % does not exist or is being removed', l
                USING ERRCODE = 'CUA02';
        END IF;
        SELECT * INTO sa FROM cleanup.server_admission WHERE server_id = la.server_id FOR SHARE SKIP LOCKED;
        IF NOT FOUND THEN
            SELECT a.xmax INTO v_xmax FROM cleanup.server_admission a WHERE a.server_id = la.server_id;
            IF FOUND THEN
                PERFORM cleanup.raise_row_busy(
                    pg_catalog.format('server %s of library %s is being fenced by a cleanup job; retry later',
                                      la.server_id, l),
                    pg_catalog.format('the admission row of server %s', la.server_id), v_xmax);
            END IF;
            RAISE EXCEPTION 'server % of library % does not exist or is being removed', la.server_id, l
                USING ERRCODE = 'CUA02';
        END IF;
        IF la.state <> 'open' OR sa.state <> 'open' THEN
            SELECT name INTO libname FROM inventory.libraries WHERE id = l;
            IF p_what IS NOT NULL THEN
                RAISE EXCEPTION 'library % (%) is draining: cleanup job % owns it and admits no writes: no new or changed % rows there',
                    l, coalesce(libname, '?'), coalesce(la.job_id, sa.job_id), p_what
                    USING ERRCODE = 'CUA11',
                          HINT = 'the library is being cleaned; its dependents are drained with it';
            END IF;
            RAISE EXCEPTION 'library % (%) is draining: cleanup job % owns it and admits no writes',
                l, coalesce(libname, '?'), coalesce(la.job_id, sa.job_id)
                USING ERRCODE = 'CUA01',
                      HINT = 'moves out of a draining library into an open one are allowed';
        END IF;
        collecting := collecting OR la.collecting_job IS NOT NULL;
    END LOOP;
    RETURN collecting;
END $$;

CREATE OR REPLACE FUNCTION cleanup.admit_libraries(libs bigint[])
RETURNS void LANGUAGE plpgsql
AS $$ BEGIN PERFORM cleanup.admit_writes(libs); END $$;

-- C9 (a strengthening of seed 000): the external IDs of ROWS (a statement's
-- inserted or updated rows, as (library_id, external_id) arrays) that are
-- now in a library a prune job collects for enter that job's manifest as
-- protected: the job keeps them, and seal counts them apart. A write the
-- database accepted while the job collected cannot be in a traversal that
-- began earlier, so it must not be pruned. An ID already seen stays seen.
-- Called with the admission rows share-locked (admit_writes), so the
-- collecting job cannot be sealed or cancelled under this statement.
-- Ascending (job, ID) order, as job_append inserts, so two inserting
-- transactions cannot deadlock on the manifest's key.
CREATE OR REPLACE FUNCTION cleanup.protect_written(libs bigint[], ids text[])
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO cleanup.manifest (job_id, external_id, protected)
    SELECT DISTINCT a.collecting_job, w.external_id, true
      FROM unnest(libs, ids) AS w(library_id, external_id)
      JOIN cleanup.library_admission a ON a.library_id = w.library_id
     WHERE a.collecting_job IS NOT NULL
     ORDER BY 1, 2
    ON CONFLICT DO NOTHING;
END $$;

-- Adds DELTAS (library_id, delta) to the per-library item counts, in
-- ascending library order. A library's count is the sum of its stripes
-- (migration 019): each delta goes to the first stripe no other
-- transaction holds (FOR UPDATE SKIP LOCKED: two writers into one library
-- no longer wait for each other's commit), and to a new stripe when every
-- one is held. Two transactions that add the same new stripe at once: the
-- second waits for the first (ON CONFLICT), as every writer of a library
-- did before stripes. The writers' common paths (below) write the
-- first-free-stripe update inline and come here only when it found none.
-- PL/pgSQL, not SQL: its plan is cached per session, where a SQL function
-- called from a trigger is parsed and planned on every call (~0.1 ms, paid
-- by every writer statement and every cleanup step).
CREATE OR REPLACE FUNCTION cleanup.bump_counts(libs bigint[], deltas bigint[])
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    l bigint;
    d bigint;
BEGIN
    FOR l, d IN SELECT lib, sum(x) FROM unnest(libs, deltas) AS t(lib, x)
                 GROUP BY lib HAVING sum(x) <> 0 ORDER BY lib LOOP
        UPDATE cleanup.library_stats s SET item_count = s.item_count + d, changed_at = now()
         WHERE s.ctid = (SELECT x.ctid FROM cleanup.library_stats x WHERE x.library_id = l
                          ORDER BY x.library_id, x.stripe LIMIT 1 FOR UPDATE SKIP LOCKED);
        IF NOT FOUND THEN
            INSERT INTO cleanup.library_stats AS s (library_id, stripe, item_count)
            SELECT l, coalesce(max(x.stripe) + 1, 0), d FROM cleanup.library_stats x WHERE x.library_id = l
            ON CONFLICT (library_id, stripe) DO UPDATE
               SET item_count = s.item_count + excluded.item_count, changed_at = now();
        END IF;
    END LOOP;
END $$;

-- The item count of library P_LIB: the sum of its stripes (0 when it has
-- none).
CREATE OR REPLACE FUNCTION cleanup.library_item_count(p_lib bigint)
RETURNS bigint LANGUAGE sql STABLE
AS $$
    SELECT coalesce(sum(s.item_count), 0)::bigint FROM cleanup.library_stats s WHERE s.library_id = p_lib
$$;

-- T7: rows that leave a library while a cleanup job fences it, before a
-- step of the job reached them (a move out into an open library, A3, or a
-- delete by a login allowed to delete), are recorded for the job
-- (cleanup.job_departures; its next step counts them as moved or absent).
-- P_LIBS, P_IDS, P_KEYS: the old library, id and external ID of each row
-- leaving (parallel arrays); P_KIND 'moved' or 'deleted'.
-- The source libraries' admission rows are share-locked without waiting
-- (a fence or a seal in flight: busy), so no fence can begin while such a
-- write is uncommitted: a job's scope count, taken under the fence, never
-- counts a row already on its way out. Then, for a fenced library, the
-- job row is share-locked without waiting (a step in flight: busy), so
-- the job's cursor read here is the one its next step starts from: a row
-- beyond it is one no step has examined (pass 1, at or below the
-- high-water id), and only such rows are recorded; a row behind it was
-- counted by the step that passed it.
CREATE OR REPLACE FUNCTION cleanup.record_departures(p_kind text, p_libs bigint[], p_ids bigint[], p_keys text[])
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    l   bigint;
    la  record;
    j   record;
BEGIN
    FOR l IN SELECT DISTINCT x FROM unnest(p_libs) AS x ORDER BY x LOOP
        SELECT a.state, a.job_id, a.xmax INTO la FROM cleanup.library_admission a
         WHERE a.library_id = l FOR SHARE SKIP LOCKED;
        IF NOT FOUND THEN
            SELECT a.state, a.job_id, a.xmax INTO la FROM cleanup.library_admission a WHERE a.library_id = l;
            CONTINUE WHEN NOT FOUND;
            PERFORM cleanup.raise_row_busy(
                pg_catalog.format('library %s is being fenced by a cleanup job; retry later', l),
                pg_catalog.format('the admission row of library %s', l), la.xmax);
        END IF;
        CONTINUE WHEN la.state <> 'draining' OR la.job_id IS NULL;
        -- Past its first pass a job never returns to it: no lock needed
        -- to know that nothing is beyond its cursor any more.
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM cleanup.jobs c
                                   WHERE c.id = la.job_id AND c.phase = 'draining' AND c.pass_no = 1);
        SELECT c.id, c.phase, c.pass_no, c.key_cursor, c.cursor_library_id, c.cursor_id, c.high_water_id
          INTO j FROM cleanup.jobs c WHERE c.id = la.job_id FOR KEY SHARE SKIP LOCKED;
        IF NOT FOUND THEN
            PERFORM cleanup.raise_row_busy(
                pg_catalog.format('a step of cleanup job %s is running in library %s; retry later', la.job_id, l),
                pg_catalog.format('the row of job %s', la.job_id),
                (SELECT c.xmax FROM cleanup.jobs c WHERE c.id = la.job_id));
        END IF;
        CONTINUE WHEN j.phase <> 'draining' OR j.pass_no <> 1;
        INSERT INTO cleanup.job_departures (job_id, item_id, kind)
        SELECT j.id, w.id, p_kind
          FROM unnest(p_libs, p_ids, p_keys) AS w(lib, id, k)
         WHERE w.lib = l AND w.id <= j.high_water_id
           AND CASE WHEN j.key_cursor IS NOT NULL THEN w.k > j.key_cursor
                    ELSE (w.lib, w.id) > (j.cursor_library_id, j.cursor_id) END
        ON CONFLICT DO NOTHING;
    END LOOP;
END $$;

-- The fast path of the common case, in the insert and
-- update triggers below: a write whose rows go into, or stay in, one open
-- library (a move: from one open library into another of the same
-- server) that no prune job collects for. One probe share-locks the
-- admission rows involved (each library, then its server; ascending
-- library order) without waiting, as admit_writes and record_departures
-- would, and reads their states; when every row is there and open,
-- nothing is collecting and the write stays within one server, nothing
-- else of theirs applies (no protection, C9; no departure, T7, recorded
-- only from a draining library; no rejection, A1/A3/A4), and one counter
-- bump is left. Anything else (a row skipped because a fence holds it, a
-- missing or draining parent, a collecting job, a move to another server,
-- several libraries, a claim changing) takes the full path, which checks
-- it all from the start and answers as it always did. The probe is
-- written out in both triggers: a helper function would pay a call with
-- its pinned search_path (fmgr_security_definer) on every write.
-- Measured with bench_writers and EXPLAIN ANALYZE (docs/benchmarks.md).
DROP FUNCTION IF EXISTS cleanup.admit_fast(bigint, bigint);

-- The insert trigger is also the count cache's: one
-- statement trigger where there were two (items_admit_insert and
-- items_count_cache_insert; a trigger call with its pinned search_path and
-- its transition table cost 19-26 us a statement). Admission first, then
-- the count cache's part, as the two triggers fired (name order).
CREATE OR REPLACE FUNCTION cleanup.items_after_insert()
RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    libs      bigint[];
    counts    bigint[];
    lo        bigint;
    hi        bigint;
    n         bigint;
    fast      boolean := false;
    watched   boolean := true;
    v_touched bigint[];
    v_libs    bigint[];
    v_ids     bigint[];
    v_rows    bigint;
BEGIN
    SELECT min(library_id), max(library_id), count(*) INTO lo, hi, n FROM new_rows;
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    -- The common case: one open library nobody collects for. The same
    -- probe reads whether the count cache watches it (the count cache's
    -- part below runs only then). No row (a parent missing, or skipped
    -- because a fence holds it) leaves FAST null: the full path.
    IF lo = hi THEN
        SELECT la.state = 'open' AND sa.state = 'open' AND la.collecting_job IS NULL,
               EXISTS (SELECT 1 FROM cleanup.count_registry r WHERE r.library_id = lo)
          INTO fast, watched
          FROM cleanup.library_admission la
          JOIN cleanup.server_admission sa ON sa.server_id = la.server_id
         WHERE la.library_id = lo
           FOR SHARE OF la, sa SKIP LOCKED;
    END IF;
    IF fast THEN
        -- The first stripe of the library's count no other transaction
        -- holds (cleanup.bump_counts when every one is held).
        UPDATE cleanup.library_stats s SET item_count = s.item_count + n, changed_at = now()
         WHERE s.ctid = (SELECT x.ctid FROM cleanup.library_stats x WHERE x.library_id = lo
                          ORDER BY x.library_id, x.stripe LIMIT 1 FOR UPDATE SKIP LOCKED);
        IF NOT FOUND THEN
            PERFORM cleanup.bump_counts(ARRAY[lo], ARRAY[n]);
        END IF;
        IF NOT watched THEN
            RETURN NULL;
        END IF;
    ELSE
        SELECT array_agg(library_id ORDER BY library_id), array_agg(c ORDER BY library_id)
          INTO libs, counts
          FROM (SELECT library_id, count(*) AS c FROM new_rows GROUP BY library_id) s;
        IF cleanup.admit_writes(libs) THEN
            PERFORM cleanup.protect_written(array_agg(w.library_id), array_agg(w.external_id))
               FROM new_rows w;
        END IF;
        PERFORM cleanup.bump_counts(libs, counts);
    END IF;
    -- The count cache (075_count_cache.sql, count_guard_rows for deletes):
    -- nothing to do unless some library is watched (on the common path:
    -- unless the one library is, read by the probe above).
    IF EXISTS (SELECT 1 FROM cleanup.count_registry WHERE library_id IS NOT NULL) THEN
        SELECT array_agg(DISTINCT c.library_id), count(*), array_agg(c.library_id), array_agg(c.id)
          INTO v_touched, v_rows, v_libs, v_ids
          FROM new_rows c JOIN cleanup.count_registry r ON r.library_id = c.library_id;
        IF v_touched IS NOT NULL THEN
            PERFORM cleanup.count_apply(v_touched, v_libs, v_ids, v_rows);
        END IF;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION cleanup.items_after_update()
RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    libs     bigint[];
    moved    record;
    mlibs    bigint[];
    mdeltas  bigint[];
    v_n      bigint;
    v_olo    bigint;
    v_ohi    bigint;
    v_nlo    bigint;
    v_nhi    bigint;
    v_moved  bigint;
    v_claims boolean;
    v_fast   boolean := false;
BEGIN
    -- The common case (the fast path above): the rows stay in one open
    -- library, or all move from one open library to another of the same
    -- server, and no claim changes (a step's claim goes the full path).
    -- No join of the transition tables: with one old and one new library
    -- every row stayed, or every row moved; with no claim on either side
    -- none changed (an UPDATE has as many old rows as new).
    SELECT o.n, o.lo, o.hi, n.lo, n.hi, o.claims + n.claims > 0
      INTO v_n, v_olo, v_ohi, v_nlo, v_nhi, v_claims
      FROM (SELECT count(*) AS n, min(library_id) AS lo, max(library_id) AS hi, count(claimed_by) AS claims
              FROM old_rows) o,
           (SELECT count(*) AS n, min(library_id) AS lo, max(library_id) AS hi, count(claimed_by) AS claims
              FROM new_rows) n;
    v_moved := CASE WHEN v_olo = v_nlo THEN 0 ELSE v_n END;
    IF v_n > 0 AND v_olo = v_ohi AND v_nlo = v_nhi AND NOT v_claims THEN
        IF v_moved = 0 THEN
            -- In place: the insert trigger's probe (no row leaves V_FAST
            -- null: the full path).
            SELECT la.state = 'open' AND sa.state = 'open' AND la.collecting_job IS NULL
              INTO v_fast
              FROM cleanup.library_admission la
              JOIN cleanup.server_admission sa ON sa.server_id = la.server_id
             WHERE la.library_id = v_olo
               FOR SHARE OF la, sa SKIP LOCKED;
        ELSE
            SELECT count(*) = 2
                   AND bool_and(p.ls = 'open' AND p.ss = 'open' AND p.collecting_job IS NULL)
                   AND min(p.server_id) = max(p.server_id)
              INTO v_fast
              FROM (SELECT la.state AS ls, sa.state AS ss, la.collecting_job, la.server_id
                      FROM cleanup.library_admission la
                      JOIN cleanup.server_admission sa ON sa.server_id = la.server_id
                     WHERE la.library_id IN (v_olo, v_nlo)
                     ORDER BY la.library_id
                       FOR SHARE OF la, sa SKIP LOCKED) p;
        END IF;
    END IF;
    IF v_fast THEN
        -- A move: the two counts, each by its own update of a free
        -- stripe in ascending library order (as bump_counts does),
        -- without bump_counts' call, unnest, grouping and speculative
        -- insertion; a library with no free stripe goes through it.
        IF v_moved > 0 THEN
            UPDATE cleanup.library_stats s
               SET item_count = s.item_count + CASE WHEN v_olo < v_nlo THEN -v_moved ELSE v_moved END,
                   changed_at = now()
             WHERE s.ctid = (SELECT x.ctid FROM cleanup.library_stats x WHERE x.library_id = least(v_olo, v_nlo)
                              ORDER BY x.library_id, x.stripe LIMIT 1 FOR UPDATE SKIP LOCKED);
            IF NOT FOUND THEN
                PERFORM cleanup.bump_counts(ARRAY[least(v_olo, v_nlo)],
                                            ARRAY[CASE WHEN v_olo < v_nlo THEN -v_moved ELSE v_moved END]);
            END IF;
            UPDATE cleanup.library_stats s
               SET item_count = s.item_count + CASE WHEN v_olo < v_nlo THEN v_moved ELSE -v_moved END,
                   changed_at = now()
             WHERE s.ctid = (SELECT x.ctid FROM cleanup.library_stats x WHERE x.library_id = greatest(v_olo, v_nlo)
                              ORDER BY x.library_id, x.stripe LIMIT 1 FOR UPDATE SKIP LOCKED);
            IF NOT FOUND THEN
                PERFORM cleanup.bump_counts(ARRAY[greatest(v_olo, v_nlo)],
                                            ARRAY[CASE WHEN v_olo < v_nlo THEN v_moved ELSE -v_moved END]);
            END IF;
        END IF;
        RETURN NULL;
    END IF;
    -- Every destination must admit writes: this rejects moves into a
    -- draining library and updates of rows that stay in one, and allows
    -- moves out of a draining library into an open one (A3).
    SELECT array_agg(DISTINCT library_id) INTO libs FROM new_rows;
    IF libs IS NULL THEN
        RETURN NULL;
    END IF;
    -- The engine's own update: a step claiming items (055_dependents.sql)
    -- under the library locks it holds, changing claimed_by and nothing
    -- else. Only that passes: any other change, whoever holds the locks,
    -- goes through admission and the counts below.
    IF NOT EXISTS (SELECT 1 FROM unnest(libs) l WHERE NOT cleanup.holds_lock(cleanup.library_key(l)))
       AND NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                        WHERE to_jsonb(o) - 'claimed_by' IS DISTINCT FROM to_jsonb(n) - 'claimed_by')
       AND (SELECT count(*) FROM old_rows) = (SELECT count(*) FROM new_rows) THEN
        RETURN NULL;
    END IF;
    IF cleanup.admit_writes(libs) THEN
        -- Updates of rows in a collecting library and moves into it (C9).
        PERFORM cleanup.protect_written(array_agg(n.library_id), array_agg(n.external_id))
           FROM new_rows n;
    END IF;

    -- Server identity is immutable (A4): a move stays within its server.
    SELECT o.id, o.library_id AS old_lib, n.library_id AS new_lib INTO moved
      FROM old_rows o
      JOIN new_rows n ON n.id = o.id
      JOIN inventory.libraries lo ON lo.id = o.library_id
      JOIN inventory.libraries ln ON ln.id = n.library_id
     WHERE lo.server_id <> ln.server_id
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'item % cannot move from library % to library % of another server',
            moved.id, moved.old_lib, moved.new_lib
            USING ERRCODE = 'CUA03', HINT = 'server identity of an item is immutable';
    END IF;

    -- Rows moving out of a fenced library before a step reached them (T7).
    IF EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n USING (id) WHERE o.library_id <> n.library_id) THEN
        PERFORM cleanup.record_departures('moved', array_agg(o.library_id), array_agg(o.id), array_agg(o.external_id))
           FROM old_rows o JOIN new_rows n USING (id)
          WHERE o.library_id <> n.library_id;
    END IF;

    SELECT array_agg(lib ORDER BY lib), array_agg(d ORDER BY lib) INTO mlibs, mdeltas
      FROM (SELECT lib, sum(d) AS d FROM (
                SELECT o.library_id AS lib, -1 AS d FROM old_rows o JOIN new_rows n USING (id)
                 WHERE o.library_id <> n.library_id
                UNION ALL
                SELECT n.library_id, 1 FROM old_rows o JOIN new_rows n USING (id)
                 WHERE o.library_id <> n.library_id) x
             GROUP BY lib) s;
    IF mlibs IS NOT NULL THEN
        PERFORM cleanup.bump_counts(mlibs, mdeltas);
    END IF;
    RETURN NULL;
END $$;

-- A statement that deleted rows of one library (every cleanup step, most
-- writer statements) updates that library's count row directly; one that
-- spans libraries goes through bump_counts (ascending order). Measured on
-- DELETEs of 128 rows: 129-147 us each instead of 148-162 (82 us without
-- the trigger).
CREATE OR REPLACE FUNCTION cleanup.items_after_delete()
RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    libs   bigint[];
    counts bigint[];
    lo     bigint;
    hi     bigint;
    n      bigint;
    quiet  boolean;
BEGIN
    SELECT min(library_id), max(library_id), count(*) INTO lo, hi, n FROM old_rows;
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    -- Anyone's delete but a step's (which holds the library locks) may
    -- take rows out of a fenced library before a step reached them (T7).
    IF NOT cleanup.holds_lock(cleanup.library_key(lo))
       OR (lo <> hi AND EXISTS (SELECT 1 FROM (SELECT DISTINCT o.library_id FROM old_rows o) x
                                 WHERE NOT cleanup.holds_lock(cleanup.library_key(x.library_id)))) THEN
        -- A delete from one library that no job drains (the common
        -- case: a site's own prune; the writer login has no DELETE): the
        -- admission row share-locked as record_departures would lock it,
        -- and nothing more; the rows' ids and keys are gathered only for
        -- a library a job drains, or whose row a fence holds
        -- (record_departures answers busy). A one-library DELETE of
        -- 200,000 rows spent 172-340 ms gathering them.
        IF lo = hi THEN
            SELECT a.state <> 'draining' OR a.job_id IS NULL INTO quiet
              FROM cleanup.library_admission a WHERE a.library_id = lo FOR SHARE SKIP LOCKED;
        END IF;
        IF NOT coalesce(quiet, false) THEN
            PERFORM cleanup.record_departures('deleted', array_agg(o.library_id), array_agg(o.id),
                                              array_agg(o.external_id))
               FROM old_rows o;
        END IF;
    END IF;
    IF lo = hi THEN
        -- A step's delete: the stripe its cleanup.lock_library_stripe
        -- took, or another free one; never a wait.
        UPDATE cleanup.library_stats s SET item_count = s.item_count - n, changed_at = now()
         WHERE s.ctid = (SELECT x.ctid FROM cleanup.library_stats x WHERE x.library_id = lo
                          ORDER BY x.library_id, x.stripe LIMIT 1 FOR UPDATE SKIP LOCKED);
        IF FOUND THEN
            RETURN NULL;
        END IF;
    END IF;
    SELECT array_agg(library_id ORDER BY library_id), array_agg(-c ORDER BY library_id)
      INTO libs, counts
      FROM (SELECT library_id, count(*) AS c FROM old_rows GROUP BY library_id) s;
    PERFORM cleanup.bump_counts(libs, counts);
    RETURN NULL;
END $$;

-- Row trigger, fires only when id or external_id actually change (A4).
CREATE OR REPLACE FUNCTION cleanup.items_immutable()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'item %: id and external_id are immutable (tried % / %)',
        OLD.id, NEW.id, NEW.external_id
        USING ERRCODE = 'CUA04';
END $$;

-- Servers: a new server gets an open admission row.
CREATE OR REPLACE FUNCTION cleanup.servers_after_insert()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO cleanup.server_admission (server_id) VALUES (NEW.id);
    INSERT INTO cleanup.engine_locks (key) VALUES (cleanup.coordinator_key(NEW.id)) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION cleanup.servers_before_update()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id THEN
        RAISE EXCEPTION 'server %: id is immutable', OLD.id USING ERRCODE = 'CUA04';
    END IF;
    RETURN NEW;
END $$;

-- Libraries: server admission fences new libraries (A5); a new library gets
-- an open admission row and a zero count.
CREATE OR REPLACE FUNCTION cleanup.libraries_before_insert()
RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    sa cleanup.server_admission;
    v_xmax xid;
BEGIN
    -- SKIP LOCKED, not NOWAIT in a subtransaction (cleanup.admit_writes).
    SELECT * INTO sa FROM cleanup.server_admission WHERE server_id = NEW.server_id FOR SHARE SKIP LOCKED;
    IF NOT FOUND THEN
        SELECT a.xmax INTO v_xmax FROM cleanup.server_admission a WHERE a.server_id = NEW.server_id;
        IF FOUND THEN
            PERFORM cleanup.raise_row_busy(
                pg_catalog.format('server %s is being fenced by a cleanup job; retry later', NEW.server_id),
                pg_catalog.format('the admission row of server %s', NEW.server_id), v_xmax);
        END IF;
        RAISE EXCEPTION 'server % does not exist or is being removed', NEW.server_id
            USING ERRCODE = 'CUA02';
    END IF;
    IF sa.state <> 'open' THEN
        RAISE EXCEPTION 'server % is draining: cleanup job % owns it and admits no new library',
            NEW.server_id, sa.job_id USING ERRCODE = 'CUA01';
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION cleanup.libraries_after_insert()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    INSERT INTO cleanup.library_admission (library_id, server_id) VALUES (NEW.id, NEW.server_id);
    INSERT INTO cleanup.library_stats (library_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
    INSERT INTO cleanup.engine_locks (key) VALUES (cleanup.library_key(NEW.id)) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

-- Parent ownership cannot change (A4); a draining library cannot be renamed.
CREATE OR REPLACE FUNCTION cleanup.libraries_before_update()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id OR NEW.server_id IS DISTINCT FROM OLD.server_id THEN
        RAISE EXCEPTION 'library %: id and server_id are immutable', OLD.id USING ERRCODE = 'CUA04';
    END IF;
    PERFORM cleanup.admit_libraries(ARRAY[OLD.id]);
    RETURN NEW;
END $$;

-- Parent guards (S12): deleting a library or a server needs the cleanup
-- protocol even when it is empty: a job of this scope in phase finalizing,
-- this backend holding its coordinator and library locks, and no remaining
-- descendants (S11), re-checked here under the parent's row lock.
-- The whole guard, for P_KIND ('library' or 'server') P_ID named P_NAME
-- of server P_SERVER: CUA05 unless the protocol holds and the parent is
-- empty. The two BEFORE DELETE triggers below name their parent.
CREATE OR REPLACE FUNCTION cleanup.guard_parent_delete(p_kind text, p_id bigint, p_name text, p_server bigint)
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    IF NOT EXISTS (
           SELECT 1 FROM cleanup.jobs j
            WHERE j.phase = 'finalizing' AND j.server_id = p_server
              AND (j.kind = 'remove-server'
                   OR (p_kind = 'library' AND j.kind = 'remove-library' AND j.library_id = p_id)))
       OR NOT cleanup.holds_lock(cleanup.coordinator_key(p_server))
       OR (p_kind = 'library' AND NOT cleanup.holds_lock(cleanup.library_key(p_id))) THEN
        RAISE EXCEPTION '% % (%) can only be deleted by a cleanup job''s finalize step', p_kind, p_id, p_name
            USING ERRCODE = 'CUA05',
                  HINT = format('use: cleanupctl job create remove-%s --%s %s', p_kind, p_kind, p_id);
    END IF;
    IF p_kind = 'server' THEN
        IF EXISTS (SELECT 1 FROM inventory.libraries WHERE server_id = p_id) THEN
            RAISE EXCEPTION 'server % (%) still has libraries; a parent delete never cascades', p_id, p_name
                USING ERRCODE = 'CUA05';
        END IF;
        RETURN;
    END IF;
    -- A library's emptiness, as the step engine writes it:
    -- the first row of the library's range in index order. Only index
    -- (library_id, id) yields that order, so statistics from before a
    -- drain (which still give the library its old rows) cannot turn it
    -- into a sequential scan of inventory.items while writers queue on the
    -- parent row. (Not EXISTS: the planner drops ORDER BY and LIMIT inside
    -- EXISTS, and with the old statistics a scan "finding a row at once"
    -- looked cheapest: measured 55 ms over 1M items under the lock.)
    PERFORM 1 FROM (SELECT id FROM inventory.items
                     WHERE (library_id, id) >= (p_id, -9223372036854775808)
                       AND (library_id, id) <= (p_id, 9223372036854775807)
                     ORDER BY library_id, id LIMIT 1) first_item;
    IF FOUND THEN
        RAISE EXCEPTION 'library % (%) still holds inventory; a parent delete never cascades', p_id, p_name
            USING ERRCODE = 'CUA05';
    END IF;
END $$;

CREATE OR REPLACE FUNCTION cleanup.libraries_before_delete()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM cleanup.guard_parent_delete('library', OLD.id, OLD.name, OLD.server_id);
    RETURN OLD;
END $$;

CREATE OR REPLACE FUNCTION cleanup.servers_before_delete()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM cleanup.guard_parent_delete('server', OLD.id, OLD.name, OLD.id);
    RETURN OLD;
END $$;

-- TRUNCATE skips row and statement triggers: it would empty inventory past
-- the parent guards (S12) and leave the per-library counts wrong. Refused
-- unless the session says `SET cleanup.allow_truncate = on` (an owner's
-- explicit bypass in a disposable database, like disabling a trigger; the
-- isolation specs' set-up uses it).
CREATE OR REPLACE FUNCTION cleanup.inventory_truncate_guard()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    IF coalesce(current_setting('cleanup.allow_truncate', true), '') = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'TRUNCATE of %.% bypasses the cleanup protocol (admission, parent guards, item counts)',
        TG_TABLE_SCHEMA, TG_TABLE_NAME
        USING ERRCODE = 'CUA05',
              HINT = 'remove inventory with a cleanup job; in a disposable database an owner may SET cleanup.allow_truncate = on';
END $$;

-- The triggers of the guards above, one row each: name, when it fires,
-- table of schema inventory, level (and transition tables or condition),
-- function of schema cleanup. Created by one loop, not fourteen
-- statements.
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM (VALUES
        ('items_immutable',          'BEFORE UPDATE',   'items',
         'FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.external_id IS DISTINCT FROM NEW.external_id)',
         'items_immutable'),
        ('items_admit_insert',       'AFTER INSERT',    'items',
         'REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT',                        'items_after_insert'),
        ('items_admit_update',       'AFTER UPDATE',    'items',
         'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT',  'items_after_update'),
        ('items_count_delete',       'AFTER DELETE',    'items',
         'REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT',                        'items_after_delete'),
        ('servers_admission',        'AFTER INSERT',    'media_servers', 'FOR EACH ROW', 'servers_after_insert'),
        ('servers_immutable',        'BEFORE UPDATE',   'media_servers', 'FOR EACH ROW', 'servers_before_update'),
        ('libraries_admit_insert',   'BEFORE INSERT',   'libraries',     'FOR EACH ROW', 'libraries_before_insert'),
        ('libraries_admission',      'AFTER INSERT',    'libraries',     'FOR EACH ROW', 'libraries_after_insert'),
        ('libraries_immutable',      'BEFORE UPDATE',   'libraries',     'FOR EACH ROW', 'libraries_before_update'),
        ('libraries_guard_delete',   'BEFORE DELETE',   'libraries',     'FOR EACH ROW', 'libraries_before_delete'),
        ('servers_guard_delete',     'BEFORE DELETE',   'media_servers', 'FOR EACH ROW', 'servers_before_delete'),
        ('items_guard_truncate',     'BEFORE TRUNCATE', 'items',         'FOR EACH STATEMENT', 'inventory_truncate_guard'),
        ('libraries_guard_truncate', 'BEFORE TRUNCATE', 'libraries',     'FOR EACH STATEMENT', 'inventory_truncate_guard'),
        ('servers_guard_truncate',   'BEFORE TRUNCATE', 'media_servers', 'FOR EACH STATEMENT', 'inventory_truncate_guard')
    ) AS v(name, fires, tbl, level, fn) LOOP
        EXECUTE pg_catalog.format('CREATE OR REPLACE TRIGGER %I %s ON inventory.%I %s EXECUTE FUNCTION cleanup.%I()',
                                  t.name, t.fires, t.tbl, t.level, t.fn);
    END LOOP;
END $$;
