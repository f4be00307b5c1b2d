-- 060_step: bounded, fenced, resumable and replayable steps of a draining
-- job (S1-S13), the busy-retry record, and the read-only preview.
-- docs/steps.md explains the protocol; this file is its implementation.
--
-- One call of cleanup.job_step() is one step: one transaction, one round
-- trip. Locks in the order L1 (source table, coordinator, job row, library
-- locks ascending), all nonblocking: contention raises 55P03 and nothing
-- changes. A step examines at most 1024 rows of its range, visits at most
-- 128 deletion candidates among them and makes at most 128 domain
-- mutations (S1; seen rows are passed over, not visited: docs/steps.md,
-- "Budget"); its row mutations, the job's counters and cursor and its step
-- record commit together (S7). Before its first domain mutation every step
-- compares the recorded schema contract (cleanup.contract_assert, CU403).
--
-- The hot path (draining) avoids PL/pgSQL EXCEPTION blocks: each one is a
-- subtransaction. NOWAIT failures there surface with PostgreSQL's own 55P03
-- message; the rarer finalize steps translate them into clearer ones.

-- Earlier definitions of this file that no longer exist.
DROP FUNCTION IF EXISTS cleanup.step_classify(bigint, boolean, bigint, bigint, bigint[], xid[], boolean);
DROP FUNCTION IF EXISTS cleanup.ms_since(timestamptz);
DROP FUNCTION IF EXISTS cleanup.step_drain(bigint, boolean, bigint, bigint, bigint[], xid[], boolean, boolean);
DROP FUNCTION IF EXISTS cleanup.step_drain(bigint, boolean, bigint, bigint, bigint[], xid[], text[], boolean, boolean);
DROP FUNCTION IF EXISTS cleanup.step_drain(bigint, bigint, bigint, bigint[], xid[], tid[], boolean[], boolean, boolean);
DROP FUNCTION IF EXISTS cleanup.step_drain(bigint, bigint, bigint, bigint[], xid[], tid[], boolean, boolean);
DROP FUNCTION IF EXISTS cleanup.step_drain(bigint, bigint, bigint, bigint[], xid[], tid[], boolean, boolean, int);

-- The busy answer (55P03) for row P_ID of a parent (library or server)
-- or of its admission row that another transaction holds, naming the
-- holder: lock_parent_row's, and the plan phase's (032_plan.sql).
CREATE OR REPLACE FUNCTION cleanup.raise_parent_busy(p_what text, p_id bigint)
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION '% row % is locked by another transaction (a sync writer in flight); nothing changed',
        p_what, p_id
        USING ERRCODE = '55P03',
              DETAIL = 'held by ' || coalesce((cleanup.row_holders_text(CASE p_what
            WHEN 'library' THEN (SELECT x.xmax FROM inventory.libraries x WHERE x.id = p_id)
            WHEN 'server' THEN (SELECT x.xmax FROM inventory.media_servers x WHERE x.id = p_id)
            WHEN 'library admission' THEN (SELECT x.xmax FROM cleanup.library_admission x WHERE x.library_id = p_id)
            ELSE (SELECT x.xmax FROM cleanup.server_admission x WHERE x.server_id = p_id) END,
            pg_catalog.format('the %s row %s', p_what, p_id)
                            )), 'a transaction that has ended since'),
              HINT = 'busy: retry later';
END $$;

-- Locks row P_ID of a parent (library or server) FOR UPDATE without
-- waiting, or the admission row of that parent, with a message naming the
-- holder; held to the end of the transaction (finalize steps, seal and
-- cancel). Returns whether the row is there. SKIP LOCKED and a read of the
-- skipped row, not NOWAIT in an EXCEPTION block: a lock taken in a
-- subtransaction leaves the subtransaction's id in the row's xmax, and a
-- writer this lock makes busy was told "held by a transaction that has
-- ended since" (cleanup.admit_writes).
CREATE OR REPLACE FUNCTION cleanup.lock_parent_row(p_what text, p_id bigint)
RETURNS boolean LANGUAGE plpgsql
AS $$
DECLARE
    v_locked boolean;
    v_there  boolean;
BEGIN
    IF p_what = 'library' THEN
        PERFORM 1 FROM inventory.libraries WHERE id = p_id FOR UPDATE SKIP LOCKED;
        v_locked := FOUND;
        v_there := v_locked OR EXISTS (SELECT 1 FROM inventory.libraries WHERE id = p_id);
    ELSIF p_what = 'server' THEN
        PERFORM 1 FROM inventory.media_servers WHERE id = p_id FOR UPDATE SKIP LOCKED;
        v_locked := FOUND;
        v_there := v_locked OR EXISTS (SELECT 1 FROM inventory.media_servers WHERE id = p_id);
    ELSIF p_what = 'library admission' THEN
        PERFORM 1 FROM cleanup.library_admission WHERE library_id = p_id FOR UPDATE SKIP LOCKED;
        v_locked := FOUND;
        v_there := v_locked OR EXISTS (SELECT 1 FROM cleanup.library_admission WHERE library_id = p_id);
    ELSIF p_what = 'server admission' THEN
        PERFORM 1 FROM cleanup.server_admission WHERE server_id = p_id FOR UPDATE SKIP LOCKED;
        v_locked := FOUND;
        v_there := v_locked OR EXISTS (SELECT 1 FROM cleanup.server_admission WHERE server_id = p_id);
    ELSE
        RAISE EXCEPTION 'lock_parent_row: unknown parent kind %', p_what;
    END IF;
    IF v_there AND NOT v_locked THEN
        PERFORM cleanup.raise_parent_busy(p_what, p_id);
    END IF;
    RETURN v_locked;
END $$;

-- Records a busy answer of job P_JOB for the console without waiting on the
-- job row: an event row always, and busy_retries / last_error when the job
-- row is not locked at this moment (SKIP LOCKED). Returns whether the
-- counter was incremented; a caller that got false passes the busy answer to
-- its next step (cleanup.job_step's P_BUSY), which adds it under its lock.
CREATE OR REPLACE FUNCTION cleanup.job_note_busy(p_job bigint, p_message text)
RETURNS boolean LANGUAGE plpgsql
AS $$
DECLARE
    n    int;
    v_by jsonb := cleanup.job_blockers(p_job);
    v_msg text := coalesce(p_message, 'busy');
BEGIN
    -- T3: every busy answer names its holder. A message the engine raised
    -- names it in its detail, which a caller may not pass on: the holders
    -- found now are added when the message names none.
    IF position('held by' IN v_msg) = 0 THEN
        v_msg := v_msg || '; held by ' || cleanup.holders_text(v_by);
    END IF;
    PERFORM cleanup.log_event(p_job, 'busy', v_msg);
    -- Who holds the job up now (cleanup.job_blockers), shown by status,
    -- jobs, job show and the console until a step goes through.
    UPDATE cleanup.jobs
       SET busy_retries = busy_retries + 1,
           last_error = left(v_msg, 2000), last_error_at = now(),
           blocked_since = coalesce(blocked_since, now()),
           blocked_by = v_by
     WHERE id = (SELECT id FROM cleanup.jobs WHERE id = p_job FOR UPDATE SKIP LOCKED);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n = 1;
END $$;

-- The recorded result of committed step P_STEP_NO of job P_JOB (S8).
-- Reads only; CU001 when that step has not been committed.
CREATE OR REPLACE FUNCTION cleanup.job_step_replay(p_job bigint, p_step_no int)
RETURNS cleanup.job_steps LANGUAGE plpgsql STABLE
AS $$
DECLARE
    s cleanup.job_steps;
    last int;
BEGIN
    SELECT * INTO s FROM cleanup.job_steps WHERE job_id = p_job AND step_no = p_step_no;
    IF FOUND THEN
        RETURN s;
    END IF;
    SELECT step_no INTO last FROM cleanup.jobs WHERE id = p_job;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'job % does not exist', p_job USING ERRCODE = 'CU001';
    END IF;
    RAISE EXCEPTION 'job % has no committed step %: its last committed step is %', p_job, p_step_no, last
        USING ERRCODE = 'CU001',
              HINT = CASE WHEN last = 0 THEN 'no step has run yet'
                          ELSE format('steps 1 to %s can be replayed', last) END;
END $$;

-- Drain work of one step, after the library locks are held (S2-S5), on
-- the deletion candidates of the batch (at most 128; seen rows were passed
-- over at discovery and never reach this function). The discovery (same
-- transaction, under the same locks) gave each candidate's id, xmin and
-- ctid. Unless P_PREVIEW, one statement locks and classifies: every
-- candidate is locked FOR UPDATE SKIP LOCKED by its ctid (a TID scan per
-- candidate: no index descents) and re-read:
--     locked, out of scope: moved; xmin changed: retained; with
--     dependents (item_retries, identity_review_previews): deleted with
--     them in this step when they fit P_BUDGET (below; retained instead
--     when another transaction holds one of its dependents: it is
--     skipped, never waited for), else claimed (its
--     claimed_by set to the job, D3/D4: the claims drain deletes its
--     dependents, then it, under the same budget, in later steps); else
--     deleted (by ctid: the tuple version this step locked and compared,
--     in a statement of its own under that lock);
--     not locked (rare: a writer holds it, or it changed or went since
--     discovery): looked up by id: gone: absent; out of scope: moved; else
--     retained (a concurrent writer holds it; a skipped row is never
--     treated as done, seed 000).
--   In scope: library_id = P_LIB, or (P_LIB NULL, remove-server) a library
--   of P_SERVER.
-- An item with dependents costs 1 + its dependents of the budget. What the
-- plain deletes leave of P_BUDGET goes to such items, first fit in the
-- batch's order (cleanup.fit_in_budget): their dependents and then they
-- are deleted in this step, under this step's FOR UPDATE of the item,
-- which no dependent's foreign-key check gets past (the reservation seed
-- 001 asks for is needed only by a drain that spans transactions); only
-- the items that do not fit are claimed. A claim costs no mutation but an
-- UPDATE of the item, a claim row and its delete, and the claims drain's
-- statements in a later step: with a retry or preview on half the items,
-- most claims ended this way (docs/benchmarks.md, "dependents").
-- N_RETRIES, N_PREVIEWS: the dependents deleted so; N_DELETED counts the
-- items with and without dependents.
-- Retained rows are added to cleanup.job_retained; with P_RETAINED_PASS the
-- visited rows that were resolved leave it. With P_PREVIEW candidates are
-- re-read at the snapshot without locks and nothing changes.
CREATE OR REPLACE FUNCTION cleanup.step_drain(
    p_job bigint, p_lib bigint, p_server bigint,
    v_ids bigint[], v_xmins xid[], v_ctids tid[],
    p_retained_pass boolean, p_preview boolean, p_budget int,
    OUT n_deleted int, OUT n_retained int, OUT n_moved int, OUT n_absent int, OUT n_claimed int,
    OUT n_retries int, OUT n_previews int)
LANGUAGE plpgsql
-- Every table here is reached by key (TID, primary key, the dependents'
-- item index): with statistics from when cleanup.job_retained was empty,
-- the retained pass's DELETE of resolved rows scanned all the job's
-- retained rows in every pass step (368 ms steps with 10,000).
SET enable_seqscan = off
AS $$
DECLARE
    v_del_t    tid[];          -- locked, unchanged, in scope, no dependents
    v_claim_t  tid[];          -- the same with dependents (then: those claimed)
    v_dep_ids  bigint[];       -- their ids,
    v_dep_cost int[];          -- 1 + their dependents (each table's read stops at 128)
    v_fit_ids  bigint[];       -- of them, deleted in this step with their dependents
    v_fit_t    tid[];
    v_fit_n    int[];          -- their dependents
    v_held     bigint[];       -- of them, those with a dependent another transaction holds
    v_ret_ids  bigint[];
    v_locked   bigint[];       -- the candidates the lock returned
    v_ret_more bigint[];
    v_n_mov    int;
    v_n_abs    int;
    v_nr       int[];          -- preview: each item's retries, previews
    v_np       int[];
    v_n_fit    int;
BEGIN
    n_retries := 0;
    n_previews := 0;
    IF NOT p_preview THEN
        -- Lock and classify, one statement ("where a step's time
        -- goes"): the verdict is computed once per locked row (OFFSET 0
        -- keeps the subquery from being flattened, which would copy the
        -- CASE, its subplans and init plans into every aggregate that
        -- reads it), with no materialized CTE, hash join or
        -- data-modifying WITH. The join of the candidates with their rows
        -- is a TID probe per candidate; FOR UPDATE OF i SKIP LOCKED
        -- skips what a writer holds, and a row updated since discovery is
        -- not returned (the lock follows the update chain to a version
        -- with another ctid, which the join's recheck refuses).
        -- Whether any dependent row lies in the batch's id range is one
        -- index probe per dependent table and step, an init plan run only
        -- when a locked row is unchanged and in scope; without one, no
        -- candidate has dependents and the per-row probes are skipped.
        -- Scalar subqueries, not EXISTS: an EXISTS can become a hashed
        -- subplan that reads the whole dependent table. A candidate's
        -- dependents are counted, each table's at most 128, in one
        -- probe per table: the count is both whether it has any and
        -- what it costs the budget (each level OFFSET 0, so that the
        -- probes run once per row, not once per expression that reads
        -- them).
        SELECT array_agg(v.t) FILTER (WHERE v.verdict = 'delete'),
               array_agg(v.t) FILTER (WHERE v.verdict = 'dependents'),
               array_agg(v.id) FILTER (WHERE v.verdict = 'dependents'),
               array_agg(1 + v.nd) FILTER (WHERE v.verdict = 'dependents'),
               array_agg(v.id) FILTER (WHERE v.verdict = 'retained'),
               count(*) FILTER (WHERE v.verdict = 'moved'),
               array_agg(v.id)
          INTO v_del_t, v_claim_t, v_dep_ids, v_dep_cost, v_ret_ids, n_moved, v_locked
          FROM (SELECT w.id, w.t, w.nd,
                       CASE WHEN w.pre IS NOT NULL THEN w.pre WHEN w.nd > 0 THEN 'dependents' ELSE 'delete' END
                           AS verdict
                  FROM (SELECT l.id, l.t, l.pre,
                               CASE
                                 WHEN l.pre IS NULL
                                      AND (SELECT coalesce((SELECT true FROM inventory.item_retries r
                                                             WHERE r.item_id BETWEEN b.lo AND b.hi LIMIT 1), false)
                                               OR coalesce((SELECT true FROM inventory.identity_review_previews r
                                                             WHERE r.item_id BETWEEN b.lo AND b.hi LIMIT 1), false)
                                             FROM (SELECT min(x) AS lo, max(x) AS hi FROM unnest(v_ids) AS x) b)
                                   THEN (SELECT count(*) FROM (SELECT 1 FROM inventory.item_retries r
                                                                WHERE r.item_id = l.id LIMIT 128) r)::int
                                        + (SELECT count(*) FROM (SELECT 1 FROM inventory.identity_review_previews r
                                                                  WHERE r.item_id = l.id LIMIT 128) r)::int
                                 ELSE 0
                               END AS nd
                          FROM (SELECT l.id, l.t,
                                       CASE
                                         WHEN NOT (CASE WHEN p_lib IS NOT NULL THEN l.lib = p_lib
                                                        ELSE EXISTS (SELECT 1 FROM inventory.libraries lb
                                                                      WHERE lb.id = l.lib AND lb.server_id = p_server) END)
                                           THEN 'moved'
                                         WHEN l.dx IS NULL OR NOT (l.x = l.dx) THEN 'retained'
                                       END AS pre
                                  FROM (SELECT d.id, d.x AS dx, i.xmin AS x, i.ctid AS t, i.library_id AS lib
                                          FROM unnest(v_ids, v_xmins, v_ctids) AS d(id, x, t)
                                          JOIN inventory.items i ON i.ctid = d.t
                                           FOR UPDATE OF i SKIP LOCKED) l
                                OFFSET 0) l
                        OFFSET 0) w
                OFFSET 0) v;
        n_moved := coalesce(n_moved, 0);
        n_absent := 0;
        IF coalesce(cardinality(v_locked), 0) < cardinality(v_ids) THEN
            -- Candidates the lock did not return, looked up by id: gone:
            -- absent; out of scope: moved; else retained (held by a
            -- writer, or changed since discovery: S5).
            SELECT count(*) FILTER (WHERE q.verdict = 'absent'),
                   count(*) FILTER (WHERE q.verdict = 'moved'),
                   array_agg(q.id) FILTER (WHERE q.verdict = 'retained')
              INTO v_n_abs, v_n_mov, v_ret_more
              FROM (SELECT d.id,
                           coalesce((
                             SELECT CASE WHEN (CASE WHEN p_lib IS NOT NULL THEN x.library_id = p_lib
                                                    ELSE EXISTS (SELECT 1 FROM inventory.libraries lb
                                                                  WHERE lb.id = x.library_id
                                                                    AND lb.server_id = p_server) END)
                                         THEN 'retained' ELSE 'moved' END
                               FROM inventory.items x WHERE x.id = d.id), 'absent') AS verdict
                      FROM unnest(v_ids) AS d(id)
                     WHERE d.id <> ALL (coalesce(v_locked, '{}'::bigint[]))
                    OFFSET 0) q;
            n_absent := v_n_abs;
            n_moved := n_moved + v_n_mov;
            v_ret_ids := v_ret_ids || v_ret_more;
        END IF;
        n_retained := coalesce(cardinality(v_ret_ids), 0);
        IF p_retained_pass AND v_locked IS NULL AND n_retained = cardinality(v_ids) THEN
            -- T4: every row this pass step revisits is held by another
            -- transaction. Retaining them again would start a new pass at
            -- every step; the step is busy instead (nothing changes) and
            -- its runner backs off, naming who holds the first one.
            PERFORM cleanup.raise_item_held(p_job, v_ids);
        END IF;
        IF v_claim_t IS NOT NULL THEN
            -- The items with dependents that fit what the plain deletes
            -- leave of the budget: their dependents go now
            -- (cleanup.delete_item_dependents), and they with the plain
            -- deletes below; the rest are claimed.
            SELECT array_agg(u.id) FILTER (WHERE u.fit), array_agg(u.t) FILTER (WHERE u.fit),
                   array_agg(u.c - 1) FILTER (WHERE u.fit), array_agg(u.t) FILTER (WHERE NOT u.fit)
              INTO v_fit_ids, v_fit_t, v_fit_n, v_claim_t
              FROM unnest(v_dep_ids, v_claim_t, v_dep_cost,
                          cleanup.fit_in_budget(p_budget - coalesce(cardinality(v_del_t), 0), v_dep_cost))
                   AS u(id, t, c, fit);
            IF v_fit_ids IS NOT NULL THEN
                SELECT x.n_retries, x.n_previews, x.held INTO n_retries, n_previews, v_held
                  FROM cleanup.delete_item_dependents(v_fit_ids, v_fit_n, false) x;
                IF v_held IS NOT NULL THEN
                    -- A dependent another transaction holds (a writer's
                    -- UPDATE or FOR UPDATE of it, which needs no lock of
                    -- the item): the item is retained like a held item
                    -- (S5), never waited for.
                    v_fit_t := ARRAY(SELECT u.t FROM unnest(v_fit_ids, v_fit_t) AS u(id, t)
                                      WHERE u.id <> ALL (v_held));
                    v_ret_ids := v_ret_ids || v_held;
                    n_retained := n_retained + cardinality(v_held);
                    IF p_retained_pass AND n_retained = cardinality(v_ids)
                       AND coalesce(cardinality(v_locked), 0) = cardinality(v_held) THEN
                        -- T4 as above: every row of this pass step is held,
                        -- its item or a dependent of it.
                        PERFORM cleanup.raise_item_held(p_job, v_ids);
                    END IF;
                END IF;
                v_del_t := v_del_t || v_fit_t;
            END IF;
        END IF;
        -- The deletes, by the ctids of the versions locked and compared
        -- above (nobody else can have changed them since).
        n_deleted := 0;
        IF v_del_t IS NOT NULL THEN
            -- With this function's enable_seqscan = off in force, the
            -- foreign-key checks this DELETE fires (PostgreSQL plans them
            -- once per session, at their first use, with the settings in
            -- force then) were planned as index scans even on an empty
            -- dependent table, where the one DELETE's checks read a table
            -- of no pages: 28,000 instructions a check instead of 20,000,
            -- 11% of a whole prune (docs/benchmarks.md).
            -- The DELETE itself is a TID scan either way. The function's
            -- SET restores the setting when it returns.
            PERFORM set_config('enable_seqscan', 'on', true);
            DELETE FROM inventory.items i WHERE i.ctid = ANY (v_del_t);
            GET DIAGNOSTICS n_deleted = ROW_COUNT;
            PERFORM set_config('enable_seqscan', 'off', true);
        END IF;
        -- Bookkeeping of cleanup.job_retained, in statements of their own
        -- run only when they have rows to write (each
        -- data-modifying WITH is set up in every step, rows or not).
        -- Retained rows (S5) are revisited by a later pass.
        IF v_ret_ids IS NOT NULL AND NOT p_retained_pass THEN
            INSERT INTO cleanup.job_retained (job_id, item_id)
            SELECT p_job, x FROM unnest(v_ret_ids) AS x
            ON CONFLICT DO NOTHING;
        END IF;
        IF p_retained_pass AND n_retained < cardinality(v_ids) THEN
            -- The pass's resolved rows leave it, each found by its full key
            -- (a LATERAL probe with LIMIT 1 cannot become a walk of the
            -- job's retained rows), then deleted by its TID.
            DELETE FROM cleanup.job_retained r
             WHERE r.ctid = ANY (ARRAY(SELECT x.t FROM unnest(v_ids) AS v(id)
                                        CROSS JOIN LATERAL (SELECT rr.ctid AS t FROM cleanup.job_retained rr
                                                             WHERE rr.job_id = p_job AND rr.item_id = v.id
                                                             LIMIT 1) x
                                       WHERE v.id <> ALL (coalesce(v_ret_ids, '{}'::bigint[]))));
        END IF;
        -- The claims (D3, D4), under the row locks taken above (nobody else
        -- can have moved these tuples since): a statement of their own, run
        -- only when there are any, since even an UPDATE of no row fires the
        -- statement triggers of inventory.items (admission, count cache).
        -- Each claim is recorded (T1): the claims drain acts on this
        -- record, with the version the claim wrote (this transaction's
        -- id is the new row version's xmin).
        n_claimed := 0;
        IF v_claim_t IS NOT NULL THEN
            WITH c AS (UPDATE inventory.items i SET claimed_by = p_job WHERE i.ctid = ANY (v_claim_t)
                       RETURNING i.id, i.library_id)
            INSERT INTO cleanup.job_claims (job_id, item_id, library_id, claimed_xid)
            SELECT p_job, c.id, c.library_id, pg_current_xact_id()::xid FROM c;
            GET DIAGNOSTICS n_claimed = ROW_COUNT;
        END IF;
        IF n_deleted <> coalesce(cardinality(v_del_t), 0) OR n_claimed <> coalesce(cardinality(v_claim_t), 0)
           OR n_deleted + n_claimed + n_retained + n_moved + n_absent <> cardinality(v_ids) THEN
            -- Cannot happen: this step holds the locks of the rows it
            -- deletes, and every candidate gets one verdict.
            RAISE EXCEPTION 'step of job %: deleted % rows, expected %; claimed %, expected %; % verdicts for % candidates',
                p_job, n_deleted, coalesce(cardinality(v_del_t), 0), n_claimed, coalesce(cardinality(v_claim_t), 0),
                n_deleted + n_claimed + n_retained + n_moved + n_absent, cardinality(v_ids);
        END IF;
    ELSE
        -- The same verdicts at the snapshot, and the same split of the
        -- items with dependents (each table's count stops at 128).
        WITH v AS MATERIALIZED (
            SELECT d.id,
                   CASE
                     WHEN l.id IS NULL THEN 'absent'
                     WHEN NOT (CASE WHEN p_lib IS NOT NULL THEN l.library_id = p_lib
                                    ELSE EXISTS (SELECT 1 FROM inventory.libraries lb
                                                  WHERE lb.id = l.library_id AND lb.server_id = p_server) END)
                       THEN 'moved'
                     WHEN d.x IS NULL OR NOT (l.xmin = d.x) THEN 'retained'
                     WHEN (SELECT true FROM inventory.item_retries r WHERE r.item_id = l.id LIMIT 1)
                       OR (SELECT true FROM inventory.identity_review_previews r WHERE r.item_id = l.id LIMIT 1)
                       THEN 'dependents'
                     ELSE 'delete'
                   END AS verdict
              FROM unnest(v_ids, v_xmins) AS d(id, x)
              LEFT JOIN inventory.items l ON l.id = d.id)
        SELECT count(*) FILTER (WHERE v.verdict = 'delete'),
               count(*) FILTER (WHERE v.verdict = 'retained'),
               count(*) FILTER (WHERE v.verdict = 'moved'),
               count(*) FILTER (WHERE v.verdict = 'absent'),
               array_agg((SELECT count(*) FROM (SELECT 1 FROM inventory.item_retries r
                                                 WHERE r.item_id = v.id LIMIT 128) r)::int)
                   FILTER (WHERE v.verdict = 'dependents'),
               array_agg((SELECT count(*) FROM (SELECT 1 FROM inventory.identity_review_previews r
                                                 WHERE r.item_id = v.id LIMIT 128) r)::int)
                   FILTER (WHERE v.verdict = 'dependents')
          INTO n_deleted, n_retained, n_moved, n_absent, v_nr, v_np
          FROM v;
        n_claimed := 0;
        IF v_nr IS NOT NULL THEN
            SELECT count(*) FILTER (WHERE u.fit), coalesce(sum(u.nr) FILTER (WHERE u.fit), 0),
                   coalesce(sum(u.np) FILTER (WHERE u.fit), 0), count(*) FILTER (WHERE NOT u.fit)
              INTO v_n_fit, n_retries, n_previews, n_claimed
              FROM unnest(v_nr, v_np,
                          cleanup.fit_in_budget(p_budget - n_deleted,
                                                ARRAY(SELECT 1 + a + b FROM unnest(v_nr, v_np) AS c(a, b))))
                   AS u(nr, np, fit);
            n_deleted := n_deleted + v_n_fit;
        END IF;
    END IF;
END $$;

-- One page of the final absence check (S6) of prune job P_JOB: the items
-- of library P_LIB whose external ID sorts after P_AFTER ('' from the
-- start: external IDs are never empty) up to the page's end key, merged in
-- external ID order with the job's manifest over the same key range (both
-- are primary-key or unique-index ranges, so neither side is sorted and
-- the manifest is not probed once per row). The page ends at the 10,000th
-- key after P_AFTER of either side, whichever comes first (a
-- manifest with many IDs that match no item cannot make a page read more
-- than 10,000 rows of it), or at the end when neither side has that many.
-- The items side is read once: at most 10,000 items up to the manifest's
-- 10,000th key (the merge reads the manifest only as far as the last item
-- read, one key past it at most); the page ends at the last item read
-- when there were 10,000, else at that manifest key (finding the
-- items' 10,000th key first read every item of a page twice, each with
-- its heap fetch, 40% of a page).
-- Returns how many items were read, the page's end key (LAST_KEY; the last
-- key read when the page reached the end), whether keys remain after it
-- (MORE; false: the check is complete), and the ids of eligible items (not
-- in the manifest, id at or below P_HIGH_WATER), NULL when none. Only a
-- merge join is allowed: with generic plans the planner would otherwise
-- choose one probe per row, three times the cost (docs/steps.md).
DROP FUNCTION IF EXISTS cleanup.final_check_page(bigint, bigint, bigint, text);
CREATE OR REPLACE FUNCTION cleanup.final_check_page(p_job bigint, p_lib bigint, p_high_water bigint, p_after text,
                                                    OUT checked int, OUT last_key text, OUT eligible bigint[],
                                                    OUT more boolean)
LANGUAGE plpgsql STABLE
SET enable_nestloop = off
SET enable_hashjoin = off
SET enable_sort = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_mend text;               -- the manifest's 10,000th key after P_AFTER
    v_max  text;               -- the last item key read
BEGIN
    -- The manifest's bound: an index-only walk of at most 10,000 keys.
    v_mend := (SELECT x.external_id FROM cleanup.manifest x
                WHERE x.job_id = p_job AND x.external_id > p_after
                ORDER BY x.job_id, x.external_id OFFSET 9999 LIMIT 1);
    -- Two statements, not one with "v_mend IS NULL OR ...": an OR is no
    -- index bound, and the manifest side would be read to the job's end.
    IF v_mend IS NOT NULL THEN
        SELECT count(*), max(p.external_id),
               array_agg(p.id ORDER BY p.id) FILTER (WHERE m.external_id IS NULL AND p.id <= p_high_water)
          INTO checked, v_max, eligible
          FROM (SELECT i.id, i.external_id FROM inventory.items i
                 WHERE i.library_id = p_lib AND i.external_id > p_after AND i.external_id <= v_mend
                 ORDER BY i.library_id, i.external_id LIMIT 10000) p
          LEFT JOIN (SELECT x.external_id FROM cleanup.manifest x
                      WHERE x.job_id = p_job AND x.external_id > p_after AND x.external_id <= v_mend
                      ORDER BY x.job_id, x.external_id) m ON m.external_id = p.external_id;
    ELSE
        SELECT count(*), max(p.external_id),
               array_agg(p.id ORDER BY p.id) FILTER (WHERE m.external_id IS NULL AND p.id <= p_high_water)
          INTO checked, v_max, eligible
          FROM (SELECT i.id, i.external_id FROM inventory.items i
                 WHERE i.library_id = p_lib AND i.external_id > p_after
                 ORDER BY i.library_id, i.external_id LIMIT 10000) p
          LEFT JOIN (SELECT x.external_id FROM cleanup.manifest x
                      WHERE x.job_id = p_job AND x.external_id > p_after
                      ORDER BY x.job_id, x.external_id) m ON m.external_id = p.external_id;
    END IF;
    IF checked = 10000 THEN
        -- 10,000 items: the page ends at the last one (keys may follow).
        last_key := v_max;
        more := true;
    ELSE
        -- Every item up to the manifest's bound (or to the end) was read.
        more := v_mend IS NOT NULL;
        last_key := CASE WHEN more THEN v_mend ELSE v_max END;
    END IF;
END $$;

-- One batch of the first pass of prune P_JOB in external-ID order (issue
-- 10, item 3; migration 012): the items of library P_LIB whose external ID
-- sorts after P_AFTER and at or below P_BOUND, in index
-- (library_id, external_id) order, merged with the job's manifest over the
-- same key range (index manifest_pkey's order): a merge join, so each item
-- costs a step along two ordered index ranges instead of one manifest
-- probe by key (4-5 us each; the merge is about a third of it). P_BOUND
-- (cleanup.step_mode_drain) is the manifest's 1,024th key after P_AFTER,
-- which bounds the manifest keys the merge reads, or, when fewer follow,
-- the library's last external ID.
-- An item is seen when its external ID is in the manifest; a candidate
-- when it is not and its id is at or below P_HIGH_WATER (rows above it
-- arrived after the fence and are passed over, as pass 1 in id order never
-- reaches them). At most P_LIMIT items are read, and the batch stops after
-- the P_BUDGET-th candidate (a WindowAgg run condition: the row holding
-- the next candidate is read, not taken, as in id order).
-- Returns the candidates' ids, xmins and ctids (parallel arrays, NULL when
-- none), how many items were taken (N_READ), how many of them were seen
-- (N_KEPT) or above the high-water id (N_ABOVE), and the last key taken.
-- Only a merge join is allowed, and no sort: every input is an index
-- range in the order the join and the window need.
CREATE OR REPLACE FUNCTION cleanup.drain_key_batch(p_job bigint, p_lib bigint, p_high_water bigint,
                                                   p_after text, p_bound text, p_budget int, p_limit int,
                                                   OUT ids bigint[], OUT xmins xid[], OUT ctids tid[],
                                                   OUT n_read int, OUT n_kept int, OUT n_above int,
                                                   OUT last_key text)
LANGUAGE plpgsql STABLE
SET enable_nestloop = off
SET enable_hashjoin = off
SET enable_sort = off
SET enable_incremental_sort = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    -- PL/pgSQL, not SQL: its plan is cached for the session, where an
    -- SQL function with SET clauses would be planned at every call.
    SELECT array_agg(c.id) FILTER (WHERE c.cand), array_agg(c.xmin) FILTER (WHERE c.cand),
           array_agg(c.ctid) FILTER (WHERE c.cand), count(*)::int,
           (count(*) FILTER (WHERE c.seen AND c.id <= p_high_water))::int,
           (count(*) FILTER (WHERE c.id > p_high_water))::int, max(c.k)
      INTO ids, xmins, ctids, n_read, n_kept, n_above, last_key
      FROM (SELECT b.*, count(*) FILTER (WHERE b.cand)
                            OVER (ORDER BY b.k ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
              FROM (SELECT i.k, i.id, i.xmin, i.ctid, m.external_id IS NOT NULL AS seen,
                           m.external_id IS NULL AND i.id <= p_high_water AS cand
                      FROM (SELECT i.library_id, i.external_id AS k, i.id, i.xmin, i.ctid FROM inventory.items i
                             WHERE i.library_id = p_lib AND i.external_id > p_after AND i.external_id <= p_bound
                             ORDER BY i.library_id, i.external_id LIMIT p_limit) i
                      LEFT JOIN (SELECT m.external_id FROM cleanup.manifest m
                                  WHERE m.job_id = p_job AND m.external_id > p_after AND m.external_id <= p_bound
                                  ORDER BY m.job_id, m.external_id) m ON m.external_id = i.k) b) c
     WHERE c.before < p_budget;
END $$;

-- Where a new pass over cleanup.job_retained starts: just below the
-- smallest retained id (of job P_JOB, and of P_MORE, rows about to be
-- retained), and at 0 when every id is positive. Pass 1 walks from id 0,
-- so a row given a zero or negative id explicitly is found only by the
-- final check or the finalize check; its pass must reach it.
CREATE OR REPLACE FUNCTION cleanup.pass_start(p_job bigint, p_more bigint[])
RETURNS bigint LANGUAGE sql STABLE
-- A string body, not BEGIN ATOMIC: an SQL-standard body that reads a
-- table would pin its columns and refuse later migrations (ALTER TABLE
-- ... DROP COLUMN). search_path is pinned by 098.
AS $$
    SELECT least(0, coalesce(least((SELECT min(item_id) FROM cleanup.job_retained WHERE job_id = p_job),
                                   (SELECT min(x) FROM unnest(p_more) AS x)), 1) - 1);
$$;

-- Step modes. cleanup.step_exec takes the step's locks, checks the job and
-- the contract, then hands the job row J (its cursor and phase, changed
-- here) and the step record S (its counts, filled here) to the function of
-- the job's mode; it records both afterwards (S7). Each runs inside
-- step_exec's transaction and settings (plan_cache_mode), and with
-- P_PREVIEW computes without locks or mutations.

-- Mode single-transaction (kept for comparison): the old behaviour, one
-- unbounded transaction holding the library row lock throughout.
CREATE OR REPLACE FUNCTION cleanup.step_mode_single(p_job bigint, p_preview boolean,
                                          INOUT j cleanup.jobs, INOUT s cleanup.job_steps)
LANGUAGE plpgsql
AS $$
DECLARE
    t_parent  timestamptz;
    v_n       int;
    v_d       int;
    r         record;
BEGIN
    ---------------------------------------------------------------
    -- Comparison mode (kept for comparison): the old behaviour, one
    -- unbounded transaction holding the library row lock throughout.
    ---------------------------------------------------------------
    s.action := 'single-transaction';
    s.library_id := j.library_id;
    IF p_preview THEN
        SELECT count(*) INTO v_n FROM inventory.items WHERE library_id = j.library_id;
    ELSE
        PERFORM cleanup.lock_libraries(ARRAY[j.library_id]);
        PERFORM cleanup.lock_parent_row('library', j.library_id);
        t_parent := clock_timestamp();
        UPDATE cleanup.jobs SET phase = 'finalizing' WHERE id = p_job;   -- the parent guard's condition
        PERFORM cleanup.lock_parent_row('library admission', j.library_id);
        PERFORM cleanup.lock_library_stats(ARRAY[j.library_id]);
        -- Dependents first (the lab's foreign keys restrict): the old
        -- behaviour had no budget, so neither has this.
        DELETE FROM inventory.item_retries x USING inventory.items i
         WHERE x.item_id = i.id AND i.library_id = j.library_id;
        GET DIAGNOSTICS v_d = ROW_COUNT;
        s.retries_deleted := v_d;
        DELETE FROM inventory.identity_review_previews x USING inventory.items i
         WHERE x.item_id = i.id AND i.library_id = j.library_id;
        GET DIAGNOSTICS v_d = ROW_COUNT;
        s.previews_deleted := v_d;
        DELETE FROM inventory.items WHERE library_id = j.library_id;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        DELETE FROM inventory.library_collections WHERE library_id = j.library_id;
        GET DIAGNOSTICS v_d = ROW_COUNT;
        s.collections_deleted := v_d;
        DELETE FROM inventory.library_sync_status WHERE library_id = j.library_id;
        GET DIAGNOSTICS v_d = ROW_COUNT;
        s.sync_status_deleted := v_d;
        r := cleanup.library_dependents_drain(j.library_id, 2147483647, false);
        IF r.n_left > 0 THEN
            -- A history record another transaction holds was skipped: the
            -- parent delete cannot go (its foreign key restricts). Busy,
            -- naming the holder.
            PERFORM cleanup.raise_library_dependent_held(j.library_id);
        END IF;
        s.history_detached := r.n_history;
        DELETE FROM cleanup.library_admission WHERE library_id = j.library_id;
        DELETE FROM cleanup.library_stats WHERE library_id = j.library_id;
        DELETE FROM inventory.libraries WHERE id = j.library_id;
        PERFORM cleanup.audit_engine(p_job, 'delete-library',
            format('library %s (%s) deleted, %s items with it, by job %s in one transaction',
                   j.library_id, j.target_name, v_n, p_job));
        DELETE FROM cleanup.engine_locks WHERE key = cleanup.library_key(j.library_id);
        s.parent_lock_ms := extract(epoch FROM clock_timestamp() - t_parent) * 1000;
    END IF;
    s.examined := v_n; s.visited := v_n; s.deleted := v_n; s.libraries_deleted := 1;
    s.mutations := v_n + 1 + s.retries_deleted + s.previews_deleted + s.collections_deleted
                   + s.sync_status_deleted + s.history_detached;
    j.phase := 'completed';
END $$;

-- Mode drain and pass (S1-S5): pass 1 walks the cursor to the high-water
-- id (for remove-server, library by library in ascending id); every later
-- pass visits the rows in cleanup.job_retained in id order. Claims in
-- flight come first (D2: one budget of 128 domain mutations for the claims'
-- dependents and items, then new candidates); while claims remain after
-- that, the step discovers nothing new. Then the candidates get their
-- verdicts (cleanup.step_drain), new claims are drained with what is left
-- of the budget, and the range moves on (next library, next pass, or
-- finalizing) only when no claim is in flight.
-- Each part is a function of its own, one job each:
--   cleanup.raise_library_busy     the busy answer of a held library lock;
--   cleanup.step_claims_first      claims in flight (D3, D4);
--   cleanup.step_discover_keyed    pass 1 of a prune in external-ID order;
--   cleanup.step_discover_range    pass 1 in id order;
--   cleanup.step_discover_retained later passes (cleanup.job_retained);
--   cleanup.step_judge             the candidates' verdicts, new claims;
--   cleanup.step_range_next        next library, next pass, or finalizing.
-- They run inside this function's settings (enable_sort = off) and
-- step_exec's (plan_cache_mode, jit); each discovery returns the same
-- columns (the candidates and what the range did).

-- The busy answer of a drain step whose library lock (cleanup lock of
-- library P_LIB, L1) another cleanup transaction holds: 55P03 naming the
-- holder. Called only on that rare path: the lock itself is an IF
-- expression in the step (cleanup.try_engine_lock, no executor start).
DROP FUNCTION IF EXISTS cleanup.step_lock_library(bigint);
CREATE OR REPLACE FUNCTION cleanup.raise_library_busy(p_lib bigint)
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'library lock for library % is held by another cleanup transaction', p_lib
        USING ERRCODE = '55P03',
              DETAIL = 'held by ' || coalesce((cleanup.engine_lock_holders(cleanup.library_key(p_lib),
                                        pg_catalog.format('the cleanup lock of library %s', p_lib)
                            )), 'a transaction that has ended since'),
              HINT = 'busy: retry later';
END $$;

-- Claims in flight of P_JOB (D3, D4): their dependents, then the items,
-- within one budget of 128 (D2), under the locks of their libraries.
-- Fills the step row S; BUDGET is what is left of the 128, INFLIGHT the
-- claims still in flight, DONE whether the step ends here (claims remain,
-- or no budget is left: it discovers nothing new). P_CURSOR: the job's
-- cursor, the step's cursor_to when it ends here. Called by every drain
-- step: with no claim in flight (the read of their libraries finds none)
-- S is left as it is, BUDGET is 128 and DONE false.
CREATE OR REPLACE FUNCTION cleanup.step_claims_first(p_job bigint, p_preview boolean, p_cursor bigint,
                                                     INOUT s cleanup.job_steps,
                                                     OUT budget int, OUT inflight int, OUT done boolean)
LANGUAGE plpgsql
AS $$
DECLARE
    v_libs bigint[];
    cd     record;             -- the claims drain's result
BEGIN
    -- The libraries of the claims this step drains (the first 128 by
    -- item id, as cleanup.claims_drain takes them), from the job's
    -- record of its claims (T1: a mark in inventory.items.claimed_by
    -- alone never brings an item here).
    v_libs := ARRAY(SELECT DISTINCT c.library_id
                      FROM (SELECT c.library_id FROM cleanup.job_claims c WHERE c.job_id = p_job
                             ORDER BY c.job_id, c.item_id LIMIT 128) c
                     ORDER BY 1);
    IF cardinality(v_libs) = 0 THEN
        budget := 128;
        inflight := 0;
        done := false;
        RETURN;
    END IF;
    IF NOT p_preview THEN
        PERFORM cleanup.lock_libraries(v_libs);
        PERFORM cleanup.lock_library_stripe(v_libs);
    END IF;
    cd := cleanup.claims_drain(p_job, 128, p_preview);
    IF NOT p_preview AND cd.n_held > 0
       AND cd.n_items + cd.n_retries + cd.n_previews + cd.n_absent + cd.n_moved + cd.n_retained = 0 THEN
        -- T4: nothing to do but claims whose items another transaction
        -- holds. Busy, not an empty step: nothing is committed, the
        -- runner backs off, the holder is named.
        PERFORM cleanup.raise_item_held(p_job,
            ARRAY(SELECT c.item_id FROM cleanup.job_claims c WHERE c.job_id = p_job
                   ORDER BY c.job_id, c.item_id LIMIT 128));
    END IF;
    IF NOT p_preview AND cleanup.failpoints_on() THEN
        -- Claims drained (dependents, maybe items deleted), nothing
        -- recorded yet: the same point as after a drain's deletes.
        PERFORM cleanup.failpoint('step_after_delete');
    END IF;
    s.action := 'drain-claims';
    s.library_id := CASE WHEN cardinality(v_libs) = 1 THEN v_libs[1] END;
    s.deleted := cd.n_items;
    -- Every claim that ended: deleted, or released as absent, moved or
    -- retained (its item no longer what the claim wrote).
    s.released := cd.n_items + cd.n_absent + cd.n_moved + cd.n_retained;
    s.absent := cd.n_absent;
    s.moved := cd.n_moved;
    s.retained := cd.n_retained;
    s.retries_deleted := cd.n_retries;
    s.previews_deleted := cd.n_previews;
    budget := 128 - cd.n_items - cd.n_retries - cd.n_previews;
    inflight := cd.n_left;
    done := inflight > 0 OR budget = 0;
    IF done THEN
        s.claims_in_flight := inflight;
        s.mutations := s.deleted + s.retries_deleted + s.previews_deleted;
        s.cursor_to := p_cursor;
    END IF;
END $$;

-- Discovery of a prune's first pass in external-ID order (migration
-- 012): the items after the key cursor merged with the
-- manifest (cleanup.drain_key_batch), up to the manifest's 1,024th key
-- after the cursor. That bound is computed once (an index-only walk of
-- 1,024 keys) and kept in the job row until the cursor reaches it: the
-- sealed manifest does not change, so it holds for every step in between.
-- When fewer keys follow, the bound is the library's last external ID
-- (key_bound_end) and stays until the pass ends. The step record's
-- check_from/check_to give the batch's key range; cursor_id stays 0 in
-- this pass. At most P_BUDGET candidates (IDS, XMINS, CTIDS: parallel
-- arrays), EXAMINED and KEPT rows of the range; MORE: the range may go
-- on after this batch.
CREATE OR REPLACE FUNCTION cleanup.step_discover_keyed(p_job bigint, p_preview boolean, p_budget int,
                                                       j cleanup.jobs,
                                                       OUT action text, OUT library_id bigint,
                                                       OUT check_from text, OUT check_to text,
                                                       OUT key_cursor text, OUT key_bound text, OUT key_bound_end boolean,
                                                       OUT ids bigint[], OUT xmins xid[], OUT ctids tid[],
                                                       OUT kept_ids bigint[], OUT libs bigint[],
                                                       OUT examined int, OUT kept int, OUT max_id bigint,
                                                       OUT more boolean)
LANGUAGE plpgsql
AS $$
DECLARE
    v_read    int := 0;        -- items the batches took
    v_above   int := 0;        -- of them, above the high-water id
    v_key     text;            -- the last key a batch took
    b         record;          -- one batch
BEGIN
    action := 'drain';
    library_id := j.cursor_library_id;
    IF NOT p_preview AND NOT cleanup.try_engine_lock(cleanup.library_key(j.cursor_library_id)) THEN
        PERFORM cleanup.raise_library_busy(j.cursor_library_id);
    END IF;
    check_from := j.key_cursor;
    key_cursor := j.key_cursor;
    key_bound := j.key_bound;
    key_bound_end := j.key_bound_end;
    kept := 0;
    kept_ids := NULL;          -- seen rows are passed over, not listed
    libs := ARRAY[j.cursor_library_id];
    max_id := NULL;            -- cursor_id stays 0 in this pass
    -- At most two batches: a batch that took every item up to the bound
    -- with budget left goes on past it with the manifest's next 1,024
    -- keys, in the same step (once: every batch and every bound walk
    -- reads at most 1,024 rows, and a step at most 1,024 items in all).
    FOR v_batch IN 1 .. 2 LOOP
        IF key_bound IS NULL THEN
            key_bound := (SELECT x.external_id FROM cleanup.manifest x
                             WHERE x.job_id = p_job AND x.external_id > key_cursor
                             ORDER BY x.job_id, x.external_id OFFSET 1023 LIMIT 1);
            key_bound_end := key_bound IS NULL;
            IF key_bound_end THEN
                -- Fewer than 1,024 manifest keys follow: the rest of the
                -- library is the last range. Its last external ID holds
                -- as the bound: admission is closed, ids and external IDs
                -- are immutable, and a row that arrives around the guards
                -- has an id above the high-water id, which the pass
                -- passes over anyway ('' when the library is empty: an
                -- empty range).
                key_bound := coalesce((SELECT max(i.external_id) FROM inventory.items i
                                          WHERE i.library_id = j.cursor_library_id), '');
            END IF;
        END IF;
        SELECT x.ids, x.xmins, x.ctids, x.n_read, x.n_kept, x.n_above, x.last_key INTO b
          FROM cleanup.drain_key_batch(p_job, j.cursor_library_id, j.high_water_id, key_cursor,
                                       key_bound, p_budget - coalesce(cardinality(ids), 0),
                                       1024 - v_read) x;
        ids := ids || b.ids;
        xmins := xmins || b.xmins;
        ctids := ctids || b.ctids;
        v_read := v_read + b.n_read;
        kept := kept + b.n_kept;
        v_above := v_above + b.n_above;
        v_key := b.last_key;
        IF coalesce(cardinality(ids), 0) = p_budget OR v_read = 1024 THEN
            -- More may follow under the bound (as in id order, a range
            -- ending exactly here costs one empty step).
            more := true;
            key_cursor := v_key;
            IF key_cursor >= key_bound AND NOT key_bound_end THEN
                key_bound := NULL;
            END IF;
            EXIT;
        ELSIF key_bound_end THEN
            -- The library's last items: the pass is over.
            more := false;
            key_cursor := coalesce(v_key, key_cursor);
            EXIT;
        END IF;
        -- Every item up to the bound was taken: go on from the bound, with
        -- the manifest's next 1,024 keys.
        more := true;
        key_cursor := key_bound;
        key_bound := NULL;
    END LOOP;
    examined := v_read - v_above;
    check_to := key_cursor;
END $$;

-- Discovery of pass 1 in id order: the range of the cursor's library from
-- the cursor, at most 1,024 rows examined (the literal LIMIT), stopping
-- after the last deletion candidate P_BUDGET allows (S1, seed 000: the
-- budget bounds visited candidates, not rows examined). A row is seen when
-- its external ID is in the manifest (prune: one primary-key probe per
-- row, a LATERAL subquery with LIMIT 1, which the planner can only run as
-- a probe by key: never a hashed subplan over the whole manifest, whatever
-- the statistics say; removal: never probed). "before" counts
-- the candidates ahead of a row; it only grows, so PostgreSQL stops the
-- scan at the first row with P_BUDGET candidates before it (a WindowAgg
-- run condition): that row is read and probed but not taken, and the
-- cursor ends on the last row taken (MAX_ID). The row comparisons make
-- index (library_id, id) the only index that yields this order (a generic
-- plan would otherwise walk items_pkey across other libraries' rows),
-- starting exactly at the cursor. The candidate arrays are parallel; their
-- order does not matter. MORE: a batch that took all the candidates the
-- budget allows or examined 1024 rows may have more behind it; a shorter
-- one ends the range (a range ending exactly at such a batch costs one
-- empty step).
CREATE OR REPLACE FUNCTION cleanup.step_discover_range(p_job bigint, p_preview boolean, p_budget int,
                                                       j cleanup.jobs,
                                                       OUT action text, OUT library_id bigint,
                                                       OUT check_from text, OUT check_to text,
                                                       OUT key_cursor text, OUT key_bound text, OUT key_bound_end boolean,
                                                       OUT ids bigint[], OUT xmins xid[], OUT ctids tid[],
                                                       OUT kept_ids bigint[], OUT libs bigint[],
                                                       OUT examined int, OUT kept int, OUT max_id bigint,
                                                       OUT more boolean)
LANGUAGE plpgsql
AS $$
BEGIN
    action := 'drain';
    library_id := j.cursor_library_id;
    check_from := NULL;        -- key ranges: the keyed pass only
    check_to := NULL;
    key_cursor := j.key_cursor;
    key_bound := j.key_bound;
    key_bound_end := j.key_bound_end;
    examined := 0;
    kept := 0;
    kept_ids := NULL;          -- seen rows are passed over, not listed
    libs := ARRAY[j.cursor_library_id];
    IF j.cursor_library_id IS NOT NULL THEN
        IF NOT p_preview AND NOT cleanup.try_engine_lock(cleanup.library_key(j.cursor_library_id)) THEN
            PERFORM cleanup.raise_library_busy(j.cursor_library_id);
        END IF;
        SELECT array_agg(c.id) FILTER (WHERE NOT c.seen),
               array_agg(c.xmin) FILTER (WHERE NOT c.seen),
               array_agg(c.ctid) FILTER (WHERE NOT c.seen),
               count(*), count(*) FILTER (WHERE c.seen), max(c.id)
          INTO ids, xmins, ctids, examined, kept, max_id
          FROM (SELECT b.id, b.xmin, b.ctid, b.seen,
                       count(*) FILTER (WHERE NOT b.seen)
                           OVER (ORDER BY b.library_id, b.id
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
                  FROM (SELECT i.library_id, i.id, i.xmin, i.ctid, m.hit IS NOT NULL AS seen
                          FROM (SELECT i.library_id, i.id, i.xmin, i.ctid, i.external_id
                                  FROM inventory.items i
                                 WHERE (i.library_id, i.id) > (j.cursor_library_id, j.cursor_id)
                                   AND (i.library_id, i.id) <= (j.cursor_library_id, j.high_water_id)
                                 ORDER BY i.library_id, i.id LIMIT 1024) i
                          LEFT JOIN LATERAL (SELECT true AS hit FROM cleanup.manifest m
                                              WHERE j.kind = 'prune' AND m.job_id = p_job
                                                AND m.external_id = i.external_id
                                              LIMIT 1) m ON true) b) c
         WHERE c.before < p_budget;
    END IF;
    more := coalesce(cardinality(ids), 0) = p_budget OR examined = 1024;
END $$;

-- Discovery of a later pass: the retained rows of P_JOB from the pass
-- cursor, as many as P_BUDGET allows. All of them are candidates (a
-- retained row was one), unless its external ID is now in the manifest,
-- which only a writer bypassing the guards could arrange (KEPT_IDS: kept,
-- and resolved: they leave cleanup.job_retained here). LIBS: the libraries
-- whose locks the step took (P_LIB's, or for remove-server those of the
-- rows); MAX_ID the last retained id read; MORE: a full batch.
CREATE OR REPLACE FUNCTION cleanup.step_discover_retained(p_job bigint, p_preview boolean, p_budget int,
                                                          p_lib bigint, j cleanup.jobs,
                                                       OUT action text, OUT library_id bigint,
                                                       OUT check_from text, OUT check_to text,
                                                       OUT key_cursor text, OUT key_bound text, OUT key_bound_end boolean,
                                                       OUT ids bigint[], OUT xmins xid[], OUT ctids tid[],
                                                       OUT kept_ids bigint[], OUT libs bigint[],
                                                       OUT examined int, OUT kept int, OUT max_id bigint,
                                                       OUT more boolean)
LANGUAGE plpgsql
AS $$
BEGIN
    action := 'pass';
    check_from := NULL;        -- key ranges: the keyed pass only
    check_to := NULL;
    key_cursor := j.key_cursor;
    key_bound := j.key_bound;
    key_bound_end := j.key_bound_end;
    SELECT array_agg(q.item_id) FILTER (WHERE NOT q.seen), array_agg(q.xmin) FILTER (WHERE NOT q.seen),
           array_agg(q.ctid) FILTER (WHERE NOT q.seen), array_agg(q.item_id) FILTER (WHERE q.seen),
           array_agg(DISTINCT q.library_id) FILTER (WHERE q.library_id IS NOT NULL),
           count(*), count(*) FILTER (WHERE q.seen), max(q.item_id)
      INTO ids, xmins, ctids, kept_ids, libs, examined, kept, max_id
      FROM (SELECT q.item_id, i.xmin, i.ctid, i.library_id, m.hit IS NOT NULL AS seen
              FROM (SELECT item_id FROM cleanup.job_retained
                     WHERE job_id = p_job AND item_id > j.cursor_id
                     ORDER BY item_id LIMIT p_budget) q
              -- A probe by key per retained row (LIMIT 1 keeps the
              -- subquery from being flattened into a join the planner
              -- could hash over the whole inventory).
              LEFT JOIN LATERAL (SELECT i.xmin, i.ctid, i.library_id, i.external_id FROM inventory.items i
                                  WHERE i.id = q.item_id LIMIT 1) i ON true
              LEFT JOIN LATERAL (SELECT true AS hit FROM cleanup.manifest m
                                  WHERE j.kind = 'prune' AND m.job_id = p_job AND m.external_id = i.external_id
                                  LIMIT 1) m ON true) q;
    IF p_lib IS NOT NULL THEN
        libs := ARRAY[p_lib];
    END IF;
    library_id := CASE WHEN cardinality(libs) = 1 THEN libs[1] END;
    IF NOT p_preview AND libs IS NOT NULL THEN
        PERFORM cleanup.lock_libraries(libs);
    END IF;
    IF NOT p_preview AND kept_ids IS NOT NULL THEN
        DELETE FROM cleanup.job_retained WHERE job_id = p_job AND item_id = ANY (kept_ids);
    END IF;
    more := examined = p_budget;
END $$;

-- The verdicts of a drain step's candidates (P_IDS, P_XMINS, P_CTIDS, at
-- least one) under the library locks: the count rows of P_LIBS locked
-- (the count trigger of the coming DELETE updates them), then
-- cleanup.step_drain (S2-S5) in scope P_SCOPE (NULL: server P_SERVER's
-- libraries), then the new claims drained with what is left of P_BUDGET
-- (D2; the rest in later steps). Adds to the step row S; INFLIGHT: claims
-- still in flight.
CREATE OR REPLACE FUNCTION cleanup.step_judge(p_job bigint, p_preview boolean, p_budget int,
                                              p_scope bigint, p_server bigint, p_retained_pass boolean,
                                              p_libs bigint[], p_ids bigint[], p_xmins xid[], p_ctids tid[],
                                              INOUT s cleanup.job_steps, OUT inflight int)
LANGUAGE plpgsql
AS $$
DECLARE
    v_n      int := cardinality(p_ids);
    v_budget int := p_budget;
    r        record;
    cd       record;
BEGIN
    inflight := 0;
    -- Test-only fault injection (docs/steps.md): hold the step between
    -- discovery and the re-read until the test lets go.
    IF NOT p_preview AND cleanup.failpoints_on() THEN
        PERFORM cleanup.failpoint('step_after_discovery');
    END IF;
    IF NOT p_preview THEN
        -- The count trigger of the coming DELETE updates a stripe of each
        -- library's count: one is taken now without waiting (a writer
        -- moving a row out holds another; migration 019), so the DELETE
        -- never waits on one. Held from here to commit only.
        PERFORM cleanup.lock_library_stripe(p_libs);
    END IF;
    r := cleanup.step_drain(p_job, p_scope, p_server, p_ids, p_xmins, p_ctids, p_retained_pass, p_preview,
                            v_budget);
    IF NOT p_preview AND cleanup.failpoints_on() THEN
        PERFORM cleanup.failpoint('step_after_delete');
    END IF;
    IF v_n <> r.n_deleted + r.n_retained + r.n_moved + r.n_absent + r.n_claimed THEN
        -- Cannot happen: every visited candidate gets one verdict.
        RAISE EXCEPTION 'step % of job %: % visited but % accounted for', s.step_no, p_job,
            v_n, r.n_deleted + r.n_retained + r.n_moved + r.n_absent + r.n_claimed;
    END IF;
    s.visited := v_n;
    s.deleted := s.deleted + r.n_deleted;
    s.retained := s.retained + r.n_retained;
    s.moved := s.moved + r.n_moved;
    s.absent := s.absent + r.n_absent;
    s.claimed := r.n_claimed;
    s.retries_deleted := s.retries_deleted + r.n_retries;
    s.previews_deleted := s.previews_deleted + r.n_previews;
    v_budget := v_budget - r.n_deleted - r.n_retries - r.n_previews;
    IF r.n_claimed > 0 THEN
        -- The new claims' dependents (and, when they fit, the items) with
        -- what is left of the budget; the rest in later steps.
        IF v_budget > 0 THEN
            cd := cleanup.claims_drain(p_job, v_budget, p_preview);
            s.deleted := s.deleted + cd.n_items;
            s.released := s.released + cd.n_items + cd.n_absent + cd.n_moved + cd.n_retained;
            s.absent := s.absent + cd.n_absent;
            s.moved := s.moved + cd.n_moved;
            s.retained := s.retained + cd.n_retained;
            s.retries_deleted := s.retries_deleted + cd.n_retries;
            s.previews_deleted := s.previews_deleted + cd.n_previews;
            inflight := cd.n_left;
        ELSE
            inflight := r.n_claimed;
        END IF;
    END IF;
END $$;

-- The range of job J is exhausted (no claim in flight): the next library
-- of a remove-server's first pass, else another pass when retained rows
-- remain (S5; P_RETAINED: rows this step retained; a preview of a later
-- pass leaves out the rows it just visited, P_IDS and P_KEPT_IDS, which
-- the step itself would resolve), else finalizing (P_LIB: the job's
-- library, NULL for remove-server).
CREATE OR REPLACE FUNCTION cleanup.step_range_next(p_job bigint, p_preview boolean, p_lib bigint, p_retained int,
                                                   p_ids bigint[], p_kept_ids bigint[], INOUT j cleanup.jobs)
LANGUAGE plpgsql
AS $$
DECLARE
    v_next bigint;
BEGIN
    IF j.pass_no = 1 AND j.kind = 'remove-server' AND j.cursor_library_id IS NOT NULL THEN
        SELECT min(id) INTO v_next FROM inventory.libraries
         WHERE server_id = j.server_id AND id > j.cursor_library_id;
    END IF;
    IF v_next IS NOT NULL THEN
        j.cursor_library_id := v_next;
        j.cursor_id := 0;
    ELSIF p_retained > 0
          OR EXISTS (SELECT 1 FROM cleanup.job_retained
                      WHERE job_id = p_job
                        AND (NOT p_preview OR j.pass_no = 1
                             OR NOT (item_id = ANY (coalesce(p_ids, '{}'::bigint[])
                                                    || coalesce(p_kept_ids, '{}'::bigint[]))))) THEN
        -- Retained rows remain (S5): another pass revisits them.
        j.pass_no := j.pass_no + 1;
        j.cursor_id := cleanup.pass_start(p_job, NULL);
    ELSE
        j.phase := 'finalizing';
        j.cursor_id := 0;
        j.cursor_library_id := p_lib;
    END IF;
END $$;

-- The drain mode itself: the parts above, in order.
CREATE OR REPLACE FUNCTION cleanup.step_mode_drain(p_job bigint, p_preview boolean,
                                          INOUT j cleanup.jobs, INOUT s cleanup.job_steps)
LANGUAGE plpgsql
-- Plans that cannot go wrong: every statement here reads its
-- rows in an index's order and stops at its bound. Without this, on data
-- nobody analyzed the planner estimated a library's range at a few rows and
-- read all of it (30,000 rows of index (library_id, external_id), then an
-- incremental sort) to take 1,024: the range's order is index
-- (library_id, id)'s, and a plan with a sort of any kind is never needed.
-- The parts (step_discover_*, step_judge) run under these settings.
SET enable_sort = off
SET enable_incremental_sort = off
AS $$
DECLARE
    v_lib      bigint := CASE WHEN j.kind = 'remove-server' THEN NULL ELSE j.library_id END;
    v_budget   int := 128;     -- domain mutations left in this step (D2)
    v_take     int;            -- candidates to discover
    v_inflight int := 0;       -- claims of the job in flight after this step
    v_keyed    boolean := j.pass_no = 1 AND j.kind = 'prune' AND j.key_cursor IS NOT NULL;
    v_scope    bigint;         -- the library a visited row must still be in (NULL: the server's)
    c          record;         -- claims in flight
    d          record;         -- the discovery
    v          record;         -- the verdicts
BEGIN
    -- Claims in flight first (none: nothing changes; the check is the
    -- read of their libraries, one statement either way).
    c := cleanup.step_claims_first(p_job, p_preview, j.cursor_id, s);
    s := c.s;
    IF c.done THEN
        RETURN;
    END IF;
    v_budget := c.budget;
    -- How many candidates to take. A job that has deleted no dependent
    -- takes the whole budget. Else the batch of its last step that took
    -- any, corrected by what it met: the candidates it had to claim (did
    -- not fit) come off, a budget it left unused scales it up; scaled to
    -- what this step's claims left of the budget. So few items with
    -- dependents are left over to be claimed, and the budget is used.
    -- (The job's cost per item so far kept the batches a third too small
    -- for the rest of a small job after one item with 300 dependents; the
    -- last step alone, when it drained claims only, sent a full budget of
    -- candidates after it.) One read of the job's newest step records, by
    -- key, backwards to the newest that took candidates (claims-only
    -- steps are few), for jobs with dependents only.
    v_take := v_budget;
    IF j.retries_deleted + j.previews_deleted > 0 THEN
        SELECT CASE WHEN p.claimed > 0 THEN p.visited - p.claimed
                    WHEN p.mutations < 128 THEN p.visited * 128 / greatest(p.mutations, 1)
                    ELSE p.visited END * v_budget / 128
          INTO v_take
          FROM cleanup.job_steps p WHERE p.job_id = p_job AND p.visited > 0
         ORDER BY p.job_id DESC, p.step_no DESC LIMIT 1;
        v_take := least(greatest(coalesce(v_take, v_budget), 1), v_budget);
    END IF;

    IF v_keyed THEN
        d := cleanup.step_discover_keyed(p_job, p_preview, v_take, j);
        v_scope := j.cursor_library_id;
        j.key_cursor := d.key_cursor;
        j.key_bound := d.key_bound;
        j.key_bound_end := d.key_bound_end;
        s.check_from := d.check_from;
        s.check_to := d.check_to;
    ELSIF j.pass_no = 1 THEN
        d := cleanup.step_discover_range(p_job, p_preview, v_take, j);
        v_scope := j.cursor_library_id;
    ELSE
        d := cleanup.step_discover_retained(p_job, p_preview, v_take, v_lib, j);
        v_scope := v_lib;
    END IF;
    s.action := d.action;
    s.library_id := d.library_id;
    s.examined := coalesce(d.examined, 0);
    s.kept := coalesce(d.kept, 0);

    IF coalesce(cardinality(d.ids), 0) > 0 THEN
        v := cleanup.step_judge(p_job, p_preview, v_budget, v_scope, j.server_id, j.pass_no > 1,
                                coalesce(d.libs, ARRAY[j.cursor_library_id]), d.ids, d.xmins, d.ctids, s);
        s := v.s;
        v_inflight := v.inflight;
    END IF;
    s.mutations := s.deleted + s.retries_deleted + s.previews_deleted;
    s.claims_in_flight := v_inflight;
    IF s.examined > 0 AND NOT v_keyed THEN
        j.cursor_id := d.max_id;
    END IF;
    s.cursor_to := j.cursor_id;

    IF NOT d.more AND v_inflight = 0 THEN
        -- This range is exhausted: next library, next pass, or finalize.
        j := cleanup.step_range_next(p_job, p_preview, v_lib, s.retained, d.ids, d.kept_ids, j);
    END IF;
END $$;

-- Mode final check (S6) of a prune, while admission stays closed.
CREATE OR REPLACE FUNCTION cleanup.step_mode_final_check(p_job bigint, p_preview boolean,
                                          INOUT j cleanup.jobs, INOUT s cleanup.job_steps)
LANGUAGE plpgsql
AS $$
DECLARE
    v_n       int;
    v_ret     bigint[];
    v_more    boolean;         -- the page did not reach the end (see final_check_page)
BEGIN
    ---------------------------------------------------------------
    -- Final absence check (S6), while admission stays closed: no row
    -- of the library at or below the high-water id may be eligible.
    -- Bounded pages in external ID order, merged with the manifest;
    -- the eligible set can only shrink while the library is fenced,
    -- so pages checked in separate transactions add up to one check
    -- (docs/steps.md).
    ---------------------------------------------------------------
    s.action := 'final-check';
    s.library_id := j.library_id;
    IF NOT p_preview THEN
        PERFORM cleanup.lock_libraries(ARRAY[j.library_id]);
    END IF;
    s.check_from := coalesce(j.check_cursor, '');
    SELECT f.checked, f.last_key, f.eligible, f.more INTO v_n, s.check_to, v_ret, v_more
      FROM cleanup.final_check_page(p_job, j.library_id, j.high_water_id, s.check_from) f;
    s.checked := v_n;
    s.check_to := coalesce(s.check_to, s.check_from);
    IF NOT p_preview AND cleanup.failpoints_on() THEN
        PERFORM cleanup.failpoint('final_check');
    END IF;
    IF v_ret IS NOT NULL THEN
        -- Something eligible survived: never complete (S6). Retain what
        -- this page found and revisit it in another pass; the check
        -- then starts again from the beginning.
        j.phase := 'draining';
        j.pass_no := j.pass_no + 1;
        j.cursor_id := cleanup.pass_start(p_job, v_ret);
        j.check_cursor := NULL;
        IF NOT p_preview THEN
            INSERT INTO cleanup.job_retained (job_id, item_id)
            SELECT p_job, x FROM unnest(v_ret) AS x ON CONFLICT DO NOTHING;
            PERFORM cleanup.log_event(p_job, 'final-check',
                format('final check found %s eligible rows in library %s; pass %s revisits them',
                       cardinality(v_ret), j.library_id, j.pass_no));
        END IF;
    ELSIF v_more THEN
        j.check_cursor := s.check_to;
    ELSE
        -- Exact: complete, and reopen admission in the same transaction.
        j.phase := 'completed';
        IF NOT p_preview THEN
            PERFORM cleanup.lock_parent_row('library admission', j.library_id);
            UPDATE cleanup.library_admission
               SET state = 'open', job_id = NULL, changed_at = now()
             WHERE library_id = j.library_id;
        END IF;
    END IF;
    s.cursor_to := s.cursor_from;
END $$;

-- The items left in library P_LIB (at most 10,000 ids, NULL when none),
-- read before a finalize step takes the parent row lock (S11, S13). Both
-- indexes that lead with library_id are walked with plain index scans,
-- never a bitmap scan: a plain scan marks the index entries of the
-- drained range's deleted rows dead (LP_DEAD) as it passes them, a bitmap
-- scan never does. Before, the check ran as a bitmap
-- scan and marked nothing, so the two scans under the parent row lock,
-- the guard's emptiness check (index (library_id, id)) and PostgreSQL's
-- RESTRICT check (WHERE library_id = $1), each fetched every deleted
-- row's heap tuple again: 285 and 307 buffers for a drained library of
-- 20,000 items, growing with its size, while parent-row readers waited
-- (counted with auto_explain, BUFFERS). After this walk they read index
-- pages only (about 100 buffers each at that size).
CREATE OR REPLACE FUNCTION cleanup.library_leftovers(p_lib bigint)
RETURNS bigint[] LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_indexonlyscan = off
SET enable_sort = off
SET enable_incremental_sort = off
AS $$
DECLARE
    v_ids bigint[];
    v_n   bigint;
BEGIN
    -- Index (library_id, id), in its order.
    v_ids := ARRAY(SELECT i.id FROM inventory.items i
                    WHERE (i.library_id, i.id) >= (p_lib, -9223372036854775808)
                      AND (i.library_id, i.id) <= (p_lib, 9223372036854775807)
                    ORDER BY i.library_id, i.id LIMIT 10000);
    -- Index (library_id, external_id), in its order: the same rows (same
    -- snapshot), walked for its dead entries.
    v_n := (SELECT count(*) FROM (SELECT 1 FROM inventory.items i WHERE i.library_id = p_lib
                                   ORDER BY i.library_id, i.external_id LIMIT 10000) q);
    IF cardinality(v_ids) > 0 OR v_n > 0 THEN
        RETURN v_ids;
    END IF;
    RETURN NULL;
END $$;

-- Mode finalize of a removal (S10, S11, S13): one parent per step, under
-- its row lock, after re-checking emptiness under that lock.
CREATE OR REPLACE FUNCTION cleanup.step_mode_finalize(p_job bigint, p_preview boolean,
                                          INOUT j cleanup.jobs, INOUT s cleanup.job_steps)
LANGUAGE plpgsql
AS $$
DECLARE
    t_parent  timestamptz;
    v_next    bigint;
    v_ret     bigint[];
    d         record;
BEGIN
    ---------------------------------------------------------------
    -- Finalize a removal (S10, S11, S13): one parent per step, under
    -- its row lock, after re-checking emptiness under that lock.
    ---------------------------------------------------------------
    IF j.kind = 'remove-library' THEN
        v_next := j.library_id;
    ELSE
        SELECT min(id) INTO v_next FROM inventory.libraries WHERE server_id = j.server_id;
    END IF;
    IF v_next IS NOT NULL THEN
        s.action := 'delete-library';
        s.library_id := v_next;
        IF NOT p_preview THEN
            PERFORM cleanup.lock_libraries(ARRAY[v_next]);
        END IF;
        -- Emptiness, first without the parent row lock: the first scan
        -- of a freshly drained library walks (and marks) the dead index
        -- entries of every deleted row, tens of ms for 500k rows; that
        -- must not happen while writers' foreign-key checks queue on
        -- the parent row (benchmark finding, docs/benchmarks.md).
        v_ret := cleanup.library_leftovers(v_next);
        -- S11 under the parent row lock is the BEFORE DELETE guard's
        -- check (020_admission.sql) inside the DELETE below, with the
        -- RESTRICT foreign key behind it: a row that slipped in between
        -- this check and the lock fails the step whole (CUA05), and the
        -- next step's check sends it to another pass. Each scan of the
        -- drained range costs ms while its dead entries remain, so the
        -- lock is held for those two only.
        IF v_ret IS NULL THEN
            -- Item 6: the library's own dependents before its parent
            -- delete, under the same budget: collections, sync status,
            -- then history detachment (D6). Admission is closed, so none
            -- can be added behind this drain (D5); the parent delete
            -- comes in a later step, once none is left.
            d := cleanup.library_dependents_drain(v_next, 128, p_preview);
            IF d.n_collections + d.n_sync + d.n_history > 0 THEN
                s.action := 'drain-library-dependents';
                s.collections_deleted := d.n_collections;
                s.sync_status_deleted := d.n_sync;
                s.history_detached := d.n_history;
                s.mutations := d.n_collections + d.n_sync + d.n_history;
                RETURN;
            END IF;
        END IF;
        IF v_ret IS NULL AND NOT p_preview THEN
            -- A writer's declared write lock (count cache) on the library
            -- would make the parent delete wait on it: busy now, naming
            -- it, before the parent row is locked (T3).
            IF NOT cleanup.try_engine_lock(cleanup.write_key(v_next)) THEN
                RAISE EXCEPTION 'library % has a declared sync write in flight (its count-cache write lock)', v_next
            USING ERRCODE = '55P03',
                  DETAIL = 'held by ' || coalesce((cleanup.engine_lock_holders(cleanup.write_key(v_next),
                        pg_catalog.format('the declared write lock (count cache) of library %s', v_next)
                                )), 'a transaction that has ended since'),
                  HINT = 'busy: retry later';
            END IF;
            -- The parent row lock comes last (below), just before the
            -- parent delete (S11: its hold is one short step); here only
            -- whether the row is still there.
            IF NOT EXISTS (SELECT 1 FROM inventory.libraries l WHERE l.id = v_next) THEN
                v_next := NULL;     -- already gone: only possible around the guards
            END IF;
        END IF;
    END IF;
    IF v_ret IS NOT NULL THEN
        -- Not empty under the lock: never cascade (S11). Revisit what
        -- remains in another pass, then finalize again.
        j.phase := 'draining';
        j.pass_no := j.pass_no + 1;
        j.cursor_id := cleanup.pass_start(p_job, v_ret);
        s.checked := cardinality(v_ret);
        IF NOT p_preview THEN
            INSERT INTO cleanup.job_retained (job_id, item_id)
            SELECT p_job, x FROM unnest(v_ret) AS x ON CONFLICT DO NOTHING;
            PERFORM cleanup.log_event(p_job, 'finalize',
                format('library %s still holds inventory under its row lock; pass %s drains it',
                       v_next, j.pass_no));
        END IF;
    ELSIF v_next IS NOT NULL THEN
        IF NOT p_preview THEN
            -- The library delete fires the guard's emptiness check (an
            -- index range, 020_admission.sql) and PostgreSQL's RESTRICT
            -- foreign-key check of inventory.items (WHERE library_id =
            -- $1, planned in this backend on first use). Statistics from
            -- before the drain still give the library its old rows, and
            -- with them the foreign-key check scans the whole items table
            -- under the parent row lock (measured on a just-drained 500k
            -- library of 1M items: 36-51 ms held instead of 7-10 ms;
            -- 825 ms over 12.7M items). For an empty library the index
            -- is the right plan.
            PERFORM set_config('enable_seqscan', 'off', true);
            -- Everything that does not need the
            -- library's row lock first (its admission and count rows,
            -- the audit record: nobody else can change them while this
            -- step holds the library and admission locks), then the row
            -- lock, the delete and the library's cleanup lock row, so
            -- that a parent-row reader (a writer's foreign-key check)
            -- waits for the delete and the step's commit only. All in
            -- this step's transaction: a busy row lock undoes them.
            PERFORM cleanup.lock_parent_row('library admission', v_next);
            DELETE FROM cleanup.library_admission WHERE library_id = v_next;
            DELETE FROM cleanup.library_stats WHERE library_id = v_next;
            PERFORM cleanup.audit_engine(p_job, 'delete-library',
                format('library %s deleted, empty, by step %s of job %s', v_next, s.step_no, p_job));
            IF cleanup.failpoints_on() THEN
                PERFORM cleanup.failpoint('step_before_parent_delete');
            END IF;
            IF NOT cleanup.lock_parent_row('library', v_next) THEN
                -- Gone since the look above: only around the guards.
                -- Busy: nothing changes, and the next step finds it gone.
                RAISE EXCEPTION 'library % vanished before its delete', v_next
                    USING ERRCODE = '55P03',
                          DETAIL = 'held by a transaction that has ended since',
                          HINT = 'busy: retry later';
            END IF;
            t_parent := clock_timestamp();
            DELETE FROM inventory.libraries WHERE id = v_next;
            -- After the delete: its guard checks that this transaction
            -- holds the library's cleanup lock (cleanup.holds_lock).
            DELETE FROM cleanup.engine_locks WHERE key = cleanup.library_key(v_next);
            s.parent_lock_ms := extract(epoch FROM clock_timestamp() - t_parent) * 1000;
        END IF;
        s.libraries_deleted := 1;
        s.mutations := 1;
        IF j.kind = 'remove-library' THEN
            j.phase := 'completed';
        END IF;
    ELSIF j.kind = 'remove-server' THEN
        s.action := 'delete-server';
        s.library_id := NULL;
        IF p_preview THEN
            s.servers_deleted := 1;
        ELSIF EXISTS (SELECT 1 FROM inventory.media_servers m WHERE m.id = j.server_id) THEN
            -- As for a library (above): the server's row lock last.
            PERFORM cleanup.lock_parent_row('server admission', j.server_id);
            DELETE FROM cleanup.server_admission WHERE server_id = j.server_id;
            PERFORM cleanup.audit_engine(p_job, 'delete-server',
                format('server %s (%s) deleted, without libraries, by step %s of job %s',
                       j.server_id, j.target_name, s.step_no, p_job));
            IF cleanup.failpoints_on() THEN
                PERFORM cleanup.failpoint('step_before_parent_delete');
            END IF;
            IF NOT cleanup.lock_parent_row('server', j.server_id) THEN
                RAISE EXCEPTION 'server % vanished before its delete', j.server_id
                    USING ERRCODE = '55P03',
                          DETAIL = 'held by a transaction that has ended since',
                          HINT = 'busy: retry later';
            END IF;
            t_parent := clock_timestamp();
            DELETE FROM inventory.media_servers WHERE id = j.server_id;
            DELETE FROM cleanup.engine_locks WHERE key = cleanup.coordinator_key(j.server_id);
            s.parent_lock_ms := extract(epoch FROM clock_timestamp() - t_parent) * 1000;
            s.servers_deleted := 1;
        END IF;
        s.mutations := s.servers_deleted;
        j.phase := 'completed';
    ELSE
        -- remove-library whose library is already gone.
        s.action := 'delete-library';
        j.phase := 'completed';
        IF NOT p_preview THEN
            PERFORM cleanup.log_event(p_job, 'finalize',
                format('library %s was already gone at finalize', j.library_id));
        END IF;
    END IF;
END $$;

-- The engine of one step, or with P_PREVIEW the prediction of the next one
-- (no locks, no mutations). See cleanup.job_step for the contract.
-- P_LEASE: the caller's runner lease token (cleanup.job_step), checked and
-- renewed in this transaction once the step is known not to be a replay,
-- in the statement that locks the job row (cleanup.runner_step_check).
DROP FUNCTION IF EXISTS cleanup.step_exec(bigint, int, int, boolean);
CREATE OR REPLACE FUNCTION cleanup.step_exec(p_job bigint, p_step_no int, p_busy int, p_preview boolean,
                                             p_lease bigint DEFAULT NULL)
RETURNS cleanup.job_steps LANGUAGE plpgsql
-- Array parameters make custom plans look attractive; they are re-planned
-- on every call. The generic plans are right for every step.
SET plan_cache_mode = force_generic_plan
-- No JIT for a step's statements: each reads at most its budget, and the
-- settings that keep plans bounded (enable_sort = off in the drain mode,
-- the final check's join settings) price the paths they rule out at 1e10,
-- far above jit_above_cost: with the server's default jit = on a trivial
-- sort of a few library ids was compiled in every step, 50-126 ms of
-- 58-188 ms steps (docs/benchmarks-dependents.md, "JIT").
SET jit = off
AS $$
DECLARE
    t0        timestamptz := clock_timestamp();
    t_locked  timestamptz;
    j         cleanup.jobs;
    s         cleanup.job_steps;
    v_server  bigint;
    v_last    int;
    v_kind    text;
    r         record;
    v_sync    text;            -- synchronous_commit before the step changed it
BEGIN
    IF p_step_no < 1 THEN
        RAISE EXCEPTION 'step number % is not valid: steps are numbered from 1', p_step_no
            USING ERRCODE = 'CU101';
    END IF;
    SELECT server_id, step_no, kind INTO v_server, v_last, v_kind FROM cleanup.jobs WHERE id = p_job;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'job % does not exist', p_job USING ERRCODE = 'CU001';
    END IF;
    IF NOT p_preview AND p_step_no <= v_last THEN
        -- Replay (S8): a committed step is returned as recorded, without locks.
        RETURN cleanup.job_step_replay(p_job, p_step_no);
    END IF;
    IF p_preview THEN
        SELECT * INTO j FROM cleanup.jobs WHERE id = p_job;
    ELSE
        -- L1: source tables, coordinator, job row; library locks follow.
        -- Every table this step may write, dependents included (T6), in
        -- ROW EXCLUSIVE: no DDL on any of them (a new foreign key, a
        -- trigger, a column) can land between the contract check below
        -- and this step's commit. Without waiting: a table held by
        -- someone else (a writer's LOCK TABLE, DDL, or DDL queued behind
        -- a long reader) is busy, naming the holder. The block is a
        -- subtransaction that takes no transaction id, so everything
        -- after it runs under the top-level id (cleanup.holds_lock).
        BEGIN
            IF v_kind = 'prune' THEN
                LOCK TABLE inventory.items, inventory.item_retries, inventory.identity_review_previews
                    IN ROW EXCLUSIVE MODE NOWAIT;
            ELSE
                -- A removal deletes parents and library dependents too, and
                -- the parents' admission rows (they reference the parents:
                -- part of the graph the contract covers, 096_drift.sql).
                LOCK TABLE inventory.items, inventory.libraries, inventory.media_servers,
                           inventory.item_retries, inventory.identity_review_previews,
                           inventory.library_collections, inventory.library_sync_status,
                           inventory.classification_history,
                           cleanup.library_admission, cleanup.server_admission
                    IN ROW EXCLUSIVE MODE NOWAIT;
            END IF;
        EXCEPTION WHEN lock_not_available THEN
            RAISE EXCEPTION 'a table step % of job % writes is locked', p_step_no, p_job
            USING ERRCODE = '55P03',
                  DETAIL = 'held by ' || coalesce(((SELECT string_agg(h, '; ') FROM (
                     SELECT cleanup.relation_holders_text(t::regclass) AS h
                       FROM unnest(ARRAY['inventory.items', 'inventory.libraries', 'inventory.media_servers',
                                         'inventory.item_retries', 'inventory.identity_review_previews',
                                         'inventory.library_collections', 'inventory.library_sync_status',
                                         'inventory.classification_history',
                                         'cleanup.library_admission', 'cleanup.server_admission']) AS t
                      WHERE EXISTS (SELECT 1 FROM cleanup.relation_pids(t::regclass))) q
                                )), 'a transaction that has ended since'),
                  HINT = 'busy: retry later';
        END;
        IF NOT cleanup.try_engine_lock(cleanup.coordinator_key(v_server)) THEN
            RAISE EXCEPTION 'cleanup coordinator lock for server % is held by another cleanup transaction', v_server
            USING ERRCODE = '55P03',
                  DETAIL = 'held by ' || coalesce((cleanup.engine_lock_holders(cleanup.coordinator_key(v_server),
                                            pg_catalog.format('the cleanup coordinator lock of server %s', v_server)
                                )), 'a transaction that has ended since'),
                  HINT = 'busy: retry later';
        END IF;
        -- One runner per job (F2): the job row locked and the lease
        -- renewed, or refused (CU470, CU471), in one statement.
        j := cleanup.runner_step_check(p_job, p_lease, p_step_no);
        -- Setting cleanup.step_synchronous_commit = off (docs/steps.md): the
        -- step commits without waiting for its WAL flush. A step lost in a
        -- server crash is lost whole (S7) and simply runs again.
        -- Completing and parent-deleting steps always commit synchronously
        -- (below): a run that reported "completed" must not lose it.
        IF current_setting('cleanup.step_synchronous_commit', true) = 'off' THEN
            v_sync := current_setting('synchronous_commit');
            PERFORM set_config('synchronous_commit', 'off', true);
        END IF;
    END IF;
    t_locked := clock_timestamp();

    IF NOT p_preview THEN
        IF p_step_no <= j.step_no THEN
            -- Committed by another caller between our first look and the lock.
            RETURN cleanup.job_step_replay(p_job, p_step_no);
        ELSIF p_step_no <> j.step_no + 1 THEN
            RAISE EXCEPTION 'job % cannot run step % next: its last committed step is %, so the next is %',
                p_job, p_step_no, j.step_no, j.step_no + 1 USING ERRCODE = 'CU101';
        END IF;
    END IF;
    IF j.phase NOT IN ('draining', 'finalizing') THEN
        RAISE EXCEPTION '% has no step to run: only draining and finalizing jobs step', cleanup.job_label(j)
            USING ERRCODE = 'CU400',
                  HINT = CASE j.phase
                           WHEN 'collecting' THEN format('seal it first: cleanupctl job seal %s --expected N', j.id)
                           WHEN 'paused' THEN format('resume and seal it first: cleanupctl job resume %s', j.id)
                           WHEN 'completed' THEN 'it is done; a recorded step can be replayed with --replay STEP_NO'
                           ELSE 'it was cancelled before deletion started; create a new job' END;
    END IF;
    IF NOT p_preview THEN
        -- Seed 001: under the source-table lock (no DDL on inventory.items
        -- until this transaction ends) and before any domain mutation,
        -- compare the recorded schema contract; drift stops the step
        -- (CU403, exit 4) before it changes anything. One row read and one
        -- catalog look-up while the contract is clean (docs/data-model.md).
        PERFORM cleanup.contract_assert();
        -- D1: and no foreign key into what this job deletes lacks
        -- a recorded disposition (install may have recorded drift, so the
        -- contract alone is not enough). CU404 before any domain mutation.
        IF cleanup.has_unknown_references(CASE j.kind
               WHEN 'prune' THEN ARRAY['inventory.items'::regclass]
               WHEN 'remove-library' THEN ARRAY['inventory.items'::regclass, 'inventory.libraries'::regclass]
               ELSE ARRAY['inventory.items'::regclass, 'inventory.libraries'::regclass,
                          'inventory.media_servers'::regclass] END) THEN
            PERFORM cleanup.assert_known_references(j.kind);
        END IF;
    END IF;

    s.job_id := p_job;
    s.step_no := j.step_no + 1;
    s.pass_no := j.pass_no;
    s.examined := 0; s.visited := 0; s.deleted := 0; s.moved := 0; s.absent := 0; s.retained := 0; s.kept := 0;
    s.libraries_deleted := 0; s.servers_deleted := 0; s.mutations := 0; s.checked := 0;
    s.claimed := 0; s.released := 0; s.claims_in_flight := 0; s.moved_early := 0; s.absent_early := 0;
    s.retries_deleted := 0; s.previews_deleted := 0; s.collections_deleted := 0;
    s.sync_status_deleted := 0; s.history_detached := 0;
    s.started_at := t0;
    s.cursor_from := j.cursor_id;

    IF j.mode = 'single-transaction' THEN
        r := cleanup.step_mode_single(p_job, p_preview, j, s);
    ELSIF j.phase = 'draining' THEN
        r := cleanup.step_mode_drain(p_job, p_preview, j, s);
    ELSIF j.kind = 'prune' THEN
        r := cleanup.step_mode_final_check(p_job, p_preview, j, s);
    ELSE
        r := cleanup.step_mode_finalize(p_job, p_preview, j, s);
    END IF;
    j := r.j;
    s := r.s;

    IF NOT p_preview AND EXISTS (SELECT 1 FROM cleanup.job_departures d WHERE d.job_id = p_job) THEN
        -- T7: rows of the job's scope that left it before a step reached
        -- them, recorded by the writers' own statements (020_admission.sql);
        -- moved and absent count them, apart from the rows steps visited.
        WITH d AS (DELETE FROM cleanup.job_departures d WHERE d.job_id = p_job RETURNING d.kind)
        SELECT count(*) FILTER (WHERE d.kind = 'moved'), count(*) FILTER (WHERE d.kind = 'deleted')
          INTO s.moved_early, s.absent_early FROM d;
        s.moved := s.moved + s.moved_early;
        s.absent := s.absent + s.absent_early;
    END IF;
    IF j.phase = 'completed' AND NOT p_preview AND j.scope_count IS NOT NULL
       AND j.scope_count <> (j.deleted + s.deleted) + (j.kept + s.kept) + (j.moved + s.moved) + (j.absent + s.absent) THEN
        -- T7's identity does not hold: never silent (docs/steps.md).
        PERFORM cleanup.log_event(p_job, 'ledger',
            format('job %s completed with %s rows in scope but %s deleted + %s kept + %s moved + %s absent = %s',
                   p_job, j.scope_count, j.deleted + s.deleted, j.kept + s.kept, j.moved + s.moved,
                   j.absent + s.absent,
                   (j.deleted + s.deleted) + (j.kept + s.kept) + (j.moved + s.moved) + (j.absent + s.absent)));
    END IF;

    s.phase_after := j.phase;
    s.cursor_to := coalesce(s.cursor_to, j.cursor_id);
    IF NOT p_preview AND (j.phase = 'completed' OR s.libraries_deleted > 0 OR s.servers_deleted > 0)
       AND current_setting('synchronous_commit') = 'off' THEN
        -- A completing step, and a step that deleted a parent, waits for
        -- its WAL flush whatever the step setting or the session says
        -- (docs/steps.md, "Settings"): a caller told "completed" (or "the
        -- library is gone") can rely on it after a server crash. The
        -- flush also makes every earlier asynchronous step durable.
        PERFORM set_config('synchronous_commit', CASE WHEN coalesce(v_sync, 'off') = 'off' THEN 'on'
                                                      ELSE v_sync END, true);
    END IF;
    IF j.phase = 'completed' AND NOT p_preview THEN
        DELETE FROM cleanup.job_retained WHERE job_id = p_job;
        PERFORM cleanup.log_event(p_job, 'completed',
            format('job %s completed at step %s: %s deleted, %s moved, %s absent, %s kept',
                   p_job, s.step_no, j.deleted + s.deleted, j.moved + s.moved,
                   j.absent + s.absent, j.kept + s.kept));
    END IF;
    s.xact_id := CASE WHEN p_preview THEN NULL ELSE pg_current_xact_id() END;
    s.duration_ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    s.lock_hold_ms := extract(epoch FROM clock_timestamp() - t_locked) * 1000;
    IF p_preview THEN
        RETURN s;
    END IF;

    -- Who ran the step: this session's backend and
    -- application_name, bounded. A replay returns the recorded row
    -- (above), so these always name the session that committed it.
    s.runner_pid := pg_backend_pid();
    s.runner_app := left(current_setting('application_name', true), 64);

    -- S7: the job's counters and cursor and the step's record, in the
    -- transaction of the step's row mutations.
    WITH u AS (
        UPDATE cleanup.jobs
           SET step_no = s.step_no, phase = j.phase, pass_no = j.pass_no,
               cursor_library_id = j.cursor_library_id, cursor_id = j.cursor_id,
               check_cursor = j.check_cursor,
               key_cursor = j.key_cursor, key_bound = j.key_bound, key_bound_end = j.key_bound_end,
               examined = examined + s.examined,
               visited = visited + s.visited, deleted = deleted + s.deleted, moved = moved + s.moved,
               absent = absent + s.absent, retained = retained + s.retained, kept = kept + s.kept,
               moved_early = moved_early + s.moved_early, absent_early = absent_early + s.absent_early,
               -- A committed step made progress: the job is no longer
               -- held up (T3; set by cleanup.job_note_busy).
               blocked_since = NULL, blocked_by = NULL,
               claimed = claimed + s.claimed, released = released + s.released,
               retries_deleted = retries_deleted + s.retries_deleted,
               previews_deleted = previews_deleted + s.previews_deleted,
               collections_deleted = collections_deleted + s.collections_deleted,
               sync_status_deleted = sync_status_deleted + s.sync_status_deleted,
               history_detached = history_detached + s.history_detached,
               libraries_deleted = libraries_deleted + s.libraries_deleted,
               servers_deleted = servers_deleted + s.servers_deleted,
               busy_retries = busy_retries + greatest(coalesce(p_busy, 0), 0),
               -- updated_at is indexed (jobs_recent_idx): refreshing it at
               -- most once a second keeps most step updates HOT.
               updated_at = CASE WHEN j.phase IS DISTINCT FROM phase OR now() - updated_at >= interval '1 second'
                                 THEN now() ELSE updated_at END,
               finished_at = CASE WHEN j.phase = 'completed' THEN now() END,
               -- Coalesced notifications: jobs_notify_update
               -- notifies a step's update only when it changes the phase,
               -- the pass or notified_at, and notified_at moves only when
               -- its last value is 100 ms old: a job's steps take the
               -- cluster-wide NOTIFY queue lock about ten times a second,
               -- not once a step (docs/steps.md, "Notifications").
               notified_at = CASE WHEN notified_at IS NULL OR j.phase IS DISTINCT FROM phase
                                       OR j.pass_no IS DISTINCT FROM pass_no
                                       OR clock_timestamp() - notified_at >= interval '100 milliseconds'
                                  THEN clock_timestamp() ELSE notified_at END
         WHERE id = p_job
        RETURNING 1)
    INSERT INTO cleanup.job_steps
    SELECT (s).* FROM u
    RETURNING * INTO s;
    IF s.job_id IS NULL THEN
        RAISE EXCEPTION 'step % of job %: the job row vanished', p_step_no, p_job;
    END IF;
    IF cleanup.failpoints_on() THEN
        PERFORM cleanup.failpoint('step_before_commit');
    END IF;
    RETURN s;
END $$;

-- Runs step P_STEP_NO of draining or finalizing job P_JOB: the caller names
-- the step it intends to run (its last seen step_no + 1). A step already
-- committed is returned as recorded (replay, S8: nothing is done; the row's
-- xact_id tells the caller). The next step runs. Any other number: CU101.
-- P_BUSY busy answers the caller saw and could not record are added to the
-- job's busy_retries. 55P03 on contention, CU400 for a job in another phase.
-- Bounded whoever calls it (B1; the CLI also sets statement_timeout): every
-- lock the step takes is NOWAIT or SKIP LOCKED, its work is bounded by the
-- budget, and any other wait (a relation lock queued behind DDL) ends
-- after lock_timeout with 55P03. (A function cannot bound its own call
-- with statement_timeout: PostgreSQL arms that timer when the calling
-- statement starts.)
--
-- P_LEASE is the token of the runner lease (062_runner.sql) the caller
-- holds: renewed in this step's transaction (CU470 when the lease was
-- lost); without one the step is refused while another runner holds a
-- live lease (CU471). A replay of a committed step needs no lease.
DROP FUNCTION IF EXISTS cleanup.job_step(bigint, int, int);
CREATE OR REPLACE FUNCTION cleanup.job_step(p_job bigint, p_step_no int, p_busy int DEFAULT 0,
                                            p_lease bigint DEFAULT NULL)
RETURNS cleanup.job_steps LANGUAGE plpgsql
SET lock_timeout = '5s'
AS $$ BEGIN RETURN cleanup.step_exec(p_job, p_step_no, p_busy, false, p_lease); END $$;

-- What the next step of P_JOB would do, computed without locks or
-- mutations (run it in a READ ONLY transaction and roll back).
CREATE OR REPLACE FUNCTION cleanup.job_step_preview(p_job bigint)
RETURNS cleanup.job_steps LANGUAGE plpgsql
AS $$ BEGIN RETURN cleanup.step_exec(p_job, NULL, 0, true); END $$;
