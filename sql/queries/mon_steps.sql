-- Console: a page of the step records of job $1, newest first: the 120
-- steps numbered at most $2 (2147483647: the newest), read backwards along
-- the job_steps primary key, so that the detail panel can page through a
-- job's whole history from its first step at the cost
-- of one page (121 rows of one index range, whatever the history's length).
-- Each step also gets its cursor (the item ids before and after it; the
-- external IDs for a prune's first pass in key order and a final-check
-- page, schema 12: their first 40 characters) and
-- the gap since the step before it ended (the 121st row serves the oldest
-- step's): a gap is where a run stopped, a runner died or another took
-- over. Each step names its runner (runner_pid, runner_app: the session
-- that committed it; NULL for steps recorded before 010_step_runner).
SELECT x.step_no, x.action, x.pass_no, x.library_id, x.visited, x.deleted, x.moved, x.absent, x.retained, x.kept,
       x.libraries_deleted, x.servers_deleted, x.mutations, x.phase_after, x.claims_in_flight,
       x.mutations - x.deleted - x.libraries_deleted - x.servers_deleted AS dependent_mutations,
       x.cursor_from, x.cursor_to, left(x.check_from, 40) AS key_from, left(x.check_to, 40) AS key_to,
       CASE WHEN x.prev_no = x.step_no - 1 THEN extract(epoch FROM x.started_at - x.prev_end) END AS gap_s,
       extract(epoch FROM x.started_at) AS started_epoch,
       to_char(x.started_at, 'HH24:MI:SS') AS started,
       x.duration_ms, x.lock_hold_ms, x.parent_lock_ms, x.runner_pid, x.runner_app
  FROM (SELECT s.*,
               lead(s.step_no) OVER w AS prev_no,
               lead(s.started_at + s.duration_ms * interval '1 millisecond') OVER w AS prev_end
          FROM (SELECT * FROM cleanup.job_steps
                 WHERE job_id = $1::bigint AND step_no <= $2::int
                 ORDER BY step_no DESC
                 LIMIT 121) s
        WINDOW w AS (ORDER BY s.step_no DESC)) x
 ORDER BY x.step_no DESC
 LIMIT 120
