-- With the bundle unchanged: privileges on schema cleanup that the
-- privilege model (sql/functions/098_privileges.sql) did not grant, such as
-- UPDATE on cleanup.library_admission given by hand to a writer (the
-- privilege model), or an object of cleanup or inventory no longer owned by
-- cleanup_owner. The installer then applies the definitions again, which
-- revokes them. Names at most five, NULL when there is none.
WITH ours AS (
    SELECT oid FROM pg_roles WHERE rolname IN ('cleanup_owner', 'cleanup_runner', 'cleanup_console')
), found AS (
    SELECT format('%s on %s', CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END,
                  c.oid::regclass) AS what
      FROM pg_class c, aclexplode(c.relacl) a
     WHERE c.relnamespace = 'cleanup'::regnamespace AND a.grantee <> c.relowner
       AND a.grantee NOT IN (SELECT oid FROM ours)
    UNION
    SELECT format('%s on function %s', CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END,
                  p.oid::regprocedure)
      FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
     WHERE p.pronamespace = 'cleanup'::regnamespace AND a.grantee <> p.proowner
       AND a.grantee NOT IN (SELECT oid FROM ours)
       -- The writer's EXECUTE on functions that constraints call (the
       -- external-ID rule of inventory.items) is the model's own grant.
       AND NOT (a.grantee IN (SELECT oid FROM pg_roles WHERE rolname = 'cleanup_writer')
                AND p.oid IN (SELECT d.refobjid FROM pg_depend d
                               WHERE d.classid = 'pg_constraint'::regclass
                                 AND d.refclassid = 'pg_proc'::regclass))
    UNION
    SELECT format('%s on schema cleanup', CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END)
      FROM pg_namespace n, aclexplode(n.nspacl) a
     WHERE n.nspname = 'cleanup' AND a.grantee <> n.nspowner AND a.grantee NOT IN (SELECT oid FROM ours)
    UNION
    SELECT format('owner of %s', c.oid::regclass)
      FROM pg_class c
     WHERE c.relnamespace IN ('cleanup'::regnamespace, 'inventory'::regnamespace)
       AND c.relowner NOT IN (SELECT oid FROM pg_roles WHERE rolname = 'cleanup_owner')
)
SELECT (SELECT string_agg(what, ', ' ORDER BY what) FROM (SELECT what FROM found ORDER BY what LIMIT 5) f) AS drift
