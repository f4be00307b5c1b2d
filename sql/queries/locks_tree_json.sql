-- cleanupctl locks --json: the rows of cleanup.locks_tree() (the same as
-- locks_tree.sql) as one document built by PostgreSQL.
SELECT json_build_object(
           'database', current_database(),
           'at', clock_timestamp(),
           'backends', coalesce(json_agg(t ORDER BY t.pid), '[]'::json),
           'blocked', count(*) FILTER (WHERE cardinality(t.blocked_by) > 0))::text AS json
  FROM cleanup.locks_tree() AS t
