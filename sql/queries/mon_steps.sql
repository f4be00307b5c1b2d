-- Console: a page of the step records of job $1, newest first: the 120
-- steps numbered at most $2 (2147483647: the newest), read backwards along
-- the job_steps primary key, so that the detail panel can page through a
-- job's whole history from its first step (issue 11, item 13) at the cost
-- of one page. Each step also gets its cursor (the item ids before and
-- after it) and the gap since the step before it ended (the previous step
-- by primary key): a gap is where a run stopped, a runner died or another
-- took over.
SELECT s.step_no, s.action, s.pass_no, s.library_id, s.visited, s.deleted, s.moved, s.absent, s.retained, s.kept,
       s.libraries_deleted, s.servers_deleted, s.mutations, s.phase_after, s.claims_in_flight,
       s.mutations - s.deleted - s.libraries_deleted - s.servers_deleted AS dependent_mutations,
       s.cursor_from, s.cursor_to,
       extract(epoch FROM s.started_at - (p.started_at + p.duration_ms * interval '1 millisecond')) AS gap_s,
       extract(epoch FROM s.started_at) AS started_epoch,
       to_char(s.started_at, 'HH24:MI:SS') AS started,
       s.duration_ms, s.lock_hold_ms, s.parent_lock_ms
  FROM (SELECT * FROM cleanup.job_steps
         WHERE job_id = $1::bigint AND step_no <= $2::int
         ORDER BY step_no DESC
         LIMIT 120) s
  LEFT JOIN cleanup.job_steps p ON p.job_id = s.job_id AND p.step_no = s.step_no - 1
 ORDER BY s.step_no DESC
