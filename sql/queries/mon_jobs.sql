-- Console: unfinished jobs and the $1 most recent ones, newest first. Job
-- rows carry the progress; inventory is never scanned. For a draining or
-- finalizing job also:
--  * its pace window: the steps of its current runner (a new
--    runner's ETA is its own pace, not its predecessor's; all of them
--    when nobody runs it; a step recorded without its runner counts) that started in the last 60 seconds (among
--    its 2000 newest, read by the job_steps primary key), their settled rows
--    (deleted + moved + absent + kept) and the span from the first one's
--    start to the last one's end (tui/common/progress.h turns these into the pace
--    and the ETA);
--  * the end of its newest step (however old);
--  * closed_s: seconds since its library (a remove-server: its server) was
--    closed to writers, while it is: a prune's seal, a removal's creation
--    (the header's NO RUNNER badge counts from there);
--  * its runner: the holder of the job's live runner lease
--    (cleanup.job_runners, sql/functions/062_runner.sql): host and OS pid
--    of the process, its application, the backend of its last statement,
--    since when it holds the lease. No pg_stat_activity view and no
--    pg_database: those are shared catalogs, so a CREATE or DROP DATABASE
--    anywhere would invalidate this prepared statement, and its
--    re-planning could wait behind a catalog lock (a refresh that hangs).
SELECT j.id, j.kind, j.mode, j.server_id, j.library_id, j.target_name, j.phase, j.step_no, j.pass_no,
       j.examined, j.visited, j.deleted, j.moved, j.absent, j.retained, j.kept,
       j.libraries_deleted, j.servers_deleted, j.manifest_count, j.expected_count,
       j.claimed, j.released, j.retries_deleted, j.previews_deleted, j.collections_deleted,
       j.sync_status_deleted, j.history_detached,
       j.high_water_id, j.cursor_library_id, j.cursor_id, j.key_cursor, j.total_estimate, j.busy_retries,
       j.last_error, to_char(j.last_error_at, 'HH24:MI:SS') AS last_error_at,
       to_char(j.created_at, 'YYYY-MM-DD HH24:MI:SS') AS created_at,
       to_char(j.sealed_at, 'YYYY-MM-DD HH24:MI:SS') AS sealed_at,
       to_char(j.updated_at, 'YYYY-MM-DD HH24:MI:SS') AS updated_at,
       to_char(j.finished_at, 'YYYY-MM-DD HH24:MI:SS') AS finished_at,
       to_char(j.purged_at, 'YYYY-MM-DD HH24:MI:SS') AS purged_at,
       coalesce(w.steps, 0) AS window_steps, coalesce(w.rows, 0) AS window_rows,
       extract(epoch FROM w.first_start) AS window_first_start,
       extract(epoch FROM w.last_end) AS window_last_end,
       extract(epoch FROM clock_timestamp() - ls.end_at) AS last_step_age_s,
       extract(epoch FROM clock_timestamp() - coalesce(ls.end_at, j.sealed_at, j.created_at)) AS unattended_s,
       CASE WHEN j.phase IN ('draining', 'finalizing')
            THEN extract(epoch FROM clock_timestamp() - CASE WHEN j.kind = 'prune' THEN j.sealed_at ELSE j.created_at END)
       END AS closed_s,
       rn.backend_pid AS runner_pid, rn.application AS runner_app, rn.host AS runner_client,
       rn.os_pid AS runner_os_pid, to_char(rn.started_at, 'HH24:MI:SS') AS runner_since,
       extract(epoch FROM clock_timestamp() - rn.started_at) AS runner_age_s
  FROM (SELECT * FROM cleanup.jobs WHERE phase NOT IN ('completed', 'cancelled')
        UNION
        SELECT * FROM (SELECT * FROM cleanup.jobs ORDER BY id DESC LIMIT $1::int) recent) j
  LEFT JOIN LATERAL (
        SELECT s.started_at + s.duration_ms * interval '1 millisecond' AS end_at
          FROM cleanup.job_steps s WHERE s.job_id = j.id ORDER BY s.step_no DESC LIMIT 1) ls
       ON j.phase IN ('draining', 'finalizing')
  LEFT JOIN LATERAL (
        SELECT r.* FROM cleanup.job_runners r WHERE r.job_id = j.id AND cleanup.runner_live(r)) rn
       ON j.phase NOT IN ('completed', 'cancelled')
  LEFT JOIN LATERAL (
        SELECT count(*) AS steps, sum(s.deleted + s.moved + s.absent + s.kept) AS rows,
               min(s.started_at) AS first_start,
               max(s.started_at + s.duration_ms * interval '1 millisecond') AS last_end
          FROM (SELECT deleted, moved, absent, kept, started_at, duration_ms, runner_pid FROM cleanup.job_steps
                 WHERE job_id = j.id ORDER BY step_no DESC LIMIT 2000) s
         WHERE s.started_at > clock_timestamp() - interval '60 seconds'
           AND (rn.job_id IS NULL OR s.runner_pid IS NULL OR s.started_at >= rn.started_at)) w
       ON j.phase IN ('draining', 'finalizing')
 ORDER BY j.id DESC
