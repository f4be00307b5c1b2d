-- The $1 most recent audit rows, newest first.
SELECT id, to_char(at, 'YYYY-MM-DD HH24:MI:SS') AS at, os_user, application_name, action, job_id,
       confirmation, outcome
  FROM cleanup.audit
 ORDER BY id DESC
 LIMIT $1::int
