-- Terminates backend $1 if it still holds up a cleanup job, and audits
-- the outcome either way ($2 os_user, $3 the confirmation typed):
-- cleanup.terminate_holder (sql/functions/087_terminate_holder.sql).
SELECT terminated, refused, job_id, outcome, audit_id
  FROM cleanup.terminate_holder($1::int, $2, $3)
