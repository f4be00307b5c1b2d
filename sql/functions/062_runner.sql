-- 062_runner: the runner lease (sql/schema/015_runner_lease.sql; F2;
-- docs/fleet.md, "One runner per job"). core/src/runner.c is the
-- only caller of the definer functions here: it opens the lease, every
-- step renews it in the step's own transaction (cleanup.job_step's
-- p_lease), a heartbeat renews it while the runner waits, and close ends
-- it. Readers (mon_jobs.sql, job_live_json, locks_tree, worker_candidates)
-- see a runner through cleanup.runner_live().

-- True while lease R holds: renewed within its ttl, and, for a direct
-- connection (not through a pooler), its backend still there: same server
-- life (a restart or a failover ends every session of the old one), a
-- backend with that pid that existed when the lease was last renewed.
-- Behind a pooler the backend is a pooled connection's and proves
-- nothing: only the expiry counts.
CREATE OR REPLACE FUNCTION cleanup.runner_live(r cleanup.job_runners)
RETURNS boolean LANGUAGE sql STABLE
AS $$
    SELECT r.job_id IS NOT NULL
       AND r.renewed_at + r.ttl > pg_catalog.clock_timestamp()
       AND CASE WHEN NOT r.direct OR r.backend_pid IS NULL THEN true
                -- Renewed on this server's current life: its backend must be here.
                WHEN r.server_start = pg_catalog.pg_postmaster_start_time()
                THEN EXISTS (SELECT 1 FROM pg_catalog.pg_stat_get_activity(r.backend_pid) a
                              WHERE a.pid = r.backend_pid
                                AND coalesce(a.backend_start <= r.renewed_at, true))
                -- Last renewed before this server (re)started: its session is gone.
                ELSE r.renewed_at >= pg_catalog.pg_postmaster_start_time() END
$$;

-- The lease of P_JOB as text for messages and events: "host:pid (app)".
CREATE OR REPLACE FUNCTION cleanup.runner_label(r cleanup.job_runners)
RETURNS text LANGUAGE sql IMMUTABLE
AS $$ SELECT r.host || ':' || r.os_pid || ' (' || r.application || ')' $$;

-- The answer of runner_open that names holder R: not claimed, who, since
-- when, its last step, how long its lease has left, and its token.
CREATE OR REPLACE FUNCTION cleanup.runner_holder(r cleanup.job_runners)
RETURNS TABLE (claimed boolean, taken_over boolean, holder_host text, holder_os_pid int, holder_app text,
               holder_backend_pid int, holder_client text, holder_direct boolean, holder_started text,
               holder_last_step int, holder_renewed text, holder_expires_s numeric, holder_token bigint)
LANGUAGE sql STABLE
AS $$
    SELECT false, false, r.host, r.os_pid, r.application, r.backend_pid,
           (SELECT coalesce(a.client_hostname, pg_catalog.host(a.client_addr), 'local')
              FROM pg_catalog.pg_stat_get_activity(r.backend_pid) a WHERE a.pid = r.backend_pid),
           r.direct, pg_catalog.to_char(r.started_at, 'YYYY-MM-DD HH24:MI:SS'), r.last_step,
           pg_catalog.to_char(r.renewed_at, 'YYYY-MM-DD HH24:MI:SS'),
           round(extract(epoch FROM r.renewed_at + r.ttl - pg_catalog.clock_timestamp())::numeric, 1), r.token
$$;

-- Opens the lease of P_JOB for the runner P_HOST:P_OS_PID (P_APP), token
-- P_TOKEN. claimed: this runner holds it now (a lease it already held, say
-- after a reconnect, is renewed). Not claimed: the holder's columns name
-- the runner that holds it. A lease past its ttl, or whose direct backend
-- is gone (cleanup.runner_live), is taken over (taken_over, with the old
-- holder's columns), and so is the lease with token P_TAKE_OVER: the
-- caller proved its holder's process gone (same host, no such OS pid).
-- A take-over records "runner lost: HOST:PID (APP), last step N at T" in
-- cleanup.events ("runner started" is cleanup.runner_announce's, after
-- the runner's first committed step: a run refused at its first step
-- writes no event). P_RESUME (a runner that reconnected): only
-- a lease still held with P_TOKEN is renewed; one that was ended (a
-- console stopped the runner) is not taken again: CU470. CU001 for a job
-- that does not exist, CU400 for a finished one.
DROP FUNCTION IF EXISTS cleanup.runner_open(bigint, bigint, text, int, text, boolean, int, bigint, boolean, boolean);
CREATE OR REPLACE FUNCTION cleanup.runner_open(p_job bigint, p_token bigint, p_host text, p_os_pid int, p_app text,
                                               p_direct boolean, p_ttl_s int, p_take_over bigint, p_resume boolean)
RETURNS TABLE (claimed boolean, taken_over boolean, holder_host text, holder_os_pid int, holder_app text,
               holder_backend_pid int, holder_client text, holder_direct boolean, holder_started text,
               holder_last_step int, holder_renewed text, holder_expires_s numeric, holder_token bigint)
LANGUAGE plpgsql
AS $$
DECLARE
    v_phase text;
    r       cleanup.job_runners;
    v_ttl   interval := pg_catalog.make_interval(secs => greatest(1, least(coalesce(p_ttl_s, 60), 3600)));
    v_host  text := left(coalesce(nullif(p_host, ''), 'unknown'), 255);
    v_app   text := left(coalesce(p_app, ''), 64);
    v_lost  boolean := false;
BEGIN
    SELECT j.phase INTO v_phase FROM cleanup.jobs j WHERE j.id = p_job;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'job % does not exist', p_job USING ERRCODE = 'CU001';
    END IF;
    IF v_phase IN ('completed', 'cancelled') THEN
        RAISE EXCEPTION 'job % is %: there is nothing left to run', p_job, v_phase USING ERRCODE = 'CU400';
    END IF;
    LOOP
        -- The holder's step in flight holds the row (its renewal): never
        -- wait for it. What the last committed renewal says is enough to
        -- name a live holder.
        BEGIN
            SELECT * INTO r FROM cleanup.job_runners WHERE job_id = p_job FOR UPDATE NOWAIT;
        EXCEPTION WHEN lock_not_available THEN
            SELECT * INTO r FROM cleanup.job_runners WHERE job_id = p_job;
            RETURN QUERY SELECT * FROM cleanup.runner_holder(r);
            RETURN;
        END;
        EXIT WHEN FOUND;
        IF p_resume THEN
            RAISE EXCEPTION 'lost the runner lease of job %: it was ended while this runner was disconnected '
                            '(stopped from a console, or the job finished)', p_job
                USING ERRCODE = 'CU470', HINT = 'this runner stops; run the job again to resume it';
        END IF;
        INSERT INTO cleanup.job_runners (job_id, token, host, os_pid, application, direct, backend_pid, server_start,
                                         ttl)
        VALUES (p_job, p_token, v_host, p_os_pid, v_app, p_direct, pg_catalog.pg_backend_pid(),
                pg_catalog.pg_postmaster_start_time(), v_ttl)
        ON CONFLICT (job_id) DO NOTHING;
        IF FOUND THEN
            RETURN QUERY SELECT true, false, NULL::text, NULL::int, NULL::text, NULL::int, NULL::text, NULL::boolean,
                                NULL::text, NULL::int, NULL::text, NULL::numeric, NULL::bigint;
            RETURN;
        END IF;
        -- Another runner inserted it meanwhile: read it on the next turn.
    END LOOP;
    IF r.token <> p_token AND cleanup.runner_live(r) AND r.token IS DISTINCT FROM p_take_over THEN
        RETURN QUERY SELECT * FROM cleanup.runner_holder(r);
        RETURN;
    END IF;
    v_lost := r.token <> p_token;
    IF v_lost THEN
        PERFORM cleanup.log_event(p_job, 'runner_lost',
            format('runner lost: %s, last step %s at %s; %s; taken over by %s:%s (%s)',
                   cleanup.runner_label(r), coalesce(r.last_step::text, 'none'),
                   to_char(r.renewed_at, 'YYYY-MM-DD HH24:MI:SS'),
                   CASE WHEN r.token = p_take_over THEN 'its process is gone'
                        WHEN r.renewed_at + r.ttl <= pg_catalog.clock_timestamp()
                        THEN format('its lease expired %s s ago',
                                    round(extract(epoch FROM pg_catalog.clock_timestamp() - (r.renewed_at + r.ttl))::numeric, 1))
                        ELSE 'its connection is gone' END,
                   v_host, p_os_pid, v_app));
    END IF;
    UPDATE cleanup.job_runners
       SET token = p_token, host = v_host, os_pid = p_os_pid, application = v_app, direct = p_direct,
           backend_pid = pg_catalog.pg_backend_pid(), server_start = pg_catalog.pg_postmaster_start_time(),
           started_at = CASE WHEN v_lost THEN pg_catalog.clock_timestamp() ELSE started_at END,
           renewed_at = pg_catalog.clock_timestamp(), ttl = v_ttl
     WHERE job_id = p_job;
    RETURN QUERY
    SELECT true, v_lost, r.host, r.os_pid, r.application, r.backend_pid, NULL::text, r.direct,
           to_char(r.started_at, 'YYYY-MM-DD HH24:MI:SS'), r.last_step, to_char(r.renewed_at, 'YYYY-MM-DD HH24:MI:SS'),
           NULL::numeric, NULL::bigint;
END $$;

-- The answer to a runner whose lease of P_JOB is not its own any more
-- (cleanup.runner_renew, cleanup.runner_step_check): CU470 naming the
-- lease's holder now, or saying it was ended.
CREATE OR REPLACE FUNCTION cleanup.raise_lease_lost(p_job bigint)
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    r cleanup.job_runners;
BEGIN
    SELECT * INTO r FROM cleanup.job_runners WHERE job_id = p_job;
    RAISE EXCEPTION 'lost the runner lease of job %: %', p_job,
        CASE WHEN r.job_id IS NULL THEN 'it was ended (stopped from a console, or the job finished)'
             ELSE 'it is held by ' || cleanup.runner_label(r) || ' now' END
        USING ERRCODE = 'CU470',
              HINT = 'this runner stops; the job goes on under its current runner, or run it again to resume';
END $$;

-- Renews the lease of P_JOB held with P_TOKEN (in a step's transaction, or
-- a waiting runner's heartbeat); P_STEP_NO, when given, is the step that
-- renews it. CU470 when this runner no longer holds it (taken over after
-- it expired, or stopped from a console), naming who holds it now.
CREATE OR REPLACE FUNCTION cleanup.runner_renew(p_job bigint, p_token bigint, p_step_no int)
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE cleanup.job_runners
       SET renewed_at = pg_catalog.clock_timestamp(), backend_pid = pg_catalog.pg_backend_pid(),
           server_start = pg_catalog.pg_postmaster_start_time(), last_step = coalesce(p_step_no, last_step)
     WHERE job_id = p_job AND token = p_token;
    IF FOUND THEN
        RETURN;
    END IF;
    PERFORM cleanup.raise_lease_lost(p_job);
END $$;

-- The job row of a step (cleanup.step_exec), locked FOR UPDATE SKIP
-- LOCKED, with the step's lease check in the same statement: with P_LEASE
-- the lease renewed (CU470 when lost); without one (a caller that opened no
-- lease: SQL by hand, the isolation specs) the step is refused while
-- another runner's lease is live (CU471), so a hand-run step can never
-- take a step number from a runner. The lease's answer comes first: a
-- lost or foreign lease is refused even while another transaction holds
-- the job row (busy otherwise: cleanup.raise_job_busy). An assignment, not
-- a PERFORM, at its caller: the step pays one statement for both.
-- (Dropped first: before it locked the job row it returned void.)
DROP FUNCTION IF EXISTS cleanup.runner_step_check(bigint, bigint, int);
CREATE OR REPLACE FUNCTION cleanup.runner_step_check(p_job bigint, p_lease bigint, p_step_no int)
RETURNS cleanup.jobs LANGUAGE plpgsql
AS $$
DECLARE
    v record;                  -- the job row (NULL: held) and the lease's answer
BEGIN
    IF p_lease IS NOT NULL THEN
        WITH u AS (UPDATE cleanup.job_runners
                      SET renewed_at = pg_catalog.clock_timestamp(), backend_pid = pg_catalog.pg_backend_pid(),
                          server_start = pg_catalog.pg_postmaster_start_time(),
                          last_step = coalesce(p_step_no, last_step)
                    WHERE job_id = p_job AND token = p_lease
                   RETURNING 1)
        SELECT (SELECT x FROM cleanup.jobs x WHERE x.id = p_job FOR UPDATE SKIP LOCKED) AS j,
               EXISTS (SELECT FROM u) AS renewed, NULL::cleanup.job_runners AS r
          INTO v;
        IF NOT v.renewed THEN
            PERFORM cleanup.raise_lease_lost(p_job);
        END IF;
    ELSE
        SELECT (SELECT x FROM cleanup.jobs x WHERE x.id = p_job FOR UPDATE SKIP LOCKED) AS j,
               NULL::boolean AS renewed,
               (SELECT r FROM cleanup.job_runners r WHERE r.job_id = p_job) AS r
          INTO v;
        IF (v.r).job_id IS NOT NULL AND cleanup.runner_live(v.r) THEN
            RAISE EXCEPTION 'job % is already being run by %', p_job, cleanup.runner_label(v.r)
                USING ERRCODE = 'CU471', HINT = 'one runner per job: stop that runner first, or wait for it to end';
        END IF;
    END IF;
    IF (v.j).id IS NULL THEN
        PERFORM cleanup.raise_job_busy(p_job);
    END IF;
    RETURN v.j;
END $$;

-- Records "runner started: HOST:PID (APP), from step N" for the lease of
-- P_JOB held with P_TOKEN: called once by a run (job run, the worker)
-- after its first committed step, so that every console and the audit
-- see a runner appear, and a run refused before any step leaves no row.
-- Nothing when the lease is not this runner's any more.
CREATE OR REPLACE FUNCTION cleanup.runner_announce(p_job bigint, p_token bigint)
RETURNS boolean LANGUAGE plpgsql
AS $$
DECLARE
    r cleanup.job_runners;
BEGIN
    SELECT * INTO r FROM cleanup.job_runners WHERE job_id = p_job AND token = p_token;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM cleanup.log_event(p_job, 'runner',
        format('runner started: %s, from step %s', cleanup.runner_label(r), coalesce(r.last_step::text, 'none')));
    RETURN true;
END $$;

-- Ends the lease of P_JOB held with P_TOKEN; false when this runner did
-- not hold it (lost meanwhile). P_ANNOUNCE records "runner ended" (the
-- caller passes it when it announced the start).
CREATE OR REPLACE FUNCTION cleanup.runner_close(p_job bigint, p_token bigint, p_announce boolean, p_reason text)
RETURNS boolean LANGUAGE plpgsql
AS $$
DECLARE
    r cleanup.job_runners;
BEGIN
    DELETE FROM cleanup.job_runners WHERE job_id = p_job AND token = p_token RETURNING * INTO r;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF p_announce THEN
        PERFORM cleanup.log_event(p_job, 'runner',
            format('runner ended: %s, last step %s (%s)', cleanup.runner_label(r), coalesce(r.last_step::text, 'none'),
                   left(coalesce(p_reason, 'done'), 200)));
    END IF;
    RETURN true;
END $$;

-- Stops the runner of P_JOB from a console (kill-runner): only when its
-- lease is live, on a direct connection, and its backend is P_PID, proven
-- by the lease (same server life, a backend with that pid that existed at
-- the last renewal). The lease is ended (the runner is refused at its next
-- step: CU470) and "runner stopped" recorded; the caller then terminates
-- the backend in its own rights (sql/queries/runner_terminate.sql), so its
-- step in flight rolls back. reason: 'stopped', 'none' (no live lease),
-- 'other' (another backend holds it now), 'pooled' (its backend is a
-- pooler's: never terminated).
CREATE OR REPLACE FUNCTION cleanup.runner_stop(p_job bigint, p_pid int, p_by text)
RETURNS TABLE (reason text, holder_pid int, holder text)
LANGUAGE plpgsql
AS $$
DECLARE
    r cleanup.job_runners;
    v_in_step boolean := false;
BEGIN
    BEGIN
        SELECT * INTO r FROM cleanup.job_runners WHERE job_id = p_job FOR UPDATE NOWAIT;
    EXCEPTION WHEN lock_not_available THEN
        -- The runner's step in flight holds its lease row (renewed in the
        -- step's transaction; a stuck step holds it as long as it is
        -- stuck): the lease as last committed, the row left alone. The
        -- caller's pg_terminate_backend rolls that step back, and a lease
        -- whose backend is gone is not live (runner_live): K lands even
        -- mid-step (it waited for the lock and answered busy).
        SELECT * INTO r FROM cleanup.job_runners WHERE job_id = p_job;
        v_in_step := true;
    END;
    IF NOT FOUND OR NOT cleanup.runner_live(r) THEN
        RETURN QUERY SELECT 'none'::text, NULL::int, NULL::text;
        RETURN;
    END IF;
    IF NOT r.direct THEN
        RETURN QUERY SELECT 'pooled'::text, r.backend_pid, cleanup.runner_label(r);
        RETURN;
    END IF;
    IF r.backend_pid IS DISTINCT FROM p_pid OR r.server_start IS DISTINCT FROM pg_catalog.pg_postmaster_start_time()
       OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_get_activity(r.backend_pid) a
                       WHERE a.pid = r.backend_pid AND a.backend_start <= r.renewed_at) THEN
        RETURN QUERY SELECT 'other'::text, r.backend_pid, cleanup.runner_label(r);
        RETURN;
    END IF;
    IF NOT v_in_step THEN
        DELETE FROM cleanup.job_runners WHERE job_id = p_job;
    END IF;
    PERFORM cleanup.log_event(p_job, 'runner_lost',
        format('runner stopped%s: %s, backend %s, last step %s; by %s',
               CASE WHEN v_in_step THEN ' inside a step (it rolls back)' ELSE '' END, cleanup.runner_label(r), r.backend_pid,
               coalesce(r.last_step::text, 'none'), left(coalesce(p_by, session_user::text), 200)));
    RETURN QUERY SELECT 'stopped'::text, r.backend_pid, cleanup.runner_label(r);
END $$;
