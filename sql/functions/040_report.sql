-- 040_report: JSON documents for `--json` output and the console, built by
-- PostgreSQL. Reads job rows, admission rows and the per-library count
-- table only: never a COUNT(*) over inventory.

-- Domain mutations by kind (seed 001), one shape for jobs and steps.
CREATE OR REPLACE FUNCTION cleanup.mutations_json(items bigint, retries bigint, previews bigint,
                                                  collections bigint, sync_status bigint, history bigint,
                                                  libraries bigint, servers bigint)
RETURNS jsonb LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
    SELECT jsonb_build_object(
        'items', items, 'item_retries', retries, 'identity_review_previews', previews,
        'library_collections', collections, 'library_sync_status', sync_status,
        'classification_history_detached', history, 'libraries', libraries, 'servers', servers);
END;

-- F3: who runs job J now and how it goes, as keys added to
-- every JOB document (status, jobs, job show, the job commands):
--   runner          the holder of the job's live runner lease
--                   (cleanup.job_runners, 062_runner.sql; the same look-up
--                   as the console's, sql/queries/mon_jobs.sql): pid (the
--                   backend of its last statement), host and os_pid (the
--                   process to stop), application, since (the lease's
--                   start), direct (false behind a pooler), last_step;
--                   null when nobody runs it
--   no_runner       draining or finalizing (its library or server closed to
--                   writers) and nobody runs it
--   closed_at, closed_s  when its library (a remove-server: its server)
--                   was closed to writers, while it is: a prune's seal, a
--                   removal's creation; seconds since
--   last_step_at, last_step_age_s  the end of its newest step, seconds since
--   pace_rows_per_s the current runner's pace: rows settled (deleted, moved,
--                   absent, kept) by its steps (and steps recorded without
--                   their runner) that started in the last 60 s and since
--                   the lease began,
--                   over the time from the first of them to now; null
--                   without a runner or with fewer than 2 such steps
--   eta_s           rows left in scope at that pace (0 when none are left);
--                   null when unknown
-- Reads one job's newest steps by the job_steps key and its lease row; nothing
-- for a finished job but its newest step.
CREATE OR REPLACE FUNCTION cleanup.job_live_json(j cleanup.jobs)
RETURNS jsonb LANGUAGE plpgsql STABLE
-- PL/pgSQL, not SQL, here and in job_json, job_text_columns and
-- step_json: a SQL function with a SET clause (the search_path every
-- engine function pins, 098_privileges.sql) is never inlined, and is
-- parsed and planned again in every statement that calls it, nested calls
-- included: a `cleanupctl jobs` of five jobs took 0.44-0.61 s, a job's
-- document 15-60 ms warm. PL/pgSQL keeps its plans for the session
-- (docs/benchmarks.md, "Reports").
AS $$
BEGIN
    RETURN (SELECT jsonb_build_object(
        'runner', CASE WHEN rn.host IS NULL THEN NULL
                       ELSE jsonb_build_object('pid', rn.pid, 'host', rn.host, 'os_pid', rn.os_pid,
                                               'application', rn.application, 'since', rn.started_at,
                                               'direct', rn.direct, 'last_step', rn.last_step) END,
        'no_runner', j.phase IN ('draining', 'finalizing') AND rn.host IS NULL,
        'closed_at', cl.at,
        'closed_s', round(extract(epoch FROM clock_timestamp() - cl.at)::numeric, 1),
        'last_step_at', ls.end_at,
        'last_step_age_s', round(extract(epoch FROM clock_timestamp() - ls.end_at)::numeric, 1),
        'pace_rows_per_s', round(w.pace::numeric, 1),
        'eta_s', CASE WHEN j.phase NOT IN ('draining', 'finalizing') OR j.total_estimate IS NULL THEN NULL
                      WHEN j.deleted + j.moved + j.absent + j.kept >= j.total_estimate THEN 0
                      WHEN w.pace > 0 THEN round(((j.total_estimate - (j.deleted + j.moved + j.absent + j.kept))
                                                  / w.pace)::numeric, 1) END)
      FROM (SELECT CASE WHEN j.phase IN ('draining', 'finalizing')
                        THEN CASE WHEN j.kind = 'prune' THEN j.sealed_at ELSE j.created_at END END AS at) cl
      LEFT JOIN LATERAL (
            SELECT s.started_at + s.duration_ms * interval '1 millisecond' AS end_at
              FROM cleanup.job_steps s WHERE s.job_id = j.id ORDER BY s.step_no DESC LIMIT 1) ls ON true
      LEFT JOIN LATERAL (
            SELECT r.backend_pid AS pid, r.host, r.os_pid, r.application, r.started_at, r.last_step, r.direct
              FROM cleanup.job_runners r WHERE r.job_id = j.id AND cleanup.runner_live(r)) rn
           ON j.phase NOT IN ('completed', 'cancelled')
      LEFT JOIN LATERAL (
            SELECT CASE WHEN count(*) >= 2 AND clock_timestamp() > min(s.started_at)
                        THEN sum(s.deleted + s.moved + s.absent + s.kept)
                             / extract(epoch FROM clock_timestamp() - min(s.started_at)) END AS pace
              FROM (SELECT deleted, moved, absent, kept, started_at, runner_pid FROM cleanup.job_steps
                     WHERE job_id = j.id ORDER BY step_no DESC LIMIT 2000) s
             WHERE s.started_at > clock_timestamp() - interval '60 seconds'
               AND (s.runner_pid IS NULL OR s.started_at >= rn.started_at)) w
           ON rn.host IS NOT NULL AND j.phase IN ('draining', 'finalizing'));
END $$;

CREATE OR REPLACE FUNCTION cleanup.job_json(j cleanup.jobs)
RETURNS jsonb LANGUAGE plpgsql STABLE
-- A string body, not BEGIN ATOMIC: an SQL-standard body that reads a
-- row type would pin its columns and refuse later migrations (ALTER TABLE
-- ... DROP COLUMN). search_path is pinned by 098; PL/pgSQL keeps its plans
-- (cleanup.job_live_json).
AS $$
BEGIN
    RETURN jsonb_build_object(
        'id', j.id, 'kind', j.kind, 'mode', j.mode,
        'server_id', j.server_id, 'library_id', j.library_id, 'target_name', j.target_name,
        'phase', j.phase, 'step_no', j.step_no, 'pass_no', j.pass_no,
        'examined', j.examined, 'visited', j.visited, 'deleted', j.deleted, 'moved', j.moved, 'absent', j.absent,
        'retained', j.retained, 'kept', j.kept, 'protected', j.protected,
        'libraries_deleted', j.libraries_deleted, 'servers_deleted', j.servers_deleted,
        'manifest_count', j.manifest_count, 'expected_count', j.expected_count,
        'high_water_id', j.high_water_id, 'cursor_library_id', j.cursor_library_id,
        'cursor_id', j.cursor_id, 'check_cursor', j.check_cursor, 'total_estimate', j.total_estimate,
        -- Schema 12: pass 1 of a prune in external-ID order, its cursor
        -- (null: the job walks ids).
        'key_cursor', j.key_cursor,
        'busy_retries', j.busy_retries, 'last_error', j.last_error,
        'last_error_at', j.last_error_at, 'created_by', j.created_by,
        'created_at', j.created_at, 'sealed_at', j.sealed_at,
        'updated_at', j.updated_at, 'finished_at', j.finished_at,
        -- Schema 11: when `cleanupctl purge` removed the job's manifest,
        -- retained rows and step records (null: not purged).
        'purged_at', j.purged_at,
        -- Seed 001: domain mutations by kind and the item claims.
        'mutations_by_kind', cleanup.mutations_json(j.deleted, j.retries_deleted, j.previews_deleted,
                                                    j.collections_deleted, j.sync_status_deleted,
                                                    j.history_detached, j.libraries_deleted, j.servers_deleted),
        'claims', jsonb_build_object('claimed', j.claimed, 'released', j.released,
                                     'in_flight', j.claimed - j.released),
        -- Schema 13 (T7): every row in the job's scope at its seal (a
        -- removal: at its creation) ends in exactly one of deleted, kept,
        -- moved, absent; moved_early and absent_early are the rows that
        -- left the scope before a step reached them (in moved and
        -- absent). accounted = deleted + kept + moved + absent; null
        -- scope for jobs older than schema 13.
        'ledger', jsonb_build_object('scope', j.scope_count,
                                     'accounted', j.deleted + j.kept + j.moved + j.absent,
                                     'moved_early', j.moved_early, 'absent_early', j.absent_early,
                                     'holds', CASE WHEN j.scope_count IS NULL OR j.phase <> 'completed' THEN NULL
                                                   ELSE j.scope_count = j.deleted + j.kept + j.moved + j.absent END),
        -- T3: who holds the job up, as its runner's last busy answer found
        -- (null once a step goes through).
        'blocked', CASE WHEN j.blocked_since IS NULL THEN NULL
                        ELSE jsonb_build_object('since', j.blocked_since, 'holders', coalesce(j.blocked_by, '[]'::jsonb),
                                                'reason', j.last_error) END)
        -- Its runner, last step, pace and ETA, when its library
        -- was closed (cleanup.job_live_json).
        || cleanup.job_live_json(j);
END $$;

-- What job_get.sql and jobs_list.sql add to job J's row for the text
-- output: its JSON document and, from it, who runs it now and how it goes
-- (cleanup.job_live_json); when its runner found it held up (T3), who
-- holds it, as a line of text (cleanup.holders_text).
CREATE OR REPLACE FUNCTION cleanup.job_text_columns(j cleanup.jobs,
    OUT json text, OUT live_runner_pid int, OUT live_runner_host text, OUT live_runner_os_pid int,
    OUT live_runner_app text, OUT live_no_runner boolean, OUT live_closed_s float8,
    OUT live_last_step_age_s float8, OUT live_pace float8, OUT live_eta_s float8, OUT blocked_text text)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    doc jsonb := cleanup.job_json(j);
BEGIN
    json := doc::text;
    live_runner_pid := (doc->'runner'->>'pid')::int;
    live_runner_host := doc->'runner'->>'host';
    live_runner_os_pid := (doc->'runner'->>'os_pid')::int;
    live_runner_app := doc->'runner'->>'application';
    live_no_runner := (doc->>'no_runner')::boolean;
    live_closed_s := (doc->>'closed_s')::float8;
    live_last_step_age_s := (doc->>'last_step_age_s')::float8;
    live_pace := (doc->>'pace_rows_per_s')::float8;
    live_eta_s := (doc->>'eta_s')::float8;
    blocked_text := CASE WHEN j.blocked_since IS NOT NULL THEN cleanup.holders_text(j.blocked_by) END;
END $$;

CREATE OR REPLACE FUNCTION cleanup.step_json(s cleanup.job_steps)
RETURNS jsonb LANGUAGE plpgsql STABLE
-- A string body, not BEGIN ATOMIC: an SQL-standard body that reads a
-- row type would pin its columns and refuse later migrations (ALTER TABLE
-- ... DROP COLUMN). search_path is pinned by 098; PL/pgSQL keeps its plans
-- (cleanup.job_live_json).
AS $$
BEGIN
    RETURN jsonb_build_object(
        'job_id', s.job_id, 'step_no', s.step_no, 'action', s.action, 'pass_no', s.pass_no,
        'library_id', s.library_id, 'cursor_from', s.cursor_from, 'cursor_to', s.cursor_to,
        'examined', s.examined, 'visited', s.visited, 'deleted', s.deleted, 'moved', s.moved, 'absent', s.absent,
        'retained', s.retained, 'kept', s.kept,
        'libraries_deleted', s.libraries_deleted, 'servers_deleted', s.servers_deleted,
        'mutations', s.mutations, 'checked', s.checked, 'check_from', s.check_from, 'check_to', s.check_to,
        'phase_after', s.phase_after,
        'started_at', s.started_at,
        'duration_ms', round(s.duration_ms::numeric, 3),
        'lock_hold_ms', round(s.lock_hold_ms::numeric, 3),
        'parent_lock_ms', round(s.parent_lock_ms::numeric, 3),
        'mutations_by_kind', cleanup.mutations_json(s.deleted, s.retries_deleted, s.previews_deleted,
                                                    s.collections_deleted, s.sync_status_deleted,
                                                    s.history_detached, s.libraries_deleted, s.servers_deleted),
        'claims', jsonb_build_object('claimed', s.claimed, 'released', s.released,
                                     'in_flight', s.claims_in_flight),
        'moved_early', s.moved_early, 'absent_early', s.absent_early,
        -- Who ran the step (schema 10); null for steps recorded before it.
        'runner', CASE WHEN s.runner_pid IS NULL THEN NULL
                       ELSE jsonb_build_object('pid', s.runner_pid, 'application', s.runner_app) END);
END $$;

-- The rows of `cleanupctl status` (text): servers and libraries with
-- their admission, job and cached item count. Functions rather than plain
-- queries so that they carry their own bound (T3): a writer's LOCK TABLE
-- on inventory.libraries made status wait with no end; now 55P03 after
-- 2 s, and the engine names the holder.
CREATE OR REPLACE FUNCTION cleanup.status_servers()
RETURNS TABLE (id bigint, name text, admission text, job_id bigint, item_count bigint, library_count bigint)
LANGUAGE sql STABLE
SET lock_timeout = '2s'
AS $$
    SELECT s.id, s.name, coalesce(sa.state, 'missing'),
           (SELECT j.id FROM cleanup.jobs j
             WHERE j.server_id = s.id AND j.phase NOT IN ('completed', 'cancelled')),
           (SELECT coalesce(sum(st.item_count), 0)::bigint FROM inventory.libraries l
              JOIN cleanup.library_stats st ON st.library_id = l.id WHERE l.server_id = s.id),
           (SELECT count(*) FROM inventory.libraries l WHERE l.server_id = s.id)
      FROM inventory.media_servers s
      LEFT JOIN cleanup.server_admission sa ON sa.server_id = s.id
     ORDER BY s.id
$$;

CREATE OR REPLACE FUNCTION cleanup.status_libraries()
RETURNS TABLE (id bigint, server_id bigint, name text, admission text, job_id bigint, item_count bigint)
LANGUAGE sql STABLE
SET lock_timeout = '2s'
AS $$
    SELECT l.id, l.server_id, l.name, coalesce(la.state, 'missing'), la.job_id,
           coalesce(st.item_count, 0)::bigint
      FROM inventory.libraries l
      LEFT JOIN cleanup.library_admission la ON la.library_id = l.id
      LEFT JOIN (SELECT x.library_id, sum(x.item_count) AS item_count
                   FROM cleanup.library_stats x GROUP BY x.library_id) st ON st.library_id = l.id
     ORDER BY l.server_id, l.id
$$;

-- One job with its recent steps (newest first, at most P_STEPS).
CREATE OR REPLACE FUNCTION cleanup.job_show_json(p_job bigint, p_steps int DEFAULT 20)
RETURNS jsonb LANGUAGE plpgsql STABLE
-- A report never waits long behind a lock (T3): a writer's LOCK TABLE
-- on a table it reads ends it in 55P03 after 2 s.
SET lock_timeout = '2s'
AS $$
DECLARE
    j cleanup.jobs;
BEGIN
    SELECT * INTO j FROM cleanup.jobs WHERE id = p_job;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'job % does not exist', p_job USING ERRCODE = 'CU001';
    END IF;
    RETURN cleanup.job_json(j) || jsonb_build_object(
        'sealed', j.sealed_at IS NOT NULL,
        'steps', coalesce((SELECT jsonb_agg(cleanup.step_json(s) ORDER BY s.step_no DESC)
                             FROM (SELECT * FROM cleanup.job_steps
                                    WHERE job_id = p_job ORDER BY step_no DESC
                                    LIMIT least(greatest(p_steps, 0), 1000)) s), '[]'::jsonb));
END $$;

-- Unfinished jobs and the most recent finished ones (bounded).
CREATE OR REPLACE FUNCTION cleanup.jobs_json(p_limit int DEFAULT 50)
RETURNS jsonb LANGUAGE sql STABLE
-- A report never waits long behind a lock (T3): a writer's LOCK TABLE
-- on a table it reads ends it in 55P03 after 2 s.
SET lock_timeout = '2s'
AS $$
    SELECT coalesce(jsonb_agg(cleanup.job_json(j) ORDER BY j.id DESC), '[]'::jsonb)
      FROM (SELECT * FROM cleanup.jobs WHERE phase NOT IN ('completed', 'cancelled')
            UNION
            SELECT * FROM (SELECT * FROM cleanup.jobs ORDER BY id DESC
                            LIMIT least(greatest(p_limit, 0), 1000)) r) j
$$;

-- Servers with their libraries, admission states, item counts and active
-- jobs, plus the jobs list.
CREATE OR REPLACE FUNCTION cleanup.status_json()
RETURNS jsonb LANGUAGE sql STABLE
-- A report never waits long behind a lock (T3): a writer's LOCK TABLE
-- on a table it reads ends it in 55P03 after 2 s.
SET lock_timeout = '2s'
AS $$
    SELECT jsonb_build_object(
        'schema_version', (SELECT version FROM cleanup.schema_info),
        -- The rows of the text status (status_servers, status_libraries),
        -- each read once, libraries nested under their server.
        'servers', coalesce((
            WITH libs AS (
                SELECT l.server_id,
                       jsonb_agg(jsonb_build_object('id', l.id, 'name', l.name, 'admission', l.admission,
                                                    'item_count', l.item_count, 'job_id', l.job_id)
                                 ORDER BY l.id) AS docs
                  FROM cleanup.status_libraries() l GROUP BY l.server_id)
            SELECT jsonb_agg(jsonb_build_object(
                       'id', s.id, 'name', s.name, 'admission', s.admission, 'job_id', s.job_id,
                       'item_count', s.item_count, 'libraries', coalesce(libs.docs, '[]'::jsonb))
                   ORDER BY s.id)
              FROM cleanup.status_servers() s LEFT JOIN libs ON libs.server_id = s.id), '[]'::jsonb),
        'jobs', cleanup.jobs_json(20),
        -- The plan phase (014_plan.sql): the mode `job create` uses
        -- without --mode, and the validators it asks.
        'default_mode', coalesce((SELECT p.default_mode FROM cleanup.plan_settings p), 'bounded'),
        'validators', coalesce((SELECT jsonb_agg(v.name ORDER BY v.name) FROM cleanup.plan_validators v), '[]'::jsonb))
$$;
