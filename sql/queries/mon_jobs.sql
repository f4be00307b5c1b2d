-- Console: unfinished jobs and the $1 most recent ones, newest first, with
-- the pace of their recent steps (at most 20 steps of the last 5 minutes,
-- read by the job_steps primary key) for the rate and the ETA. Job rows
-- carry the progress; inventory is never scanned.
SELECT j.id, j.kind, j.mode, j.server_id, j.library_id, j.target_name, j.phase, j.step_no, j.pass_no,
       j.examined, j.visited, j.deleted, j.moved, j.absent, j.retained, j.kept,
       j.libraries_deleted, j.servers_deleted, j.manifest_count, j.expected_count,
       j.high_water_id, j.cursor_library_id, j.cursor_id, j.total_estimate, j.busy_retries,
       j.last_error, to_char(j.last_error_at, 'HH24:MI:SS') AS last_error_at,
       to_char(j.created_at, 'YYYY-MM-DD HH24:MI:SS') AS created_at,
       to_char(j.sealed_at, 'YYYY-MM-DD HH24:MI:SS') AS sealed_at,
       to_char(j.updated_at, 'YYYY-MM-DD HH24:MI:SS') AS updated_at,
       to_char(j.finished_at, 'YYYY-MM-DD HH24:MI:SS') AS finished_at,
       r.steps AS recent_steps,
       CASE WHEN r.steps > 0
            THEN r.rows / greatest(extract(epoch FROM clock_timestamp() - r.first_at), 1.0) END
           AS rows_per_s,
       CASE WHEN r.steps > 0
            THEN r.steps / greatest(extract(epoch FROM clock_timestamp() - r.first_at), 1.0) END
           AS steps_per_s,
       extract(epoch FROM clock_timestamp() - r.last_at) AS last_step_age_s
  FROM (SELECT * FROM cleanup.jobs WHERE phase NOT IN ('completed', 'cancelled')
        UNION
        SELECT * FROM (SELECT * FROM cleanup.jobs ORDER BY id DESC LIMIT $1::int) recent) j
  LEFT JOIN LATERAL (
        SELECT count(*) AS steps, sum(s.examined) AS rows, min(s.started_at) AS first_at,
               max(s.started_at) AS last_at
          FROM (SELECT examined, started_at FROM cleanup.job_steps
                 WHERE job_id = j.id ORDER BY step_no DESC LIMIT 20) s
         WHERE s.started_at > clock_timestamp() - interval '5 minutes') r
       ON j.phase IN ('draining', 'finalizing')
 ORDER BY j.id DESC
