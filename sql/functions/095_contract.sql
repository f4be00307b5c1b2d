-- 095_contract: the schema contract (seed 001, "Bounded dependent work").
--
-- The contract fingerprints what the cleanup protocol relies on: the
-- monitored tables' columns and default expressions, constraints, indexes,
-- triggers (with their enabled state), rewrite rules and row-security flags;
-- every foreign key that references an inventory table (an unknown incoming
-- cascade would do uncounted work); and the definitions of the engine's own
-- functions. Only the installer records it (099_contract_record.sql); a
-- step compares it before its domain mutations and stops on drift (CU403).
-- It includes database-local names: it is not a portable restore receipt.
-- A correctness check, not authorization against a database owner.

CREATE OR REPLACE FUNCTION cleanup.contract_components()
RETURNS jsonb LANGUAGE sql STABLE
AS $$
WITH monitored(rel) AS (
    SELECT to_regclass(r) FROM unnest(ARRAY[
        'inventory.media_servers', 'inventory.libraries', 'inventory.items',
        'cleanup.jobs', 'cleanup.manifest', 'cleanup.job_steps', 'cleanup.job_retained',
        'cleanup.server_admission', 'cleanup.library_admission', 'cleanup.library_stats']) AS r
     WHERE to_regclass(r) IS NOT NULL),
parts AS (
    SELECT 'columns' AS part, string_agg(format('%s.%s %s %s %s', m.rel::text, a.attname,
                  format_type(a.atttypid, a.atttypmod), a.attnotnull,
                  coalesce(pg_get_expr(d.adbin, d.adrelid), '')), E'\n' ORDER BY m.rel::text, a.attnum) AS txt
      FROM monitored m JOIN pg_attribute a ON a.attrelid = m.rel AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    UNION ALL
    SELECT 'constraints', string_agg(format('%s %s %s', m.rel::text, c.conname, pg_get_constraintdef(c.oid)),
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
    SELECT 'incoming_foreign_keys', coalesce(string_agg(format('%s %s %s', c.conrelid::regclass::text, c.conname,
                                                               pg_get_constraintdef(c.oid)),
                                                        E'\n' ORDER BY c.conrelid::regclass::text, c.conname), '')
      FROM pg_constraint c
     WHERE c.contype = 'f'
       AND c.confrelid IN (SELECT rel FROM monitored WHERE rel::text LIKE 'inventory.%')
    UNION ALL
    SELECT 'functions', string_agg(format('%s(%s) %s %s %s', p.proname, pg_get_function_identity_arguments(p.oid),
                                          md5(p.prosrc), p.provolatile, p.prosecdef),
                                   E'\n' ORDER BY p.proname, pg_get_function_identity_arguments(p.oid))
      FROM pg_proc p WHERE p.pronamespace = 'cleanup'::regnamespace)
SELECT jsonb_object_agg(part, encode(sha256(convert_to(coalesce(txt, ''), 'UTF8')), 'hex')) FROM parts
$$;

CREATE OR REPLACE FUNCTION cleanup.contract_fingerprint(components jsonb)
RETURNS text LANGUAGE sql IMMUTABLE
AS $$ SELECT encode(sha256(convert_to(components::text, 'UTF8')), 'hex') $$;

-- Records the current contract. Called by the installer only.
CREATE OR REPLACE FUNCTION cleanup.contract_record()
RETURNS text LANGUAGE plpgsql
AS $$
DECLARE
    c jsonb := cleanup.contract_components();
    f text := cleanup.contract_fingerprint(c);
BEGIN
    INSERT INTO cleanup.schema_contract AS s (fingerprint, components)
    VALUES (f, c)
    ON CONFLICT (singleton) DO UPDATE
       SET fingerprint = excluded.fingerprint, components = excluded.components,
           recorded_at = now(), dirty = false, dirty_since = NULL, dirty_reason = NULL;
    RETURN f;
END $$;

-- Compares the live schema with the recorded contract; cheap unless DDL has
-- marked it dirty since. Raises CU403 naming the changed components. A
-- clean comparison clears the mark (in the caller's transaction).
CREATE OR REPLACE FUNCTION cleanup.contract_assert()
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    rec     cleanup.schema_contract;
    live    jsonb;
    changed text;
BEGIN
    SELECT * INTO rec FROM cleanup.schema_contract;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no schema contract is recorded' USING ERRCODE = 'CU403',
            HINT = 'run: cleanupctl install';
    END IF;
    -- Without a working event trigger nothing marks drift: compare always.
    IF NOT rec.dirty AND EXISTS (SELECT 1 FROM pg_event_trigger
                                  WHERE evtname = 'cleanup_contract_watch' AND evtenabled <> 'D') THEN
        RETURN;
    END IF;
    live := cleanup.contract_components();
    IF cleanup.contract_fingerprint(live) = rec.fingerprint THEN
        UPDATE cleanup.schema_contract SET dirty = false, dirty_since = NULL, dirty_reason = NULL;
        RETURN;
    END IF;
    SELECT string_agg(k, ', ' ORDER BY k) INTO changed
      FROM jsonb_object_keys(live || rec.components) AS k
     WHERE live->k IS DISTINCT FROM rec.components->k;
    RAISE EXCEPTION 'schema contract drift: % changed since the installer recorded the contract; no step runs', changed
        USING ERRCODE = 'CU403',
              DETAIL = format('last DDL: %s at %s', coalesce(rec.dirty_reason, '?'), rec.dirty_since),
              HINT = 'review the change; cleanupctl install re-applies the guards and records the contract';
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
    ELSE
        RAISE NOTICE 'not a superuser: no event trigger; steps compare the full contract';
    END IF;
END $$;
