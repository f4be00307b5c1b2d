-- 095_contract: the schema contract (seed 001, "Bounded dependent work").
--
-- The contract fingerprints what the cleanup protocol relies on: the
-- monitored tables' columns and default expressions, constraints, indexes,
-- triggers (with their enabled state), rewrite rules and row-security flags;
-- every foreign key that references an inventory table (an unknown incoming
-- cascade would do uncounted work); the enabled state of the RI triggers of
-- those keys and of the monitored tables' constraints; the whole foreign-key
-- graph reachable from the inventory roots, with the triggers (enabled
-- state included) and the inheritance children of every table in it (T6);
-- and the definitions of the engine's own functions, settings included.
-- What no contract may be recorded with (a cascade anywhere in that graph,
-- a disabled guard, a foreign trigger, ...) is refused by 096_drift.sql. Only the installer records it (099_contract_record.sql;
-- `cleanupctl install` also records it again after repairing drift); every
-- step compares it before its domain mutations and stops on drift (CU403).
-- The comparison is cheap while the DDL watch (event triggers below) is the
-- one recorded with the contract and nothing marked it dirty; without a
-- working watch every step compares in full.
-- It includes database-local names: it is not a portable restore receipt.
-- A correctness check, not authorization against a database owner.

-- The DDL watch as the steps' fast path relies on it: both event triggers,
-- enabled ALWAYS (so DDL under session_replication_role = replica marks the
-- contract too) and calling cleanup.contract_watch, identified by the oid
-- and xmin of their catalog rows, which change when a trigger is dropped
-- and created again or altered (disabled and enabled again: DDL in between
-- went unmarked). A short text, or NULL when the watch is not complete (no
-- superuser at install, a trigger dropped or disabled): then every step
-- compares the contract in full. Event triggers do not fire for DDL on
-- event triggers, hence this live look-up in every step. contract_assert
-- repeats the string_agg expression inline (a nested call cost ~20 us a
-- step); the two must stay the same. PL/pgSQL so that the plan is cached.
CREATE OR REPLACE FUNCTION cleanup.contract_watch_state()
RETURNS text LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN (SELECT CASE WHEN count(*) = 2 THEN string_agg(e.oid || ':' || e.xmin, ' ' ORDER BY e.oid) END
              FROM pg_event_trigger e
             WHERE e.evtname IN ('cleanup_contract_watch', 'cleanup_contract_watch_drop')
               AND e.evtenabled = 'A' AND e.evtfoid = to_regprocedure('cleanup.contract_watch()'));
END $$;

-- The enabled state of a constraint's RI triggers (internal, so not in the
-- 'triggers' component): ALTER TABLE ... DISABLE TRIGGER ALL, or one RI
-- trigger disabled by name, switches a foreign key off without changing
-- pg_constraint. Named by table and function, not by the trigger's
-- oid-derived name; '' for a constraint without triggers. Part of the
-- 'constraints' and 'incoming_foreign_keys' components.
CREATE OR REPLACE FUNCTION cleanup.contract_ri_state(p_con oid)
RETURNS text LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(' [' || string_agg(format('%s %s %s', t.tgrelid::regclass::text, p.proname, t.tgenabled), ', '
                                        ORDER BY t.tgrelid::regclass::text, p.proname, t.tgenabled) || ']', '')
      FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
     WHERE t.tgconstraint = p_con AND t.tgisinternal
$$;

-- PL/pgSQL so that the plan is cached: planning this query was a third of
-- a full comparison (min of 15: 29.5 ms as SQL, 15.9 ms as PL/pgSQL, on a
-- loaded 2-core machine where the previous, smaller SQL version took 20.6).
CREATE OR REPLACE FUNCTION cleanup.contract_components()
RETURNS jsonb LANGUAGE plpgsql STABLE
AS $$
BEGIN
RETURN (
WITH monitored(rel) AS (
    SELECT to_regclass(r) FROM unnest(ARRAY[
        'inventory.media_servers', 'inventory.libraries', 'inventory.items',
        'cleanup.jobs', 'cleanup.manifest', 'cleanup.job_steps', 'cleanup.job_retained',
        'cleanup.server_admission', 'cleanup.library_admission', 'cleanup.library_stats',
        'cleanup.reference_dispositions', 'inventory.item_retries', 'inventory.identity_review_previews',
        'inventory.library_collections', 'inventory.library_sync_status', 'inventory.classification_history']) AS r
     WHERE to_regclass(r) IS NOT NULL),
-- T6: the tables reachable from the inventory roots (096_drift.sql).
reach AS MATERIALIZED (
    SELECT r AS rel FROM cleanup.contract_reach() AS r),
parts AS (
    SELECT 'columns' AS part, string_agg(format('%s.%s %s %s %s', m.rel::text, a.attname,
                  format_type(a.atttypid, a.atttypmod), a.attnotnull,
                  coalesce(pg_get_expr(d.adbin, d.adrelid), '')), E'\n' ORDER BY m.rel::text, a.attnum) AS txt
      FROM monitored m JOIN pg_attribute a ON a.attrelid = m.rel AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    UNION ALL
    SELECT 'constraints', string_agg(format('%s %s %s%s', m.rel::text, c.conname, pg_get_constraintdef(c.oid),
                                            cleanup.contract_ri_state(c.oid)),
                                     E'\n' ORDER BY m.rel::text, c.conname)
      FROM monitored m JOIN pg_constraint c ON c.conrelid = m.rel
    UNION ALL
    SELECT 'indexes', string_agg(format('%s %s', pg_get_indexdef(i.indexrelid), i.indisvalid),
                                 E'\n' ORDER BY m.rel::text, i.indexrelid::regclass::text)
      FROM monitored m JOIN pg_index i ON i.indrelid = m.rel
    UNION ALL
    SELECT 'triggers', string_agg(format('%s %s', pg_get_triggerdef(t.oid), t.tgenabled),
                                  E'\n' ORDER BY m.rel::text, t.tgname)
      FROM monitored m JOIN pg_trigger t ON t.tgrelid = m.rel AND NOT t.tgisinternal
    UNION ALL
    SELECT 'rules', coalesce(string_agg(pg_get_ruledef(r.oid), E'\n' ORDER BY m.rel::text, r.rulename), '')
      FROM monitored m JOIN pg_rewrite r ON r.ev_class = m.rel
    UNION ALL
    SELECT 'row_security', string_agg(format('%s %s %s', m.rel::text, c.relrowsecurity, c.relforcerowsecurity),
                                      E'\n' ORDER BY m.rel::text)
      FROM monitored m JOIN pg_class c ON c.oid = m.rel
    UNION ALL
    SELECT 'incoming_foreign_keys', coalesce(string_agg(format('%s %s %s%s', c.conrelid::regclass::text, c.conname,
                                                               pg_get_constraintdef(c.oid),
                                                               cleanup.contract_ri_state(c.oid)),
                                                        E'\n' ORDER BY c.conrelid::regclass::text, c.conname), '')
      FROM pg_constraint c
     WHERE c.contype = 'f'
       AND c.confrelid IN (SELECT rel FROM monitored WHERE rel::text LIKE 'inventory.%')
    UNION ALL
    -- What the engine will do with each known reference (055_dependents.sql).
    SELECT 'dispositions', coalesce(string_agg(format('%s %s(%s) -> %s %s', d.constraint_oid, d.table_name, d.columns,
                                                      d.referenced_table, d.disposition),
                                               E'\n' ORDER BY d.table_name, d.constraint_name), '')
      FROM cleanup.reference_dispositions d
    UNION ALL
    -- T6: the whole foreign-key graph reachable from the inventory roots
    -- (cleanup.contract_reach, 096_drift.sql), beyond what the parts above
    -- cover for the monitored tables: a key into a dependent's dependent,
    -- with the enabled state of its RI triggers; the user triggers of the
    -- other reachable tables with their enabled state; and inheritance
    -- children and partitions of every reachable table. (Only what the
    -- monitored parts leave out: usually nothing, so nearly free.)
    SELECT 'graph', coalesce(string_agg(format('%s %s %s%s', c.conrelid::regclass::text, c.conname,
                                               pg_get_constraintdef(c.oid), cleanup.contract_ri_state(c.oid)),
                                        E'\n' ORDER BY c.conrelid::regclass::text, c.conname), '')
      FROM pg_constraint c
     WHERE c.contype = 'f' AND c.confrelid IN (SELECT rel FROM reach)
       AND c.confrelid NOT IN (SELECT rel FROM monitored WHERE rel::text LIKE 'inventory.%')
    UNION ALL
    SELECT 'graph_triggers', coalesce(string_agg(format('%s %s', pg_get_triggerdef(t.oid), t.tgenabled),
                                                 E'\n' ORDER BY t.tgrelid::regclass::text, t.tgname), '')
      FROM pg_trigger t
     WHERE t.tgrelid IN (SELECT rel FROM reach) AND t.tgrelid NOT IN (SELECT rel FROM monitored)
       AND NOT t.tgisinternal
    UNION ALL
    SELECT 'inheritance', coalesce(string_agg(format('%s <- %s', i.inhparent::regclass::text, i.inhrelid::regclass::text),
                                              E'\n' ORDER BY i.inhparent::regclass::text, i.inhrelid::regclass::text), '')
      FROM pg_inherits i
     WHERE i.inhparent IN (SELECT rel FROM reach) OR i.inhrelid IN (SELECT rel FROM reach)
    UNION ALL
    -- The engine's functions (schemas cleanup and inventory): body,
    -- result, volatility, strictness, leakproofness, parallel safety,
    -- SECURITY DEFINER and every SET clause, sorted (T6: ALTER FUNCTION
    -- ... RESET lock_timeout is drift). The body is prosqlbody when there
    -- is one: a SQL-standard body (BEGIN ATOMIC) has an empty prosrc. (The
    -- catalog columns, not pg_get_functiondef: the same facts for a third
    -- of the time, ~1 ms for 150 functions.)
    SELECT 'functions', string_agg(format('%s %s %s %s %s %s %s %s %s %s', p.oid::regprocedure::text,
                                          md5(coalesce(p.prosqlbody::text, p.prosrc)), p.prorettype::regtype::text,
                                          p.proretset, p.provolatile, p.proisstrict, p.proleakproof, p.proparallel,
                                          p.prosecdef, ARRAY(SELECT x FROM unnest(p.proconfig) AS x ORDER BY x)),
                                   E'\n' ORDER BY p.oid::regprocedure::text)
      FROM pg_proc p
     WHERE p.pronamespace IN ('cleanup'::regnamespace, 'inventory'::regnamespace) AND p.prokind IN ('f', 'p'))
SELECT jsonb_object_agg(part, encode(sha256(convert_to(coalesce(txt, ''), 'UTF8')), 'hex'))
       -- In full, not hashed: the installer names a function whose
       -- settings changed since (cleanup.drift_refusals).
       || jsonb_build_object('function_settings', cleanup.contract_function_settings())
  FROM parts);
END $$;

-- The installer's drift check: the components that differ between the
-- recorded contract and the live schema, comma-separated, plus 'watch'
-- when the DDL watch is not the recorded, complete one and this user could
-- create it (a superuser); NULL when there is nothing to repair; 'contract'
-- when none is recorded. Reads only.
CREATE OR REPLACE FUNCTION cleanup.contract_drift()
RETURNS text LANGUAGE plpgsql STABLE
AS $$
DECLARE
    rec   cleanup.schema_contract;
    live  jsonb;
    parts text;
BEGIN
    SELECT * INTO rec FROM cleanup.schema_contract;
    IF NOT FOUND THEN
        RETURN 'contract';
    END IF;
    live := cleanup.contract_components();
    IF cleanup.contract_fingerprint(live) <> rec.fingerprint THEN
        -- function_settings details 'functions' (which changes with it).
        SELECT coalesce(string_agg(k, ', ' ORDER BY k), 'fingerprint') INTO parts
          FROM jsonb_object_keys(live || rec.components) AS k
         WHERE live->k IS DISTINCT FROM rec.components->k AND k <> 'function_settings';
    END IF;
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
       AND (rec.watch_state IS NULL OR rec.watch_state IS DISTINCT FROM cleanup.contract_watch_state()) THEN
        parts := concat_ws(', ', parts, 'watch');
    END IF;
    RETURN parts;
END $$;

CREATE OR REPLACE FUNCTION cleanup.contract_fingerprint(components jsonb)
RETURNS text LANGUAGE sql IMMUTABLE
AS $$ SELECT encode(sha256(convert_to(components::text, 'UTF8')), 'hex') $$;

-- Records the current contract. Called by the installer only. Never with
-- drift that no contract may record (T6, 096_drift.sql): CU460, nothing
-- recorded, also for a caller who goes around the installer.
CREATE OR REPLACE FUNCTION cleanup.contract_record()
RETURNS text LANGUAGE plpgsql
AS $$
DECLARE
    c jsonb;
    f text;
BEGIN
    PERFORM cleanup.assert_no_drift(NULL);
    c := cleanup.contract_components();
    f := cleanup.contract_fingerprint(c);
    INSERT INTO cleanup.schema_contract AS s (fingerprint, components, watch_state)
    VALUES (f, c, cleanup.contract_watch_state())
    ON CONFLICT (singleton) DO UPDATE
       SET fingerprint = excluded.fingerprint, components = excluded.components,
           watch_state = excluded.watch_state,
           recorded_at = now(), dirty = false, dirty_since = NULL, dirty_reason = NULL;
    RETURN f;
END $$;

-- Compares the live schema with the recorded contract. Fast path (every
-- step): the contract is clean (no DDL marked it dirty) and the DDL watch
-- is the one recorded, complete (contract_watch_state): one row read and
-- one catalog look-up, ~30 us in a step. Otherwise the full comparison
-- (~3 ms). Raises CU403 naming the changed components. A clean full
-- comparison clears the dirty mark in the caller's transaction, unless
-- another transaction holds the row (never waits).
CREATE OR REPLACE FUNCTION cleanup.contract_assert()
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    rec     cleanup.schema_contract;
    live    jsonb;
    changed text;
BEGIN
    IF EXISTS (SELECT 1 FROM cleanup.schema_contract c
                WHERE NOT c.dirty
                  AND c.watch_state = (SELECT string_agg(e.oid || ':' || e.xmin, ' ' ORDER BY e.oid)
                                         FROM pg_event_trigger e
                                        WHERE e.evtname IN ('cleanup_contract_watch', 'cleanup_contract_watch_drop')
                                          AND e.evtenabled = 'A'
                                          AND e.evtfoid = to_regprocedure('cleanup.contract_watch()'))) THEN
        RETURN;
    END IF;
    SELECT * INTO rec FROM cleanup.schema_contract;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no schema contract is recorded' USING ERRCODE = 'CU403',
            HINT = 'run: cleanupctl install';
    END IF;
    live := cleanup.contract_components();
    IF cleanup.contract_fingerprint(live) = rec.fingerprint THEN
        IF rec.dirty THEN
            UPDATE cleanup.schema_contract SET dirty = false, dirty_since = NULL, dirty_reason = NULL
             WHERE singleton AND dirty
               AND singleton = (SELECT singleton FROM cleanup.schema_contract FOR UPDATE SKIP LOCKED);
        END IF;
        RETURN;
    END IF;
    SELECT coalesce(string_agg(k, ', ' ORDER BY k), 'function_settings') INTO changed
      FROM jsonb_object_keys(live || rec.components) AS k
     WHERE live->k IS DISTINCT FROM rec.components->k AND k <> 'function_settings';
    RAISE EXCEPTION 'schema contract drift: % changed since the installer recorded the contract; no step runs', changed
        USING ERRCODE = 'CU403',
              DETAIL = CASE WHEN rec.dirty
                            THEN format('last DDL: %s at %s', coalesce(rec.dirty_reason, '?'), rec.dirty_since)
                            ELSE 'no DDL was marked: the DDL watch is missing, disabled or changed' END,
              HINT = 'review the change; cleanupctl install re-applies the definitions and records the '
                     'contract again, or refuses and names what no contract may record (CU460)';
END $$;

-- Event trigger: any DDL that is not only about temporary objects marks the
-- contract dirty.
CREATE OR REPLACE FUNCTION cleanup.contract_watch()
RETURNS event_trigger LANGUAGE plpgsql
AS $$
DECLARE
    what text;
BEGIN
    IF to_regclass('cleanup.schema_contract') IS NULL THEN
        RETURN;
    END IF;
    IF TG_EVENT = 'ddl_command_end' THEN
        SELECT string_agg(DISTINCT command_tag || ' ' || coalesce(object_identity, ''), '; ') INTO what
          FROM pg_event_trigger_ddl_commands()
         WHERE NOT in_extension AND coalesce(schema_name, '') NOT LIKE 'pg_temp%';
    ELSE
        SELECT string_agg(DISTINCT object_type || ' ' || coalesce(object_identity, ''), '; ') INTO what
          FROM pg_event_trigger_dropped_objects()
         WHERE NOT is_temporary;
    END IF;
    IF what IS NOT NULL THEN
        UPDATE cleanup.schema_contract
           SET dirty = true, dirty_since = coalesce(dirty_since, now()), dirty_reason = left(what, 500)
         WHERE NOT dirty OR dirty_reason IS DISTINCT FROM left(what, 500);
    END IF;
END $$;

-- Event triggers need a superuser; without one the contract is still
-- recorded, and every step compares it in full (slower, same safety).
DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        DROP EVENT TRIGGER IF EXISTS cleanup_contract_watch;
        CREATE EVENT TRIGGER cleanup_contract_watch ON ddl_command_end
            EXECUTE FUNCTION cleanup.contract_watch();
        DROP EVENT TRIGGER IF EXISTS cleanup_contract_watch_drop;
        CREATE EVENT TRIGGER cleanup_contract_watch_drop ON sql_drop
            EXECUTE FUNCTION cleanup.contract_watch();
        -- Also for DDL run with session_replication_role = replica.
        ALTER EVENT TRIGGER cleanup_contract_watch ENABLE ALWAYS;
        ALTER EVENT TRIGGER cleanup_contract_watch_drop ENABLE ALWAYS;
    ELSE
        RAISE NOTICE 'not a superuser: no event trigger; steps compare the full contract';
    END IF;
END $$;
