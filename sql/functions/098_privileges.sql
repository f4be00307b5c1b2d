-- 098_privileges: the privilege model (docs/roles.md).
--
-- Runs after every definition (CREATE OR REPLACE FUNCTION resets SECURITY
-- DEFINER and SET clauses, so they are applied here, each time the
-- definitions are) and before the schema contract is recorded (099), which
-- then includes them (prosecdef is part of the "functions" component).
--
-- Four roles, NOLOGIN, cluster-wide (login roles are made members):
--   cleanup_owner    owns schemas cleanup and inventory and everything in them
--   cleanup_runner   runs jobs: EXECUTE on the job API, SELECT on what reports read
--   cleanup_writer   a sync writer: SELECT/INSERT/UPDATE on inventory, the count cache's
--                    gateway wrappers inventory.write_items and inventory.count_declare
--                    (077_gateway.sql), nothing in cleanup
--   cleanup_console  reads: SELECT on what the console and status read, read-only functions
--
-- The guards (admission and parent triggers) and the engine's entry points
-- are SECURITY DEFINER, owned by cleanup_owner, with search_path fixed to
-- pg_catalog, pg_temp: they do the cleanup.* work for a writer or a runner
-- that has no privilege on those tables, and they cannot be redirected by
-- the caller's search_path. Every name in their bodies, and in the helpers
-- they call (which run with the definer's search_path), is schema-qualified
-- or a pg_catalog built-in. Small helpers called per row (job_json,
-- step_json, lock keys, ...) stay plain: a SET clause prevents inlining and
-- costs a GUC save and restore per call.
--
-- The installer owns the ACLs of schema cleanup: privileges granted there
-- by hand to any other role (say, UPDATE on cleanup.library_admission for a
-- writer, the way defect 4 was exploited) are revoked here. Grants on
-- inventory to roles of the site's own are left alone.
--
-- What this does not protect against: superusers, members of cleanup_owner
-- and the database owner (docs/security.md).

-- 1. The roles. CREATE ROLE is cluster-wide and not transactional with
-- respect to other databases: two installs into two databases at once both
-- see the role missing; the second one's insert waits for the first's
-- commit and then fails with unique_violation (or duplicate_object when the
-- first had committed before the check). Either means "exists": fine.
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['cleanup_owner', 'cleanup_runner', 'cleanup_writer', 'cleanup_console'] LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r);
        BEGIN
            EXECUTE format('CREATE ROLE %I NOLOGIN', r);
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN
                NULL;
            WHEN insufficient_privilege THEN
                RAISE EXCEPTION 'role % does not exist and % may not create it', r, current_user
                    USING ERRCODE = '42501',
                          HINT = 'install as a superuser once, or have one run: CREATE ROLE cleanup_owner NOLOGIN; '
                                 'CREATE ROLE cleanup_runner NOLOGIN; CREATE ROLE cleanup_writer NOLOGIN; '
                                 'CREATE ROLE cleanup_console NOLOGIN (docs/roles.md)';
        END;
    END LOOP;
END $$;

-- 2. Ownership: schemas, relations (indexes and identity sequences follow
-- their tables), functions and free-standing types of cleanup and
-- inventory belong to cleanup_owner, so that the SECURITY DEFINER functions
-- run as that NOLOGIN role and never as the superuser who installed them.
-- Only objects owned by someone else are altered (ALTER TABLE ... OWNER
-- takes an ACCESS EXCLUSIVE lock). Event triggers stay with the superuser
-- (PostgreSQL requires it).
DO $$
DECLARE
    o    oid := (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = 'cleanup_owner');
    x    record;
BEGIN
    FOR x IN SELECT n.nspname FROM pg_catalog.pg_namespace n
              WHERE n.nspname IN ('cleanup', 'inventory') AND n.nspowner <> o ORDER BY n.nspname LOOP
        EXECUTE format('ALTER SCHEMA %I OWNER TO cleanup_owner', x.nspname);
    END LOOP;
    FOR x IN SELECT n.nspname, c.relname, c.relkind FROM pg_catalog.pg_class c
               JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname IN ('cleanup', 'inventory') AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
                AND c.relowner <> o
              ORDER BY n.nspname, c.relname LOOP
        EXECUTE format('ALTER %s %I.%I OWNER TO cleanup_owner',
                       CASE x.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                                      WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
                       x.nspname, x.relname);
    END LOOP;
    -- Sequences not owned through a table column (identity sequences moved
    -- with their tables above).
    FOR x IN SELECT n.nspname, c.relname FROM pg_catalog.pg_class c
               JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname IN ('cleanup', 'inventory') AND c.relkind = 'S' AND c.relowner <> o
                AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                                 WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid
                                   AND d.deptype IN ('a', 'i'))
              ORDER BY n.nspname, c.relname LOOP
        EXECUTE format('ALTER SEQUENCE %I.%I OWNER TO cleanup_owner', x.nspname, x.relname);
    END LOOP;
    FOR x IN SELECT n.nspname, p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid) AS args, p.prokind
               FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname IN ('cleanup', 'inventory') AND p.proowner <> o
              ORDER BY n.nspname, p.proname LOOP
        EXECUTE format('ALTER %s %I.%I(%s) OWNER TO cleanup_owner',
                       CASE x.prokind WHEN 'a' THEN 'AGGREGATE' ELSE 'ROUTINE' END,
                       x.nspname, x.proname, x.args);
    END LOOP;
    -- Free-standing types (enums, domains, composite types); row types and
    -- array types follow their table or element type.
    FOR x IN SELECT n.nspname, t.typname FROM pg_catalog.pg_type t
               JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
              WHERE n.nspname IN ('cleanup', 'inventory') AND t.typowner <> o
                AND (t.typrelid = 0 OR (SELECT c.relkind FROM pg_catalog.pg_class c WHERE c.oid = t.typrelid) = 'c')
                AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type e WHERE e.typarray = t.oid)
              ORDER BY n.nspname, t.typname LOOP
        EXECUTE format('ALTER TYPE %I.%I OWNER TO cleanup_owner', x.nspname, x.typname);
    END LOOP;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE EXCEPTION 'cannot hand the cleanup and inventory objects to cleanup_owner: %', SQLERRM
        USING ERRCODE = '42501',
              HINT = format('install as a superuser, as cleanup_owner, or as a member of it: GRANT cleanup_owner TO %I',
                            current_user);
END $$;

-- 3. SECURITY DEFINER with a fixed search_path, for a fixed list: every
-- trigger function that guards inventory (a writer has no privilege on
-- the cleanup.* rows they read and write), the DDL watch (it fires for
-- DDL of any role and updates cleanup.schema_contract), and every entry
-- point a runner or the console calls. Not listed, on purpose:
--   jobs_notify         fires only for writes to cleanup.jobs, which only
--                       the owner (inside the functions below) can make
--   dependency_edges, dependency_evidence
--                       catalog views only: they show what the caller may
--                       see, not what cleanup_owner may
--   job_json, job_live_json, step_json, lock_key, coordinator_key, library_key, job_label,
--   external_id_problem, and every helper called only from the functions
--   below (admit_libraries, bump_counts, fence_*, lock_*, step_exec,
--   step_drain, final_check_page, contract_*, failpoint*, log_event, ...):
--                       they run as cleanup_owner already when called from
--                       a definer function, and are not granted to anyone
--   contract_drift, contract_record: the installer's, run as the installer
-- A listed name that does not exist stops the install: the list is kept
-- exact, not silently shortened.
DO $$
DECLARE
    fn   text;
    x    record;
    n    int;
BEGIN
    FOREACH fn IN ARRAY ARRAY[
        -- guards: triggers on inventory
        'items_after_insert', 'items_after_update', 'items_after_delete', 'items_immutable',
        'servers_after_insert', 'servers_before_update', 'servers_before_delete',
        'libraries_before_insert', 'libraries_after_insert', 'libraries_before_update',
        'libraries_before_delete', 'inventory_truncate_guard',
        -- guards: claims and dependent admission (055_dependents.sql)
        'items_claim_guard', 'items_claim_set_guard', 'item_dependents_guard', 'item_dependents_delete_guard',
        'item_dependents_nowait',
        'library_dependents_guard',
        -- the DDL watch (event trigger)
        'contract_watch',
        -- the job API (cleanup_runner)
        'job_create', 'job_append', 'job_seal', 'job_transition', 'job_step', 'job_step_preview',
        'job_note_busy', 'job_step_replay', 'audit_record',
        -- the runner lease (062_runner.sql, cleanup_runner)
        'runner_open', 'runner_renew', 'runner_announce', 'runner_close', 'runner_stop',
        -- what a holder holds up (087_terminate_holder.sql; terminate_holder
        -- itself runs with the caller's rights, for pg_terminate_backend)
        'holder_check',
        -- retention (080_retention.sql, cleanup_runner)
        'purge_step', 'purge_plan',
        -- reports (cleanup_runner, cleanup_console)
        'job_show_json', 'jobs_json', 'status_json',
        -- lock contention and the holders T can end (085_locks.sql): every
        -- session that holds up or waits for cleanup, as busy answers name
        -- them; query text only where the login could read it itself
        'locks_tree', 'idle_holders'] LOOP
        n := 0;
        FOR x IN SELECT p.oid, pg_catalog.pg_get_function_identity_arguments(p.oid) AS args
                   FROM pg_catalog.pg_proc p
                  WHERE p.pronamespace = 'cleanup'::regnamespace AND p.proname = fn LOOP
            EXECUTE format('ALTER FUNCTION cleanup.%I(%s) SECURITY DEFINER SET search_path = pg_catalog, pg_temp',
                           fn, x.args);
            n := n + 1;
        END LOOP;
        IF n = 0 THEN
            RAISE EXCEPTION 'privilege model: function cleanup.% is listed in 098_privileges.sql but does not exist', fn
                USING HINT = 'update the list in sql/functions/098_privileges.sql and docs/roles.md';
        END IF;
    END LOOP;
    -- The writers' entry points in schema inventory (077_gateway.sql).
    FOREACH fn IN ARRAY ARRAY['write_items(jsonb)', 'count_declare(bigint[])'] LOOP
        IF to_regprocedure('inventory.' || fn) IS NULL THEN
            RAISE EXCEPTION 'privilege model: function inventory.% is listed in 098_privileges.sql but does not exist', fn
                USING HINT = 'update the list in sql/functions/098_privileges.sql and docs/roles.md';
        END IF;
        EXECUTE format('ALTER FUNCTION inventory.%s SECURITY DEFINER SET search_path = pg_catalog, pg_temp', fn);
    END LOOP;
END $$;

-- 4. Privileges. Everything is revoked first and granted again, so that a
-- grant removed from this file is removed from the database on upgrade.
DO $$
DECLARE
    x    record;
    stmt text;
BEGIN
    -- Hand-made grants on schema cleanup to roles other than ours: on its
    -- tables (and sequences), its functions, the schema itself.
    FOR x IN SELECT DISTINCT k.ord, k.notice, k.revoke, a.grantee
               FROM (VALUES
                       (1, 'revoking the privileges of role %s on the tables of schema cleanup (the installer manages them)',
                        ARRAY['REVOKE ALL ON ALL TABLES IN SCHEMA cleanup FROM %s',
                              'REVOKE ALL ON ALL SEQUENCES IN SCHEMA cleanup FROM %s']),
                       (2, 'revoking EXECUTE of role %s on the functions of schema cleanup (the installer manages them)',
                        ARRAY['REVOKE ALL ON ALL FUNCTIONS IN SCHEMA cleanup FROM %s']),
                       (3, 'revoking the privileges of role %s on schema cleanup (the installer manages them)',
                        ARRAY['REVOKE ALL ON SCHEMA cleanup FROM %s'])) AS k(ord, notice, revoke)
               JOIN (SELECT 1, relacl, relowner FROM pg_catalog.pg_class WHERE relnamespace = 'cleanup'::regnamespace
                     UNION ALL SELECT 2, proacl, proowner FROM pg_catalog.pg_proc WHERE pronamespace = 'cleanup'::regnamespace
                     UNION ALL SELECT 3, nspacl, nspowner FROM pg_catalog.pg_namespace WHERE nspname = 'cleanup')
                    AS o(ord, acl, owner) USING (ord),
                    LATERAL pg_catalog.aclexplode(o.acl) a
              WHERE a.grantee <> 0 AND a.grantee <> o.owner
                AND a.grantee NOT IN (SELECT oid FROM pg_catalog.pg_roles
                                       WHERE rolname IN ('cleanup_owner', 'cleanup_runner', 'cleanup_console'))
              ORDER BY k.ord, a.grantee
    LOOP
        RAISE NOTICE '%', format(x.notice, x.grantee::regrole);
        FOREACH stmt IN ARRAY x.revoke LOOP
            EXECUTE format(stmt, x.grantee::regrole);
        END LOOP;
    END LOOP;
END $$;

REVOKE ALL ON SCHEMA cleanup FROM PUBLIC, cleanup_runner, cleanup_writer, cleanup_console;
REVOKE ALL ON SCHEMA inventory FROM PUBLIC, cleanup_runner, cleanup_writer, cleanup_console;
REVOKE ALL ON ALL TABLES IN SCHEMA cleanup FROM PUBLIC, cleanup_runner, cleanup_writer, cleanup_console;
REVOKE ALL ON ALL TABLES IN SCHEMA inventory FROM PUBLIC, cleanup_runner, cleanup_writer, cleanup_console;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA cleanup FROM PUBLIC, cleanup_runner, cleanup_writer, cleanup_console;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA inventory FROM PUBLIC, cleanup_runner, cleanup_writer, cleanup_console;
-- Functions are executable by PUBLIC when created; none of ours is.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA cleanup FROM PUBLIC, cleanup_runner, cleanup_writer, cleanup_console;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA inventory FROM PUBLIC, cleanup_runner, cleanup_writer, cleanup_console;

-- cleanup_writer: the inventory, nothing else. Its inserts and updates
-- pass through the admission triggers, which do the cleanup.* work as
-- cleanup_owner. No DELETE (docs/roles.md): removal is a cleanup job's
-- (bounded, fenced, counted); a writer's DELETE is not admission-checked
-- and would bypass the manifest and the ledger. No TRUNCATE, no TRIGGER,
-- no REFERENCES (an incoming foreign key would stop every job, CU404).
GRANT USAGE ON SCHEMA inventory TO cleanup_writer;
GRANT SELECT, INSERT, UPDATE ON inventory.media_servers, inventory.libraries, inventory.items TO cleanup_writer;
-- Dependents (seed 001): a sync writer also maintains these, deletes
-- included (a retry queue is consumed); the dependent guards refuse what a
-- claim or a draining library forbids (055_dependents.sql).
GRANT SELECT, INSERT, UPDATE, DELETE ON inventory.item_retries, inventory.identity_review_previews,
                                        inventory.library_collections, inventory.library_sync_status,
                                        inventory.classification_history
   TO cleanup_writer;
-- Identity columns take their values without this; clients that call
-- currval()/nextval() on pg_get_serial_sequence() need it.
GRANT USAGE ON ALL SEQUENCES IN SCHEMA inventory TO cleanup_writer;
-- Functions that the inventory tables' own CHECK constraints and column
-- defaults call (the external ID rule, one definition for both sides:
-- defect 3) run as the writer whose row they check: EXECUTE, found from
-- the catalog's dependencies. Without USAGE on schema cleanup the writer
-- still cannot call them by name.
DO $$
DECLARE
    x record;
BEGIN
    FOR x IN SELECT DISTINCT p.oid::regprocedure AS fn
               FROM pg_catalog.pg_depend d
               JOIN pg_catalog.pg_proc p ON p.oid = d.refobjid AND d.refclassid = 'pg_catalog.pg_proc'::regclass
              WHERE p.pronamespace IN ('cleanup'::regnamespace, 'inventory'::regnamespace)
                AND ((d.classid = 'pg_catalog.pg_constraint'::regclass
                      AND d.objid IN (SELECT c.oid FROM pg_catalog.pg_constraint c
                                       WHERE c.conrelid IN ('inventory.media_servers'::regclass,
                                                            'inventory.libraries'::regclass,
                                                            'inventory.items'::regclass)))
                  OR (d.classid = 'pg_catalog.pg_attrdef'::regclass
                      AND d.objid IN (SELECT a.oid FROM pg_catalog.pg_attrdef a
                                       WHERE a.adrelid IN ('inventory.media_servers'::regclass,
                                                           'inventory.libraries'::regclass,
                                                           'inventory.items'::regclass))))
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO cleanup_writer', x.fn);
    END LOOP;
END $$;

-- cleanup_runner and cleanup_console: what status, jobs, job show, locks,
-- deps and the console read. No inventory.items, no manifest, no
-- schema_contract; no INSERT, UPDATE or DELETE anywhere.
GRANT USAGE ON SCHEMA cleanup, inventory TO cleanup_runner, cleanup_console;
GRANT SELECT ON cleanup.schema_info, cleanup.jobs, cleanup.job_steps, cleanup.events, cleanup.audit, cleanup.job_runners,
                cleanup.library_admission, cleanup.server_admission, cleanup.library_stats,
                inventory.media_servers, inventory.libraries
   TO cleanup_runner, cleanup_console;
-- Read-only functions: reports (definer), their per-row helpers, the lock
-- and dependency views (invoker; `cleanupctl deps` calls the four-limit
-- dependency_evidence, the two-limit form and dependency_edges wrap it),
-- and the replay of a recorded step.
GRANT EXECUTE ON FUNCTION cleanup.job_json(cleanup.jobs), cleanup.job_live_json(cleanup.jobs),
                          cleanup.job_text_columns(cleanup.jobs),
                          cleanup.step_json(cleanup.job_steps),
                          cleanup.job_show_json(bigint, int), cleanup.jobs_json(int), cleanup.status_json(),
                          cleanup.status_servers(), cleanup.status_libraries(), cleanup.locks_tree(), cleanup.idle_holders(float8),
                          cleanup.dependency_edges(int, int),
                          cleanup.dependency_evidence(int, int),
                          cleanup.dependency_evidence(int, int, int, int), cleanup.job_step_replay(bigint, int),
                          cleanup.runner_live(cleanup.job_runners), cleanup.runner_label(cleanup.job_runners)
   TO cleanup_runner, cleanup_console;
-- What `cleanupctl deps` reads of the dispositions (seed 001), and the
-- mutations-by-kind shape job_json and step_json build (they are granted).
GRANT SELECT ON cleanup.reference_dispositions TO cleanup_runner, cleanup_console;
-- T3: a job's holders as a line of text (job show; IMMUTABLE, reads nothing).
GRANT EXECUTE ON FUNCTION cleanup.holders_text(jsonb) TO cleanup_runner, cleanup_console;
-- T3: after a lock timeout, who holds the inventory's or the engine's
-- tables (catalog and statistics views only: what the caller may see).
GRANT EXECUTE ON FUNCTION cleanup.lock_blockers(), cleanup.table_lock_holders(), cleanup.holders_by_pid(jsonb),
                          cleanup.holders_json(int[], text) TO cleanup_runner, cleanup_console;
GRANT EXECUTE ON FUNCTION cleanup.mutations_json(bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint)
   TO cleanup_runner, cleanup_console;
-- The count cache (seed 002, 075_count_cache.sql): the console's and
-- `counts`' report (definer), and a runner's visits.
GRANT EXECUTE ON FUNCTION cleanup.count_report(timestamptz) TO cleanup_runner, cleanup_console;
GRANT EXECUTE ON FUNCTION cleanup.count_visit(bigint, timestamptz) TO cleanup_runner;
-- The writer's way to the count cache's protocol (077_gateway.sql): the
-- mutation gateway and the lock declaration, wrapped in schema inventory
-- (definer, bounded input), since cleanup_writer has no USAGE on schema
-- cleanup (T1-T8) and keeps none. Without them a writer login writes
-- plain SQL, which a watched library refuses (CU410). Nobody else: the
-- runner and the console do not write inventory.
GRANT EXECUTE ON FUNCTION inventory.write_items(jsonb), inventory.count_declare(bigint[]) TO cleanup_writer;
-- The job API: every change a runner makes goes through these.
GRANT EXECUTE ON FUNCTION cleanup.job_create(text, bigint, text), cleanup.job_append(bigint, text[]),
                          cleanup.job_seal(bigint, bigint), cleanup.job_transition(bigint, text),
                          cleanup.job_step(bigint, int, int, bigint), cleanup.job_step_preview(bigint),
                          cleanup.job_note_busy(bigint, text),
                          cleanup.audit_record(text, text, bigint, text, text),
                          cleanup.runner_open(bigint, bigint, text, int, text, boolean, int, bigint, boolean),
                          cleanup.runner_renew(bigint, bigint, int), cleanup.runner_announce(bigint, bigint),
                          cleanup.runner_close(bigint, bigint, boolean, text), cleanup.runner_stop(bigint, int, text)
   TO cleanup_runner;
-- Ending a backend that holds up a job (087_terminate_holder.sql):
-- the console's terminate-holder. Not the read-only console's role.
GRANT EXECUTE ON FUNCTION cleanup.holder_check(int), cleanup.terminate_holder(int, text, text) TO cleanup_runner;
-- Retention (080_retention.sql): `cleanupctl purge` of finished jobs'
-- manifests, step records and old events, bounded per transaction.
GRANT EXECUTE ON FUNCTION cleanup.purge_step(interval, int), cleanup.purge_plan(interval, int) TO cleanup_runner;

-- 5. Every engine function pins its search_path (T5): a caller's
-- search_path (a schema of its own ahead of pg_catalog, with an operator
-- or function of the same name) can never change what an engine function
-- means, whether it is a guard, a helper, or a function a CHECK constraint
-- of the inventory calls in the writer's own session. SQL-standard bodies
-- (BEGIN ATOMIC) are bound when they are created and need no setting: the
-- small per-row helpers are written that way so that they stay inlinable.
-- tests/integration/test_privileges.c walks pg_proc and fails on a
-- function that is neither.
DO $$
DECLARE
    x record;
BEGIN
    FOR x IN SELECT n.nspname, p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid) AS args, p.prokind
               FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname IN ('cleanup', 'inventory') AND p.prosqlbody IS NULL AND p.prokind IN ('f', 'p')
                AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false)
              ORDER BY 1, 2, 3 LOOP
        EXECUTE format('ALTER %s %I.%I(%s) SET search_path = pg_catalog, pg_temp',
                       CASE x.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, x.nspname, x.proname, x.args);
    END LOOP;
END $$;

-- 6. Holders named in full (T3, 011_holders.sql): the definer functions
-- that name who holds a lock read pg_stat_activity as cleanup_owner; with
-- pg_read_all_stats it sees every session's state, client and transaction
-- start. Granting it needs a superuser (or ADMIN on it): without one the
-- holders are still named by pid, role and application.
DO $$
BEGIN
    IF NOT pg_catalog.pg_has_role('cleanup_owner', 'pg_read_all_stats', 'USAGE') THEN
        BEGIN
            GRANT pg_read_all_stats TO cleanup_owner;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'cleanup_owner is not a member of pg_read_all_stats and % may not make it one: busy answers name holders by pid, role and application only (docs/roles.md)', current_user;
        END;
    END IF;
END $$;

-- 7. Writer logins get bounded waits and idle transactions (T3): a login
-- role that is a member of cleanup_writer and has no setting of its own
-- for the parameter (in any database) gets, in this database,
--   idle_in_transaction_session_timeout = 60s   a writer idle inside a
--       transaction holds the admission and count rows its writes locked,
--       which makes cleanup steps of those libraries busy;
--   lock_timeout = 10s                           no writer statement waits
--       longer than that (the guards never make it wait at all).
-- An operator's own setting is never replaced: ALTER ROLE ... SET (or
-- RESET) changes them; install gives them to writer logins created since
-- the last install. Needs CREATEROLE or a superuser; otherwise a NOTICE.
DO $$
DECLARE
    x record;
BEGIN
    FOR x IN SELECT r.rolname, g.name, g.value
               FROM pg_catalog.pg_roles r
              CROSS JOIN (VALUES ('idle_in_transaction_session_timeout', '60s'), ('lock_timeout', '10s')) AS g(name, value)
              WHERE r.rolcanlogin AND NOT r.rolsuper
                AND pg_catalog.pg_has_role(r.oid, 'cleanup_writer', 'MEMBER')
                AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_db_role_setting s, unnest(s.setconfig) AS c
                                 WHERE s.setrole = r.oid AND c LIKE g.name || '=%'
                                   AND s.setdatabase IN (0, (SELECT d.oid FROM pg_catalog.pg_database d
                                                              WHERE d.datname = pg_catalog.current_database())))
              ORDER BY 1, 2 LOOP
        BEGIN
            EXECUTE format('ALTER ROLE %I IN DATABASE %I SET %s = %L', x.rolname, pg_catalog.current_database(),
                           x.name, x.value);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'writer login % keeps no % default: % may not alter roles (docs/roles.md)',
                x.rolname, x.name, current_user;
        END;
    END LOOP;
END $$;
