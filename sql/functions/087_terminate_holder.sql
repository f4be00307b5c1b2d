-- 087_terminate_holder: end a backend that holds up a cleanup job (issue
-- 21, item 1): the console's confirmed, audited "terminate this holder".
--
-- The operator saw a holder (the locks panel, a busy footer) and confirmed
-- its pid. Between the dialog and the call the holder may have committed
-- and the pid may now be an unrelated session, so the check is made again
-- here, in the statement that terminates: the pid is ended only when, at
-- this moment,
--   1. a cleanupctl job's session (application_name cleanupctl:job:<id>:*)
--      waits for a heavyweight lock the pid holds (pg_blocking_pids), or
--   2. an unfinished job that must go forward (draining, finalizing),
--      that waits for its seal (collecting: the seal needs the library's
--      admission row, which an admitted writer's open transaction holds,
--      and answers busy without waiting or recording anything), or that a
--      busy answer held up (cleanup.jobs.blocked_since, or a busy event in
--      the last 10 minutes) is held up by the pid now (cleanup.job_blockers:
--      the tables, job row, engine locks, admission, count and item rows it
--      needs).
-- Anything else is refused, and every call, refused or done, writes one
-- row of cleanup.audit (action terminate-holder) naming the holder as it
-- was: pid, role, application, client, state, transaction age and what it
-- holds.
--
-- pg_terminate_backend runs with the caller's rights (terminate_holder is
-- not a definer function): ending another role's session needs that role,
-- pg_signal_backend or a superuser (docs/roles.md), a decision left to
-- the DBA. The check reads the engine's tables as cleanup_owner
-- (holder_check is SECURITY DEFINER, 098_privileges.sql). A read-only
-- connection (cleanupctl console --readonly) is refused before anything.

-- What P_PID holds up now: the job (-1 when none), the words, and the
-- holder as holders_json's object (NULL when P_PID is no client backend of
-- this database).
CREATE OR REPLACE FUNCTION cleanup.holder_check(p_pid int, OUT job_id bigint, OUT what text, OUT holder jsonb)
RETURNS record LANGUAGE plpgsql STABLE
-- Never a waiter itself (as job_blockers).
SET lock_timeout = '200ms'
AS $$
DECLARE
    r record;
    h jsonb;
BEGIN
    job_id := -1;
    what := NULL;
    holder := NULL;
    IF p_pid IS NULL OR p_pid = pg_catalog.pg_backend_pid()
       OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a
                       WHERE a.pid = p_pid AND a.datname = pg_catalog.current_database()
                         AND a.backend_type = 'client backend') THEN
        RETURN;
    END IF;
    -- 1. A job's session waits for a lock P_PID holds.
    SELECT a.pid, a.application_name INTO r
      FROM pg_catalog.pg_stat_activity a
     WHERE a.datname = pg_catalog.current_database()
       AND a.application_name ~ '^cleanupctl:job:[0-9]{1,18}(:|$)'
       AND a.wait_event_type = 'Lock'
       AND p_pid = ANY (pg_catalog.pg_blocking_pids(a.pid))
     ORDER BY a.pid LIMIT 1;
    IF FOUND THEN
        job_id := pg_catalog.split_part(r.application_name, ':', 3)::bigint;
        what := pg_catalog.format('the lock that backend %s (%s) waits for', r.pid, r.application_name);
    ELSE
        -- 2. A job held up by P_PID (the first 32 such jobs): one that must
        -- go forward (draining or finalizing: its library is closed to
        -- writers), one whose seal it holds up (collecting), one marked
        -- held up, or an unfinished one with a busy
        -- answer in the last 10 minutes (among the newest 5,000 events: a
        -- runner that finds the job row itself locked cannot mark it,
        -- job_note_busy, and a single `job step` marks nothing).
        FOR r IN SELECT j.id FROM cleanup.jobs j
                  WHERE j.finished_at IS NULL
                    AND (j.phase IN ('collecting', 'draining', 'finalizing') OR j.blocked_since IS NOT NULL
                         OR j.id IN (SELECT ev.job_id FROM cleanup.events ev
                                      WHERE ev.id > (SELECT coalesce(max(x.id), 0) - 5000 FROM cleanup.events x)
                                        AND ev.kind = 'busy' AND ev.at > pg_catalog.now() - interval '10 minutes'))
                  ORDER BY j.id LIMIT 32 LOOP
            SELECT e.value INTO h
              FROM pg_catalog.jsonb_array_elements(cleanup.job_blockers(r.id)) AS e
             WHERE (e.value->>'pid')::int = p_pid;
            IF h IS NOT NULL THEN
                job_id := r.id;
                what := pg_catalog.format('%s, which job %s waits for', h->>'holds', r.id);
                EXIT;
            END IF;
        END LOOP;
    END IF;
    holder := cleanup.holders_json(ARRAY[p_pid], coalesce(what, 'nothing a cleanup job waits for'))->0;
END $$;

-- Terminates backend P_PID if it holds up a cleanup job now (above), and
-- records the outcome in cleanup.audit: P_OS_USER and P_CONFIRMATION as
-- the console's other actions record them. One row: terminated (the
-- backend ended within 5 s), refused (nothing was done), the job it held
-- up (-1: none), the outcome as recorded, the audit row's id.
CREATE OR REPLACE FUNCTION cleanup.terminate_holder(p_pid int, p_os_user text, p_confirmation text,
                                                    OUT terminated boolean, OUT refused boolean, OUT job_id bigint,
                                                    OUT outcome text, OUT audit_id bigint)
RETURNS record LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    c record;
    v_who text;
BEGIN
    IF pg_catalog.current_setting('transaction_read_only') = 'on' THEN
        RAISE EXCEPTION 'terminate-holder needs a read-write connection: a read-only console ends no backend'
            USING ERRCODE = '25006';
    END IF;
    SELECT * INTO c FROM cleanup.holder_check(p_pid);
    terminated := false;
    refused := true;
    job_id := c.job_id;
    v_who := CASE WHEN c.holder IS NULL THEN NULL ELSE cleanup.holders_text(pg_catalog.jsonb_build_array(c.holder)) END;
    IF c.holder IS NULL THEN
        outcome := pg_catalog.format('refused: pid %s is no other client backend of this database (it has ended, '
                                     'or it is this session); nothing was done', p_pid);
    ELSIF c.job_id < 0 THEN
        outcome := pg_catalog.format('refused: pid %s holds up no cleanup job now; nothing was done: %s', p_pid, v_who);
    ELSE
        BEGIN
            terminated := pg_catalog.pg_terminate_backend(p_pid, 5000);
            refused := false;
            outcome := pg_catalog.format('done: %s: %s; its transaction rolled back',
                                         CASE WHEN terminated THEN 'terminated' ELSE 'asked to terminate (still there after 5 s)' END,
                                         v_who);
        EXCEPTION WHEN insufficient_privilege THEN
            outcome := pg_catalog.format('refused: %s (%s); nothing was done: %s', SQLERRM,
                                         'the role needs pg_signal_backend, membership in the holder''s role, '
                                         'or superuser; docs/roles.md', v_who);
        END;
    END IF;
    audit_id := cleanup.audit_record(p_os_user, 'terminate-holder', nullif(c.job_id, -1), p_confirmation, outcome);
END $$;
