-- Console: the $2 most recent steps of job $1, newest first (job_steps
-- primary key), for the detail panel and its sparklines.
SELECT step_no, action, pass_no, library_id, visited, deleted, moved, absent, retained, kept,
       libraries_deleted, servers_deleted, mutations, phase_after, claims_in_flight,
       mutations - deleted - libraries_deleted - servers_deleted AS dependent_mutations,
       extract(epoch FROM started_at) AS started_epoch,
       to_char(started_at, 'HH24:MI:SS') AS started,
       duration_ms, lock_hold_ms, parent_lock_ms
  FROM cleanup.job_steps
 WHERE job_id = $1::bigint
 ORDER BY step_no DESC
 LIMIT $2::int
