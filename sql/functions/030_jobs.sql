-- 030_jobs: durable cleanup jobs up to sealing (C1-C8): create, append,
-- seal, pause, resume, cancel. Each function is one transaction's work and
-- raises a named SQLSTATE (010_common.sql) when it refuses.

-- Notifies listeners (the console) of every job change.
CREATE OR REPLACE FUNCTION cleanup.jobs_notify()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_notify('cleanup_jobs',
                      json_build_object('id', NEW.id, 'phase', NEW.phase, 'step_no', NEW.step_no)::text);
    RETURN NULL;
END $$;

-- Which updates notify (each pg_notify serialises its commit on the
-- cluster's NOTIFY queue lock, across all jobs and runners):
-- - A step (step_no changes): only when it changes the phase, the pass or
--   notified_at. A step moves notified_at only when its last value is
--   100 ms old (060_step.sql), so a running job notifies about ten times a
--   second instead of once a step (4 runners reached 1.7-1.9x of
--   one, 2.6x without the per-step NOTIFY; docs/benchmarks-workers.md). A
--   listener that refreshes on notification sees a running job's progress
--   within ~100 ms, every phase change and the completion at once; the
--   last steps before a run stops are seen at its next periodic refresh.
-- - An append call's count within the second of the job's last notified
--   change (job_append refreshes updated_at at most once a second): a run
--   of appends notifies about once a second instead of once a call (a
--   pg_notify costs ~4% of a call's server CPU).
-- - Every other change (create, seal, pause, resume, cancel, busy notes)
--   notifies.
DROP TRIGGER IF EXISTS jobs_notify ON cleanup.jobs;
DROP TRIGGER IF EXISTS jobs_notify_update ON cleanup.jobs;
CREATE TRIGGER jobs_notify AFTER INSERT ON cleanup.jobs
    FOR EACH ROW EXECUTE FUNCTION cleanup.jobs_notify();
CREATE TRIGGER jobs_notify_update AFTER UPDATE ON cleanup.jobs
    FOR EACH ROW
    WHEN (CASE WHEN OLD.step_no IS DISTINCT FROM NEW.step_no
               THEN OLD.phase IS DISTINCT FROM NEW.phase OR OLD.pass_no IS DISTINCT FROM NEW.pass_no
                    OR OLD.notified_at IS DISTINCT FROM NEW.notified_at
               ELSE OLD.manifest_count = NEW.manifest_count OR OLD.updated_at IS DISTINCT FROM NEW.updated_at
                    OR OLD.phase IS DISTINCT FROM NEW.phase END)
    EXECUTE FUNCTION cleanup.jobs_notify();

-- The general raise_row_busy (010_common.sql) took its place.
DROP FUNCTION IF EXISTS cleanup.raise_admission_busy(text, text, xid);

-- Locks the admission row of P_KIND ('library' or 'server') P_ID FOR
-- UPDATE without waiting, as a fence does (SKIP LOCKED: no
-- subtransaction). When an admitted writer's transaction holds it (A2):
-- P_MESSAGE as 55P03, naming the holders (T3). CU001 when the row does not
-- exist (every library and server has one from its creation on).
CREATE OR REPLACE FUNCTION cleanup.lock_admission_row(p_kind text, p_id bigint, p_message text)
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    x xid;
    tries int := 0;
BEGIN
    -- Between a skipped lock and the read of the row's xmax its holder can
    -- commit: then the xmax names nobody, and the row is taken again (a few
    -- times at most: a stream of new writers is busy, named by the last).
    LOOP
        tries := tries + 1;
        IF p_kind = 'library' THEN
            PERFORM 1 FROM cleanup.library_admission WHERE library_id = p_id FOR UPDATE SKIP LOCKED;
            IF FOUND THEN
                RETURN;
            END IF;
            SELECT a.xmax INTO x FROM cleanup.library_admission a WHERE a.library_id = p_id;
        ELSE
            PERFORM 1 FROM cleanup.server_admission WHERE server_id = p_id FOR UPDATE SKIP LOCKED;
            IF FOUND THEN
                RETURN;
            END IF;
            SELECT a.xmax INTO x FROM cleanup.server_admission a WHERE a.server_id = p_id;
        END IF;
        IF NOT FOUND THEN
            RAISE EXCEPTION '% % has no admission row', p_kind, p_id USING ERRCODE = 'CU001';
        END IF;
        EXIT WHEN tries >= 3 OR cardinality(cleanup.xid_pids(x)) > 0;
    END LOOP;
    PERFORM cleanup.raise_row_busy(p_message, pg_catalog.format('the admission row of %s %s', p_kind, p_id), x);
END $$;

-- Takes the admission row of P_KIND ('library' or 'server') P_ID for job
-- P_JOB: FOR UPDATE without waiting (lock_admission_row: 55P03 naming the
-- holders when an admitted writer still holds it, A2), then
--   a fence: the library or server (and so every library of it, and new
--            libraries) draining for P_JOB;
--   P_COLLECT (C9): library P_ID collected for prune job P_JOB, so that
--            from this transaction's commit on, every write the admission
--            triggers accept into it is protected (cleanup.protect_written).
--            A sync write admitted before this moment and still in flight
--            would commit unprotected, so its presence is busy, never a wait.
CREATE OR REPLACE FUNCTION cleanup.take_admission(p_kind text, p_id bigint, p_job bigint,
                                                  p_collect boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM cleanup.lock_admission_row(p_kind, p_id,
        pg_catalog.format('%s %s has an admitted sync write in flight; %snothing changed, retry later', p_kind, p_id,
                          CASE WHEN p_collect THEN 'collecting cannot begin under it; ' ELSE '' END));
    IF p_kind = 'server' THEN
        UPDATE cleanup.server_admission
           SET state = 'draining', job_id = p_job, changed_at = now()
         WHERE server_id = p_id;
    ELSIF p_collect THEN
        UPDATE cleanup.library_admission SET collecting_job = p_job, changed_at = now()
         WHERE library_id = p_id;
    ELSE
        UPDATE cleanup.library_admission
           SET state = 'draining', job_id = p_job, collecting_job = NULL, changed_at = now()
         WHERE library_id = p_id;
    END IF;
END $$;
-- take_admission took the place of these three.
DROP FUNCTION IF EXISTS cleanup.fence_library(bigint, bigint);
DROP FUNCTION IF EXISTS cleanup.mark_collecting(bigint, bigint);
DROP FUNCTION IF EXISTS cleanup.fence_server(bigint, bigint);

-- Creates a job. prune starts collecting; remove-library and remove-server
-- close admission at once and start draining. Refuses (CU401) when the
-- server already has an unfinished job (C7). P_MODE NULL: the recorded
-- default (the rollout switch, cleanup.plan_default_mode). The plan phase
-- (cleanup.plan_check, 032_plan.sql) locks the parent row and releases it,
-- runs the RESTRICT checks and the recorded validators (CU461).
CREATE OR REPLACE FUNCTION cleanup.job_create(p_kind text, p_target bigint, p_mode text DEFAULT NULL)
RETURNS cleanup.jobs LANGUAGE plpgsql
SET lock_timeout = '10s'
AS $$
DECLARE
    v_server  bigint;
    v_library bigint;
    v_name    text;
    v_other   cleanup.jobs;
    j         cleanup.jobs;
    l         bigint;
BEGIN
    IF p_kind NOT IN ('prune', 'remove-library', 'remove-server') THEN
        RAISE EXCEPTION 'unknown job kind %: expected prune, remove-library or remove-server', p_kind
            USING ERRCODE = 'CU101';
    END IF;
    p_mode := coalesce(p_mode, cleanup.plan_default_mode(p_kind));
    IF p_mode NOT IN ('bounded', 'single-transaction') THEN
        RAISE EXCEPTION 'unknown mode %: expected bounded or single-transaction', p_mode
            USING ERRCODE = 'CU101';
    END IF;
    IF p_mode = 'single-transaction' AND p_kind <> 'remove-library' THEN
        RAISE EXCEPTION 'mode single-transaction is only for remove-library (a comparison with the old cascade)'
            USING ERRCODE = 'CU101';
    END IF;

    IF p_kind = 'remove-server' THEN
        SELECT id, name INTO v_server, v_name FROM inventory.media_servers WHERE id = p_target;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'server % does not exist', p_target USING ERRCODE = 'CU001';
        END IF;
    ELSE
        SELECT id, server_id, name INTO v_library, v_server, v_name
          FROM inventory.libraries WHERE id = p_target;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'library % does not exist', p_target USING ERRCODE = 'CU001';
        END IF;
    END IF;

    -- Lock order (L1): source table, coordinator, job row, libraries.
    PERFORM cleanup.lock_tables_nowait(format('creating a %s job', p_kind), ARRAY['inventory.items'::regclass]);
    PERFORM cleanup.lock_coordinator(v_server);
    -- Plan phase (seed 004): the parent row locked and released, unknown
    -- references and validators refuse before any fence.
    PERFORM cleanup.plan_check(p_kind, CASE WHEN p_kind = 'remove-server' THEN v_server ELSE v_library END);

    SELECT * INTO v_other FROM cleanup.jobs
     WHERE server_id = v_server AND phase NOT IN ('completed', 'cancelled');
    IF FOUND THEN
        RAISE EXCEPTION 'server % already has unfinished %; one cleanup job per server',
            v_server, cleanup.job_label(v_other)
            USING ERRCODE = 'CU401',
                  HINT = format('finish or cancel job %s first', v_other.id);
    END IF;

    INSERT INTO cleanup.jobs (kind, mode, server_id, library_id, target_name, phase)
    VALUES (p_kind, p_mode, v_server, v_library, v_name,
            CASE WHEN p_kind = 'prune' THEN 'collecting' ELSE 'draining' END)
    RETURNING * INTO j;

    IF p_kind = 'prune' THEN
        PERFORM cleanup.take_admission('library', v_library, j.id, true);
    ELSE
        -- Parent removal closes admission immediately.
        IF p_kind = 'remove-server' THEN
            PERFORM cleanup.take_admission('server', v_server, j.id);
            FOR l IN SELECT id FROM inventory.libraries WHERE server_id = v_server ORDER BY id LOOP
                PERFORM cleanup.take_admission('library', l, j.id);
            END LOOP;
            SELECT min(id) INTO j.cursor_library_id FROM inventory.libraries WHERE server_id = v_server;
            SELECT coalesce(sum(s.item_count), 0) INTO j.total_estimate
              FROM cleanup.library_stats s JOIN inventory.libraries lb ON lb.id = s.library_id
             WHERE lb.server_id = v_server;
            SELECT coalesce(max(i.id), 0) INTO j.high_water_id
              FROM inventory.libraries lb
              CROSS JOIN LATERAL (SELECT max(id) AS id FROM inventory.items WHERE library_id = lb.id) i
             WHERE lb.server_id = v_server;
        ELSE
            PERFORM cleanup.take_admission('library', v_library, j.id);
            j.cursor_library_id := v_library;
            j.total_estimate := cleanup.library_item_count(v_library);
            SELECT coalesce(max(id), 0) INTO j.high_water_id
              FROM inventory.items WHERE library_id = v_library;
        END IF;
        -- T7: the rows in scope now, under the fence (no admitted write
        -- in flight; a move or delete out of the library holds its
        -- admission row, cleanup.record_departures), by the exact
        -- per-library count.
        UPDATE cleanup.jobs
           SET cursor_library_id = j.cursor_library_id, total_estimate = j.total_estimate,
               scope_count = j.total_estimate,
               high_water_id = j.high_water_id, sealed_at = now(), updated_at = now()
         WHERE id = j.id
        RETURNING * INTO j;
    END IF;

    PERFORM cleanup.log_event(j.id, 'created', format('created %s', cleanup.job_label(j)));
    RETURN j;
EXCEPTION WHEN unique_violation THEN
    -- A concurrent create on the same server won the race (C7).
    SELECT * INTO v_other FROM cleanup.jobs
     WHERE server_id = v_server AND phase NOT IN ('completed', 'cancelled');
    RAISE EXCEPTION 'server % already has unfinished %; one cleanup job per server',
        v_server, coalesce(cleanup.job_label(v_other), 'job')
        USING ERRCODE = 'CU401',
              HINT = format('finish or cancel job %s first', coalesce(v_other.id::text, '(in flight)'));
END $$;

-- cleanup.external_id_problem, the one external-ID rule, is defined in
-- sql/schema/006_trust.sql (the inventory's CHECK constraint needs it).

-- Appends at most 128 validated external IDs to a collecting prune job's
-- manifest (C1, C2). All or nothing. Returns the job, the number of new IDs
-- and the number of duplicates.
CREATE OR REPLACE FUNCTION cleanup.job_append(p_job bigint, p_ids text[],
                                              OUT job cleanup.jobs, OUT added int, OUT duplicates int)
LANGUAGE plpgsql
-- Every wait is bounded (B1): the job row wait below, and the source-table
-- lock of the other job functions behind DDL, end after this long with 55P03.
SET lock_timeout = '10s'
AS $$
DECLARE
    n       int := coalesce(cardinality(p_ids), 0);
    bad     record;
BEGIN
    IF n > 128 THEN
        RAISE EXCEPTION 'too many external IDs in one call: %; the limit is 128', n
            USING ERRCODE = 'CU101';
    END IF;
    -- One regex over the whole call first (cheap); the per-ID search that
    -- names the first bad ID runs only when something is wrong. The
    -- server's UTF8 encoding has already rejected invalid UTF-8 (22021).
    -- The IDs joined by a newline (which no good ID contains: the control
    -- check runs on the plain join) show edge spaces and invisible
    -- characters in one regex too (migration 013's rule).
    IF array_position(p_ids, NULL) IS NOT NULL
       OR array_to_string(p_ids, '') ~ '[\x01-\x1f\x7f-\x9f]'
       OR array_to_string(p_ids, E'\n') ~ '(^|\n) | (\n|$)|[\u00a0\u00ad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f]'
       OR EXISTS (SELECT 1 FROM unnest(p_ids) AS x WHERE x = '' OR octet_length(x) > 256) THEN
        SELECT i, x, cleanup.external_id_problem(x) AS why INTO bad
          FROM unnest(p_ids) WITH ORDINALITY AS t(x, i)
         WHERE cleanup.external_id_problem(x) IS NOT NULL
         ORDER BY i LIMIT 1;
        -- The ID is shown JSON-quoted, so control characters print as escapes.
        RAISE EXCEPTION 'external ID #% (%) %', bad.i, coalesce(left(to_json(bad.x)::text, 80), 'NULL'), bad.why
            USING ERRCODE = 'CU101',
                  DETAIL = 'IDs are non-empty, at most 256 bytes of UTF-8, without control characters, spaces at either end or invisible characters; nothing was appended';
    END IF;

    -- Appends from several collectors serialize on the job row (short
    -- waits, bounded by the function's lock_timeout). The usual case, a
    -- free row, takes it without a subtransaction (an EXCEPTION block is
    -- one); only a row locked by someone else is waited for in one, to
    -- name the wait when it times out.
    SELECT * INTO job FROM cleanup.jobs WHERE id = p_job FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        BEGIN
            SELECT * INTO job FROM cleanup.jobs WHERE id = p_job FOR UPDATE;
        EXCEPTION WHEN lock_not_available THEN
            RAISE EXCEPTION 'job % stayed locked by another transaction for %; nothing was appended, retry later',
                p_job, current_setting('lock_timeout') USING ERRCODE = '55P03', HINT = 'busy: retry later';
        END;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'job % does not exist', p_job USING ERRCODE = 'CU001';
    END IF;
    IF job.kind <> 'prune' THEN
        RAISE EXCEPTION '% has no manifest: only prune jobs collect IDs', cleanup.job_label(job)
            USING ERRCODE = 'CU400';
    END IF;
    IF job.phase = 'paused' THEN
        RAISE EXCEPTION '% is paused; resume it before appending', cleanup.job_label(job)
            USING ERRCODE = 'CU400', HINT = format('cleanupctl job resume %s', job.id);
    ELSIF job.phase <> 'collecting' THEN
        RAISE EXCEPTION '% is no longer collecting; appends are refused after sealing or cancelling',
            cleanup.job_label(job) USING ERRCODE = 'CU400';
    END IF;

    -- A new ID, or one only protected so far (written into the library
    -- while collecting, C9), becomes seen; ascending order, as the
    -- admission triggers insert protected IDs (no deadlock between them).
    -- Optimistic first: a traversal rarely repeats an ID, so a plain
    -- insert, whose one descent of the primary key per row both checks
    -- and inserts, as COPY's does. Any ID already there (a replay, a
    -- protected ID) makes it fail whole with unique_violation; then the
    -- call is done again with ON CONFLICT, whose speculative insertion
    -- probes the key before inserting (two descents a row: 30% of the
    -- server CPU of a call of 128 new IDs; docs/benchmarks-append.md).
    -- The conflict check is the primary key's either way; no plan of the
    -- planner's choosing probes the manifest (a NOT EXISTS probe was 23x
    -- slower than COPY with a cached hash anti-join; docs/benchmarks.md).
    -- The block is a subtransaction (~0.02 ms), cheaper than the probes.
    BEGIN
        INSERT INTO cleanup.manifest (job_id, external_id)
        SELECT DISTINCT p_job, x FROM unnest(p_ids) AS x ORDER BY 2;
        GET DIAGNOSTICS added = ROW_COUNT;
    EXCEPTION WHEN unique_violation THEN
        INSERT INTO cleanup.manifest AS m (job_id, external_id)
        SELECT DISTINCT p_job, x FROM unnest(p_ids) AS x ORDER BY 2
        ON CONFLICT (job_id, external_id) DO UPDATE SET protected = false WHERE m.protected;
        GET DIAGNOSTICS added = ROW_COUNT;
    END;
    duplicates := n - added;
    IF cleanup.failpoints_on() THEN
        PERFORM cleanup.failpoint('append');
    END IF;

    -- updated_at is indexed (jobs_recent_idx): refreshing it at most once
    -- a second keeps most append updates HOT, as steps do.
    UPDATE cleanup.jobs
       SET manifest_count = manifest_count + added,
           updated_at = CASE WHEN now() - updated_at >= interval '1 second' THEN now() ELSE updated_at END
     WHERE id = p_job RETURNING * INTO job;
END $$;

-- Seals a prune job's manifest (C3, C5, C6): the expected unique count must
-- equal the manifest's; fences the library (FOR UPDATE NOWAIT), records the
-- source high-water ID and moves the job to draining, all in one transaction.
CREATE OR REPLACE FUNCTION cleanup.job_seal(p_job bigint, p_expected bigint)
RETURNS cleanup.jobs LANGUAGE plpgsql
SET lock_timeout = '10s'
AS $$
DECLARE
    j           cleanup.jobs;
    actual      bigint;
    n_protected bigint;
BEGIN
    IF p_expected IS NULL OR p_expected < 0 THEN
        RAISE EXCEPTION 'expected count % is not valid: give the unique count of the complete traversal (0 or more)',
            coalesce(p_expected::text, 'NULL') USING ERRCODE = 'CU101';
    END IF;
    SELECT * INTO j FROM cleanup.jobs WHERE id = p_job;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'job % does not exist', p_job USING ERRCODE = 'CU001';
    END IF;

    PERFORM cleanup.lock_tables_nowait(format('sealing job %s', p_job), ARRAY['inventory.items'::regclass]);
    PERFORM cleanup.lock_coordinator(j.server_id);
    PERFORM cleanup.assert_known_references(j.kind);
    j := cleanup.lock_job(p_job);

    IF j.kind <> 'prune' THEN
        RAISE EXCEPTION '% has no manifest to seal', cleanup.job_label(j) USING ERRCODE = 'CU400';
    END IF;
    IF j.phase = 'paused' THEN
        RAISE EXCEPTION '% is paused; resume it before sealing', cleanup.job_label(j)
            USING ERRCODE = 'CU400';
    ELSIF j.phase <> 'collecting' THEN
        RAISE EXCEPTION '% is already sealed or finished; a manifest is sealed once', cleanup.job_label(j)
            USING ERRCODE = 'CU400';
    END IF;

    -- IDs the external-ID rule refuses today but the inventory held before
    -- it changed (migration 013) can never be appended: protected, so
    -- the prune keeps their rows (it cannot know whether they were seen).
    INSERT INTO cleanup.manifest (job_id, external_id, protected)
    SELECT p_job, g.external_id, true FROM cleanup.legacy_ids g
     WHERE g.library_id = j.library_id ORDER BY g.external_id
    ON CONFLICT DO NOTHING;
    -- Protected IDs (C9) are the database's, not the traversal's: the
    -- expected count is compared with the seen ones.
    SELECT count(*) FILTER (WHERE NOT protected), count(*) FILTER (WHERE protected)
      INTO actual, n_protected FROM cleanup.manifest WHERE job_id = p_job;
    IF actual <> p_expected THEN
        RAISE EXCEPTION 'seal refused: expected % unique IDs but the manifest of job % holds %; nothing changed',
            p_expected, p_job, actual
            USING ERRCODE = 'CU402',
                  HINT = 'seal only after a complete traversal, with its unique count';
    END IF;

    PERFORM cleanup.lock_libraries(ARRAY[j.library_id]);
    PERFORM cleanup.take_admission('library', j.library_id, j.id);
    IF cleanup.failpoints_on() THEN
        PERFORM cleanup.failpoint('seal');
    END IF;

    UPDATE cleanup.jobs
       SET phase = 'draining', expected_count = p_expected, manifest_count = actual, protected = n_protected,
           high_water_id = (SELECT coalesce(max(id), 0) FROM inventory.items WHERE library_id = j.library_id),
           total_estimate = cleanup.library_item_count(j.library_id),
           -- T7: the rows in scope at the seal, under the fence (see job_create).
           scope_count = cleanup.library_item_count(j.library_id),
           cursor_library_id = j.library_id, cursor_id = 0, pass_no = 1,
           -- The first pass walks external-ID order (migration 012).
           key_cursor = '', key_bound = NULL, key_bound_end = false,
           -- A busy answer an earlier seal got (its holder, T3) is over.
           blocked_since = NULL, blocked_by = NULL,
           sealed_at = now(), updated_at = now()
     WHERE id = p_job
    RETURNING * INTO j;
    PERFORM cleanup.log_event(j.id, 'sealed',
        format('sealed job %s with %s IDs (%s more protected: written while collecting); library %s fenced, high-water id %s',
               j.id, actual, n_protected, j.library_id, j.high_water_id));
    RETURN j;
END $$;

-- pause / resume / cancel (C8). Collecting and paused jobs pause,
-- resume and cancel. A draining or finalizing job cancels only while it
-- has deleted nothing (a removal or a sealed prune is not a
-- point of no return until its first deletion): its admission reopens,
-- its claims are released, and the cancel is audited; after its first
-- domain mutation the refusal says how many rows are gone, and the job
-- only goes forward.
CREATE OR REPLACE FUNCTION cleanup.job_transition(p_job bigint, p_action text)
RETURNS cleanup.jobs LANGUAGE plpgsql
SET lock_timeout = '10s'
AS $$
DECLARE
    j      cleanup.jobs;
    v_from text;
    v_gone bigint;
    l      bigint;
BEGIN
    IF p_action = 'cancel' THEN
        -- L1 before the job row: a draining job's cancel reopens admission
        -- under the engine's locks, as a step would.
        SELECT * INTO j FROM cleanup.jobs WHERE id = p_job;
        IF FOUND AND j.phase IN ('draining', 'finalizing') THEN
            PERFORM cleanup.lock_tables_nowait(format('cancelling job %s', p_job), ARRAY['inventory.items'::regclass]);
            PERFORM cleanup.lock_coordinator(j.server_id);
        END IF;
    END IF;
    j := cleanup.lock_job(p_job);
    IF p_action IN ('pause', 'resume') THEN
        -- A pause moves a collecting job to paused, a resume back.
        v_from := CASE p_action WHEN 'pause' THEN 'collecting' ELSE 'paused' END;
        IF j.phase IN ('draining', 'finalizing') THEN
            RAISE EXCEPTION 'cannot % %: only % jobs %', p_action, cleanup.job_label(j), v_from, p_action
                USING ERRCODE = 'CU400',
                      HINT = CASE p_action WHEN 'pause' THEN 'a draining job is idle between steps; stop stepping it'
                             ELSE format('a draining job resumes by stepping: cleanupctl job run %s', j.id) END;
        ELSIF j.phase <> v_from THEN
            RAISE EXCEPTION 'cannot % %: only % jobs %', p_action, cleanup.job_label(j), v_from, p_action
                USING ERRCODE = 'CU400';
        END IF;
        UPDATE cleanup.jobs
           SET phase = CASE p_action WHEN 'pause' THEN 'paused' ELSE 'collecting' END,
               blocked_since = NULL, blocked_by = NULL, updated_at = now()
         WHERE id = p_job RETURNING * INTO j;
    ELSIF p_action = 'cancel' THEN
        IF j.phase IN ('draining', 'finalizing') THEN
            v_gone := j.deleted + j.retries_deleted + j.previews_deleted + j.collections_deleted
                      + j.sync_status_deleted + j.history_detached + j.libraries_deleted + j.servers_deleted;
            IF v_gone > 0 THEN
                RAISE EXCEPTION 'cannot cancel %: deletion has started (% rows gone: % items, % dependent records, % parents), so recovery resumes forward',
                    cleanup.job_label(j), v_gone, j.deleted,
                    j.retries_deleted + j.previews_deleted + j.collections_deleted + j.sync_status_deleted
                        + j.history_detached,
                    j.libraries_deleted + j.servers_deleted
                    USING ERRCODE = 'CU400',
                          HINT = format('finish it with: cleanupctl job run %s', j.id);
            END IF;
            -- Nothing deleted yet: the fence comes down (A2's locks, without
            -- waiting: an admitted writer in flight makes this busy).
            PERFORM cleanup.release_claims(p_job);
            IF j.kind = 'remove-server' THEN
                PERFORM cleanup.lock_parent_row('server admission', j.server_id);
                UPDATE cleanup.server_admission SET state = 'open', job_id = NULL, changed_at = now()
                 WHERE server_id = j.server_id AND job_id = j.id;
                FOR l IN SELECT a.library_id FROM cleanup.library_admission a
                          WHERE a.server_id = j.server_id AND a.job_id = j.id ORDER BY a.library_id LOOP
                    PERFORM cleanup.lock_parent_row('library admission', l);
                END LOOP;
            ELSE
                PERFORM cleanup.lock_parent_row('library admission', j.library_id);
            END IF;
            UPDATE cleanup.library_admission SET state = 'open', job_id = NULL, collecting_job = NULL, changed_at = now()
             WHERE job_id = j.id;
            DELETE FROM cleanup.job_retained WHERE job_id = j.id;
            DELETE FROM cleanup.job_departures WHERE job_id = j.id;
            UPDATE cleanup.jobs SET phase = 'cancelled', updated_at = now(), finished_at = now(),
                                    blocked_since = NULL, blocked_by = NULL
             WHERE id = p_job RETURNING * INTO j;
            PERFORM cleanup.audit_engine(j.id, 'cancel',
                format('cancelled job %s before its first deletion; %s %s admits writes again', j.id,
                       CASE WHEN j.kind = 'remove-server' THEN 'server' ELSE 'library' END,
                       coalesce(j.library_id, j.server_id)));
        ELSIF j.phase NOT IN ('collecting', 'paused') THEN
            RAISE EXCEPTION 'cannot cancel %: it has already ended', cleanup.job_label(j)
                USING ERRCODE = 'CU400';
        ELSE
            UPDATE cleanup.jobs SET phase = 'cancelled', updated_at = now(), finished_at = now()
             WHERE id = p_job RETURNING * INTO j;
            -- T2: a job's claims end with it.
            PERFORM cleanup.release_claims(p_job);
            -- Writes into the library are no longer protected for this job
            -- (waits for admitted writes in flight, within lock_timeout).
            UPDATE cleanup.library_admission SET collecting_job = NULL, changed_at = now()
             WHERE library_id = j.library_id AND collecting_job = j.id;
        END IF;
    ELSE
        RAISE EXCEPTION 'unknown action %', p_action USING ERRCODE = 'CU101';
    END IF;
    PERFORM cleanup.log_event(j.id, p_action, format('%s: job %s is now %s', p_action, j.id, j.phase));
    RETURN j;
END $$;
