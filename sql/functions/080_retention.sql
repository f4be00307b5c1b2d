-- 080_retention: `cleanupctl purge`, the bounded purge of what finished
-- jobs leave behind (docs/scaling.md). A finished job
-- (completed or cancelled) never changes again, so its manifest, its step
-- records and its retained rows are history: they grow with the work done
-- (one manifest row per seen ID, one step record per step) and nothing
-- reads them but the console's step history, `job show` and a replay.
-- Each call is one transaction that deletes at most P_BUDGET rows, so a
-- purge of a ten-million-ID manifest never holds anything for long; the
-- job row stays, with purged_at set once nothing of it is left.
-- cleanup.audit is never purged here: the operators' trail is kept until a
-- DBA decides otherwise.

-- The cutoff of a purge of what finished P_OLDER_THAN ago (zero or more:
-- CU101 otherwise).
CREATE OR REPLACE FUNCTION cleanup.purge_cutoff(p_older_than interval)
RETURNS timestamptz LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF p_older_than IS NULL OR p_older_than < interval '0' THEN
        RAISE EXCEPTION 'older-than % is not valid: it must be zero or more', coalesce(p_older_than::text, 'NULL')
            USING ERRCODE = 'CU101';
    END IF;
    RETURN now() - p_older_than;
END $$;

-- One bounded purge transaction. Picks the oldest finished, unpurged job
-- that finished at least P_OLDER_THAN ago and that no other session holds
-- (FOR UPDATE SKIP LOCKED: two purges never work on one job and neither
-- waits), deletes at most P_BUDGET rows of its manifest, then its
-- retained rows, then its step records, and marks the job purged when
-- none are left. Then, with what is left of the budget, events older than
-- P_OLDER_THAN (oldest first).
-- Returns {"job_id", "manifest", "retained", "steps", "job_purged",
-- "events", "more"}: "more" is false once a call found nothing to do.
CREATE OR REPLACE FUNCTION cleanup.purge_step(p_older_than interval, p_budget int)
RETURNS jsonb LANGUAGE plpgsql
AS $$
DECLARE
    j          cleanup.jobs;
    v_cutoff   timestamptz;
    v_left     int;
    v_manifest int := 0;
    v_retained int := 0;
    v_steps    int := 0;
    v_events   int := 0;
    v_purged   boolean := false;
    v_found    boolean;
    v_done     int[] := '{}'::int[];
    t          regclass;
    n          int;
BEGIN
    v_cutoff := cleanup.purge_cutoff(p_older_than);
    IF p_budget IS NULL OR p_budget < 1 OR p_budget > 10000 THEN
        RAISE EXCEPTION 'purge budget % is not valid: it must be 1 to 10000 rows a transaction',
                        coalesce(p_budget::text, 'NULL')
            USING ERRCODE = 'CU101';
    END IF;
    v_left := p_budget;

    SELECT * INTO j FROM cleanup.jobs
     WHERE phase IN ('completed', 'cancelled') AND purged_at IS NULL AND finished_at <= v_cutoff
     ORDER BY finished_at, id
     LIMIT 1
       FOR UPDATE SKIP LOCKED;
    v_found := FOUND;

    IF v_found THEN
        -- The job's manifest, retained rows and step records, in that
        -- order, while budget is left; by ctid, from a bounded read of the
        -- job's own index range: each statement touches at most v_left rows.
        FOREACH t IN ARRAY ARRAY['cleanup.manifest', 'cleanup.job_retained', 'cleanup.job_steps']::regclass[] LOOP
            EXIT WHEN v_left <= 0;
            EXECUTE pg_catalog.format('DELETE FROM %s WHERE ctid = ANY (ARRAY(SELECT ctid FROM %s WHERE job_id = $1 LIMIT $2))',
                                      t, t)
               USING j.id, v_left;
            GET DIAGNOSTICS n = ROW_COUNT;
            v_done := v_done || n;
            v_left := v_left - n;
        END LOOP;
        v_manifest := coalesce(v_done[1], 0);
        v_retained := coalesce(v_done[2], 0);
        v_steps := coalesce(v_done[3], 0);
        -- Budget left over: every table gave fewer rows than it was asked
        -- for, so nothing of the job is left.
        IF v_left > 0 THEN
            UPDATE cleanup.jobs SET purged_at = now() WHERE id = j.id;
            v_purged := true;
            INSERT INTO cleanup.events (job_id, kind, message)
            VALUES (j.id, 'purged',
                    format('purged job %s (%s of %s %s, finished %s): manifest, retained rows and step records',
                           j.id, j.kind, CASE WHEN j.library_id IS NULL THEN 'server' ELSE 'library' END,
                           coalesce(j.library_id, j.server_id),
                           to_char(j.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI "UTC"')));
            v_left := v_left - 1;
        END IF;
    END IF;

    -- Events: the oldest first, by id (ids grow with time). A bounded read
    -- of the oldest v_left ids, of which those older than the cutoff go;
    -- when the oldest event is newer than the cutoff nothing is old.
    IF v_left > 0 THEN
        DELETE FROM cleanup.events
         WHERE id = ANY (ARRAY(SELECT id FROM cleanup.events ORDER BY id LIMIT v_left))
           AND at < v_cutoff;
        GET DIAGNOSTICS v_events = ROW_COUNT;
    END IF;

    RETURN jsonb_build_object('job_id', CASE WHEN v_found THEN j.id END,
                              'kind', CASE WHEN v_found THEN j.kind END,
                              'target_name', CASE WHEN v_found THEN j.target_name END,
                              'finished_at', CASE WHEN v_found THEN j.finished_at END,
                              'manifest', v_manifest, 'retained', v_retained, 'steps', v_steps,
                              'job_purged', v_purged, 'events', v_events,
                              'more', v_found OR v_events > 0);
END $$;

-- What a purge would remove, without removing anything (`purge
-- --dry-run`): the finished, unpurged jobs older than P_OLDER_THAN, oldest
-- first, at most P_LIMIT of them, with their manifest and step counts from
-- the job rows (not counted), how many such jobs there are, and how many
-- events are older (among the oldest 1,000,001: "events_capped" says
-- when there may be more).
CREATE OR REPLACE FUNCTION cleanup.purge_plan(p_older_than interval, p_limit int)
RETURNS jsonb LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_cutoff timestamptz;
    v_events bigint;
BEGIN
    v_cutoff := cleanup.purge_cutoff(p_older_than);
    -- The oldest 1,000,001 events by id (ids grow with time; there is no
    -- index on "at"), so a dry run reads a bounded number of rows.
    SELECT count(*) INTO v_events
      FROM (SELECT at FROM cleanup.events ORDER BY id LIMIT 1000001) e
     WHERE e.at < v_cutoff;
    RETURN jsonb_build_object(
        'jobs', coalesce((SELECT jsonb_agg(jsonb_build_object(
                                     'job_id', j.id, 'kind', j.kind, 'target_name', j.target_name,
                                     'phase', j.phase, 'finished_at', j.finished_at,
                                     'manifest', j.manifest_count, 'steps', j.step_no)
                                   ORDER BY j.finished_at, j.id)
                            FROM (SELECT * FROM cleanup.jobs
                                   WHERE phase IN ('completed', 'cancelled') AND purged_at IS NULL
                                     AND finished_at <= v_cutoff
                                   ORDER BY finished_at, id
                                   LIMIT least(greatest(p_limit, 0), 1000)) j), '[]'::jsonb),
        'jobs_total', (SELECT count(*) FROM cleanup.jobs
                        WHERE phase IN ('completed', 'cancelled') AND purged_at IS NULL
                          AND finished_at <= v_cutoff),
        'events', least(v_events, 1000000), 'events_capped', v_events > 1000000);
END $$;
