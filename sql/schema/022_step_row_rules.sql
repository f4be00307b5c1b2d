-- 022_step_row_rules: the job and step rows' bounds and identities in one
-- CHECK a table, kept by a PL/pgSQL function (docs/benchmarks.md, "The
-- engine above its floor, counted").
--
-- PostgreSQL prepares a table's CHECK expressions once per statement that
-- writes it: each stored expression read back (stringToNode), folded and
-- compiled. A step writes the job row and inserts its step row, and the
-- two tables held 24 CHECK constraints (20 KB of stored expressions):
-- 790k instructions a step (callgrind), 34% of all the engine does a
-- prune step beyond the floor prototype (bench/prune_floor.sh, COUNT=1).
-- One CHECK a table calling a function is a short stored expression; the
-- function's plan is cached by the session, its expression compiled once
-- a transaction.
--
-- The rules are the same, each under its old constraint's name: a row
-- that breaks one is refused with check_violation (23514), as before,
-- and the message names the rule and the row's values. NULL passes as it
-- did (a CHECK refuses only false). The functions pin their search_path
-- (T5). Written to apply again over its own result. Each function writes
-- its rules twice: once as one short expression (compiled once a
-- transaction, the path of every row) and once in the CASE that names the
-- broken rule (only for a refused row, whose format() calls would
-- otherwise be compiled in every transaction); the two lists must stay the
-- same, and test_D2_S7_step_rows_keep_every_rule_in_one_check breaks each
-- rule and checks the name.
--
-- NOT VALID: every row already there was checked against the same rules
-- by the constraints this replaces (each was validated when added), so
-- the upgrade does not read cleanup.job_steps again, a function call a
-- row, under the table's exclusive lock (a fleet's step records run to
-- millions before `cleanupctl purge`). Every insert and update is
-- checked, as before.
CREATE OR REPLACE FUNCTION cleanup.job_row_rules(j cleanup.jobs)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    broken text;
BEGIN
    IF coalesce(j.kind IN ('prune', 'remove-library', 'remove-server')
                AND j.mode IN ('bounded', 'single-transaction')
                AND j.phase IN ('collecting', 'paused', 'draining', 'finalizing', 'completed', 'cancelled')
                AND (j.kind = 'remove-server' OR j.library_id IS NOT NULL)
                AND (j.mode = 'bounded' OR j.kind = 'remove-library')
                AND j.examined = j.visited + j.kept
                AND j.visited + j.released + j.moved_early + j.absent_early
                    = j.deleted + j.moved + j.absent + j.retained + j.claimed, true) THEN
        RETURN true;
    END IF;
    -- Only for a row that breaks a rule: name the first one it breaks.
    broken := CASE
        WHEN NOT coalesce(j.kind IN ('prune', 'remove-library', 'remove-server'), true)
            THEN format('jobs_kind_check: kind %s', j.kind)
        WHEN NOT coalesce(j.mode IN ('bounded', 'single-transaction'), true)
            THEN format('jobs_mode_check: mode %s', j.mode)
        WHEN NOT coalesce(j.phase IN ('collecting', 'paused', 'draining', 'finalizing', 'completed', 'cancelled'), true)
            THEN format('jobs_phase_check: phase %s', j.phase)
        WHEN NOT coalesce(j.kind = 'remove-server' OR j.library_id IS NOT NULL, true)
            THEN format('jobs_check: a %s job names no library', j.kind)
        WHEN NOT coalesce(j.mode = 'bounded' OR j.kind = 'remove-library', true)
            THEN format('jobs_check1: a %s job in mode %s', j.kind, j.mode)
        WHEN NOT coalesce(j.examined = j.visited + j.kept, true)
            THEN format('jobs_examine_identity: examined %s <> visited %s + kept %s', j.examined, j.visited, j.kept)
        ELSE format('jobs_visit_identity: visited %s + released %s + moved_early %s + absent_early %s <> '
                    'deleted %s + moved %s + absent %s + retained %s + claimed %s',
                    j.visited, j.released, j.moved_early, j.absent_early,
                    j.deleted, j.moved, j.absent, j.retained, j.claimed) END;
    RAISE EXCEPTION 'job % breaks %', j.id, broken USING ERRCODE = 'check_violation';
END $$;

CREATE OR REPLACE FUNCTION cleanup.job_step_row_rules(s cleanup.job_steps)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    broken text;
BEGIN
    IF coalesce(least(s.checked, s.claimed, s.released, s.claims_in_flight, s.retries_deleted,
                      s.previews_deleted, s.collections_deleted, s.sync_status_deleted, s.history_detached,
                      s.moved_early, s.absent_early, s.mutations) >= 0, true)
       AND coalesce(s.mutations <= 128 OR s.action = 'single-transaction', true)
       AND coalesce(s.action = 'single-transaction' OR (s.visited <= 128 AND s.examined <= 1024), true)
       AND coalesce(s.examined = s.visited + s.kept, true)
       AND coalesce(s.action = 'single-transaction'
                    OR s.mutations = s.deleted + s.retries_deleted + s.previews_deleted + s.collections_deleted
                                     + s.sync_status_deleted + s.history_detached + s.libraries_deleted
                                     + s.servers_deleted, true)
       AND coalesce(char_length(s.runner_app) <= 64, true)
       AND coalesce(s.visited + s.released + s.moved_early + s.absent_early
                    = s.deleted + s.moved + s.absent + s.retained + s.claimed, true) THEN
        RETURN true;
    END IF;
    -- Only for a row that breaks a rule: name the first one it breaks.
    broken := CASE
        WHEN NOT coalesce(s.mutations >= 0 AND (s.mutations <= 128 OR s.action = 'single-transaction'), true)
            THEN format('job_steps_mutation_budget: %s mutations in a %s step (at most 128)', s.mutations, s.action)
        WHEN NOT coalesce(s.action = 'single-transaction' OR (s.visited <= 128 AND s.examined <= 1024), true)
            THEN format('job_steps_row_budget: visited %s (at most 128), examined %s (at most 1024)',
                        s.visited, s.examined)
        WHEN NOT coalesce(s.examined = s.visited + s.kept, true)
            THEN format('job_steps_examine_identity: examined %s <> visited %s + kept %s',
                        s.examined, s.visited, s.kept)
        WHEN NOT coalesce(s.action = 'single-transaction'
                          OR s.mutations = s.deleted + s.retries_deleted + s.previews_deleted + s.collections_deleted
                                           + s.sync_status_deleted + s.history_detached + s.libraries_deleted
                                           + s.servers_deleted, true)
            THEN format('job_steps_mutation_identity: mutations %s <> the rows deleted and detached', s.mutations)
        WHEN NOT coalesce(char_length(s.runner_app) <= 64, true)
            THEN format('job_steps_runner_app_length: runner_app of %s characters (at most 64)',
                        char_length(s.runner_app))
        WHEN NOT coalesce(s.visited + s.released + s.moved_early + s.absent_early
                          = s.deleted + s.moved + s.absent + s.retained + s.claimed, true)
            THEN format('job_steps_visit_identity: visited %s + released %s + moved_early %s + absent_early %s <> '
                        'deleted %s + moved %s + absent %s + retained %s + claimed %s',
                        s.visited, s.released, s.moved_early, s.absent_early,
                        s.deleted, s.moved, s.absent, s.retained, s.claimed)
        ELSE format('a count below zero (checked %s, claimed %s, released %s, claims_in_flight %s, '
                    'retries_deleted %s, previews_deleted %s, collections_deleted %s, sync_status_deleted %s, '
                    'history_detached %s, moved_early %s, absent_early %s)',
                    s.checked, s.claimed, s.released, s.claims_in_flight, s.retries_deleted, s.previews_deleted,
                    s.collections_deleted, s.sync_status_deleted, s.history_detached, s.moved_early,
                    s.absent_early) END;
    RAISE EXCEPTION 'step % of job % breaks %', s.step_no, s.job_id, broken USING ERRCODE = 'check_violation';
END $$;

DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT x.conrelid::regclass::text AS t, x.conname
               FROM pg_catalog.pg_constraint x
              WHERE x.conrelid IN ('cleanup.jobs'::regclass, 'cleanup.job_steps'::regclass) AND x.contype = 'c'
                AND x.conname NOT IN ('jobs_rules', 'job_steps_rules')
              ORDER BY 1, 2 LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', c.t, c.conname);
    END LOOP;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint x
                    WHERE x.conrelid = 'cleanup.jobs'::regclass AND x.conname = 'jobs_rules') THEN
        ALTER TABLE cleanup.jobs ADD CONSTRAINT jobs_rules CHECK (cleanup.job_row_rules(jobs)) NOT VALID;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint x
                    WHERE x.conrelid = 'cleanup.job_steps'::regclass AND x.conname = 'job_steps_rules') THEN
        ALTER TABLE cleanup.job_steps ADD CONSTRAINT job_steps_rules CHECK (cleanup.job_step_row_rules(job_steps)) NOT VALID;
    END IF;
END $$;
