-- 007_privileges: who created a job, under the privilege model
-- (sql/functions/098_privileges.sql, docs/roles.md).
--
-- cleanup.job_create is SECURITY DEFINER: inside it current_user is
-- cleanup_owner, whoever called it. The login role that opened the session
-- (session_user) is the one that created the job. (006 is reserved.)
ALTER TABLE cleanup.jobs ALTER COLUMN created_by SET DEFAULT session_user;
