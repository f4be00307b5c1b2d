-- 012_failpoints: named, test-only fault-injection points (S7-S9). A test
-- switches points on for one session with the setting cleanup.failpoints
-- (a comma-separated list of names, e.g. PGOPTIONS='-c
-- cleanup.failpoints=step_after_delete'), holds the point's advisory lock
-- (cleanup.failpoint_key(name)) in a session of its own, waits until a
-- backend is observed waiting on that lock (pg_locks, pg_blocking_pids),
-- and then kills what it wants: the runner (kill -9), the backend
-- (pg_terminate_backend) or the server (pg_ctl stop -m immediate). Nothing
-- is timed. Production never sets cleanup.failpoints; an unset point costs
-- one current_setting() call where the engine checks it inline.
--
-- The points (docs/security.md lists them with what a crash there proves):
--   1 step_after_discovery   a drain or pass step: candidates found, library locks held
--   2 step_after_delete      a drain step: rows deleted, counters and step record not written
--   3 step_before_commit     any step: everything written, the transaction about to commit
--   4 step_before_parent_delete  a finalize step: library empty, parent row locked, not deleted
--   5 seal                   job_seal: library fenced, job not yet draining
--   6 append                 job_append: IDs inserted, job counters not yet updated
--   7 install                the installer's transaction, before it commits
--   8 final_check            a prune's final-check step, a page read
-- ('after_discovery' is the older name of point 1, still accepted.)
-- The runner's own point after a commit and before its reply is handled
-- is in C (core/src/failpoint.c): it stops the process with SIGSTOP.

-- The advisory-lock key of failpoint P_NAME; CU101 for an unknown name.
CREATE OR REPLACE FUNCTION cleanup.failpoint_key(p_name text)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    n int := CASE p_name
        WHEN 'step_after_discovery' THEN 1 WHEN 'after_discovery' THEN 1
        WHEN 'step_after_delete' THEN 2
        WHEN 'step_before_commit' THEN 3
        WHEN 'step_before_parent_delete' THEN 4
        WHEN 'seal' THEN 5
        WHEN 'append' THEN 6
        WHEN 'install' THEN 7
        WHEN 'final_check' THEN 8
    END;
BEGIN
    IF n IS NULL THEN
        RAISE EXCEPTION 'unknown failpoint %', coalesce(quote_literal(p_name), 'NULL')
            USING ERRCODE = 'CU101',
                  HINT = 'see sql/functions/012_failpoints.sql for the names';
    END IF;
    RETURN cleanup.lock_key(9, n);
END $$;

-- Failpoint P_NAME: when this session switched it on, waits (blocking, on
-- purpose) for the point's advisory lock, which the test holds; the lock
-- is then kept to the end of the transaction. Otherwise does nothing.
CREATE OR REPLACE FUNCTION cleanup.failpoint(p_name text)
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    v_on text := current_setting('cleanup.failpoints', true);
BEGIN
    IF (p_name = 'step_after_discovery' AND current_setting('cleanup.test_hook', true) = 'after_discovery')
       OR (v_on <> '' AND p_name = ANY (string_to_array(replace(v_on, ' ', ''), ','))) THEN
        -- A test's wait, not the engine's: no lock_timeout ends it.
        PERFORM set_config('lock_timeout', '0', true);
        PERFORM pg_advisory_xact_lock(cleanup.failpoint_key(p_name));
    END IF;
END $$;

-- Whether this session switched any failpoint on: the engine's hot paths
-- test this (an inlined expression) before calling cleanup.failpoint().
CREATE OR REPLACE FUNCTION cleanup.failpoints_on()
RETURNS boolean LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT coalesce(current_setting('cleanup.failpoints', true), '') <> ''
        OR coalesce(current_setting('cleanup.test_hook', true), '') <> '';
END;

-- Key of the hook's advisory lock under its older name (isolation specs).
CREATE OR REPLACE FUNCTION cleanup.test_hook_key()
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT cleanup.lock_key(9, 1);
END;
