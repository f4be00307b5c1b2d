-- 096_drift: drift never approves itself, across the whole graph (T6,
-- T6). The schema contract (095_contract.sql) makes every step
-- refuse a schema that changed since the installer recorded it; this file
-- is what keeps the installer from recording a schema no step may run on.
-- cleanup.drift_refusals names every such object; the installer calls it on
-- the schema as it finds it (before it applies anything: a disabled guard
-- trigger or a changed function setting would otherwise be papered over by
-- the definitions and never named) and again before it records the
-- contract (099_contract_record.sql), and cleanup.contract_record refuses
-- too, so the contract is never recorded with one. Refusals are CU460
-- (exit 4), each naming the object and what to do.
--
-- What is refused, and why:
--   * ON DELETE CASCADE, SET NULL or SET DEFAULT on any foreign key into a
--     table reachable from the inventory roots (media_servers, libraries,
--     items) through foreign keys, transitively: deleting a dependent's row
--     would delete or change rows the step never counts (a step recorded
--     128 mutations while cascading 384 rows: T6).
--   * A foreign key of that graph whose RI triggers do not fire in an
--     ordinary session (disabled, or replica-only): the key no longer
--     holds, so a delete the engine relies on to fail goes through.
--   * An engine (guard) trigger on a table of the graph that does not fire
--     in an ordinary session: admission, claims and dependent guards off.
--   * A foreign trigger (its function not in schema cleanup) on a table of
--     the graph: it runs inside a step, with work no budget counts.
--   * An inheritance child or partition of a table of the graph: a step's
--     DELETE reaches the children, which the foreign keys and the guards
--     of the parent do not cover.
--   * An engine function (schemas cleanup, inventory) whose settings (SET
--     clauses: lock_timeout, search_path, ...) were changed since the
--     contract recorded them, its body unchanged: ALTER FUNCTION
--     cleanup.job_step(...) RESET lock_timeout makes a step wait without
--     bound. (A function replaced whole is repaired by the definitions.)
-- Catalog reads only (and the recorded contract, passed in); names print
-- schema-qualified (search_path pinned here, not only by 098_privileges.sql:
-- the installer also runs this file on its own, in a savepoint, to look at
-- the schema as found with this bundle's rules, core/src/install.c).

-- The tables reachable from the inventory roots through foreign keys
-- (referencing tables, transitively), roots included. UNION (not UNION ALL)
-- keeps each table once, so a cycle ends the walk.
CREATE OR REPLACE FUNCTION cleanup.contract_reach()
RETURNS SETOF oid LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH RECURSIVE reach(rel) AS (
        SELECT to_regclass(r)::oid
          FROM unnest(ARRAY['inventory.media_servers', 'inventory.libraries', 'inventory.items']) AS r
         WHERE to_regclass(r) IS NOT NULL
        UNION
        SELECT c.conrelid FROM pg_catalog.pg_constraint c JOIN reach ON c.confrelid = reach.rel
         WHERE c.contype = 'f')
    SELECT rel FROM reach
$$;

-- One function's entry of 'function_settings': {"config": its settings,
-- sorted (RESET and SET again reorder proconfig without changing it),
-- "body": md5 of its body (prosqlbody for a SQL-standard body, which has
-- no prosrc)}.
-- contract_function_settings repeats the expression inline (a call per
-- function doubled its time); the two must stay the same.
CREATE OR REPLACE FUNCTION cleanup.contract_function_state(p_fn oid)
RETURNS jsonb LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object('config', to_jsonb(ARRAY(SELECT x FROM unnest(p.proconfig) AS x ORDER BY x)),
                              'body', md5(coalesce(p.prosqlbody::text, p.prosrc)))
      FROM pg_catalog.pg_proc p WHERE p.oid = p_fn
$$;

-- The settings (proconfig) of every engine function, by signature, with
-- a hash of its body: the contract records them (component
-- 'function_settings') so that the installer can name a function whose SET
-- clauses were changed since (ALTER FUNCTION ... SET / RESET: same body,
-- other settings). A function replaced whole (CREATE OR REPLACE, which
-- also drops its settings) has another body: that is drift the installer
-- repairs by applying the bundle's definition again, not a refusal.
CREATE OR REPLACE FUNCTION cleanup.contract_function_settings()
RETURNS jsonb LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(jsonb_object_agg(p.oid::regprocedure::text,
                                     jsonb_build_object('config', to_jsonb(ARRAY(SELECT x FROM unnest(p.proconfig) AS x
                                                                                  ORDER BY x)),
                                                        'body', md5(coalesce(p.prosqlbody::text, p.prosrc)))),
                    '{}'::jsonb)
      FROM pg_catalog.pg_proc p
     WHERE p.pronamespace IN ('cleanup'::regnamespace, 'inventory'::regnamespace) AND p.prokind IN ('f', 'p')
$$;

-- Every object the contract must not be recorded with, one line each
-- ('; '-separated, at most 20 named, then how many more), or NULL when
-- there is none. P_RECORDED: the recorded contract's components, for the
-- function settings (NULL: not compared, as after the definitions were
-- applied again, which set them to the bundle's).
CREATE OR REPLACE FUNCTION cleanup.drift_refusals(p_recorded jsonb)
RETURNS text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found text[];
BEGIN
    WITH reach AS (SELECT r AS rel FROM cleanup.contract_reach() AS r),
    edges AS (
        SELECT c.* FROM pg_catalog.pg_constraint c
         WHERE c.contype = 'f' AND c.confrelid IN (SELECT rel FROM reach)),
    lines AS (
        SELECT 1 AS o, e.conrelid::regclass::text AS k,
               format('foreign key %s(%s) -> %s ON DELETE %s (constraint %s): it would delete or change rows no step counts',
                      e.conrelid::regclass::text,
                      (SELECT string_agg(a.attname::text, ', ' ORDER BY u.n)
                         FROM unnest(e.conkey) WITH ORDINALITY AS u(att, n)
                         JOIN pg_catalog.pg_attribute a ON a.attrelid = e.conrelid AND a.attnum = u.att),
                      e.confrelid::regclass::text,
                      CASE e.confdeltype WHEN 'c' THEN 'cascade' WHEN 'n' THEN 'set null' ELSE 'set default' END,
                      e.conname) AS line
          FROM edges e WHERE e.confdeltype IN ('c', 'n', 'd')
        UNION ALL
        SELECT 2, e.conrelid::regclass::text,
               format('foreign key %s of %s is switched off: its trigger %s on %s is %s',
                      e.conname, e.conrelid::regclass::text, t.tgname, t.tgrelid::regclass::text,
                      CASE t.tgenabled WHEN 'D' THEN 'disabled' ELSE 'replica-only' END)
          FROM edges e JOIN pg_catalog.pg_trigger t ON t.tgconstraint = e.oid
         WHERE t.tgisinternal AND t.tgenabled NOT IN ('O', 'A')
        UNION ALL
        SELECT 3, t.tgrelid::regclass::text,
               CASE WHEN p.pronamespace = 'cleanup'::regnamespace
                    THEN format('guard trigger %s on %s is %s', t.tgname, t.tgrelid::regclass::text,
                                CASE t.tgenabled WHEN 'D' THEN 'disabled' ELSE 'replica-only' END)
                    ELSE format('foreign trigger %s on %s (function %s): it would run inside steps, outside the budget',
                                t.tgname, t.tgrelid::regclass::text, p.oid::regprocedure::text) END
          FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
         WHERE t.tgrelid IN (SELECT rel FROM reach) AND NOT t.tgisinternal
           AND (p.pronamespace <> 'cleanup'::regnamespace OR t.tgenabled NOT IN ('O', 'A'))
        UNION ALL
        SELECT 4, i.inhrelid::regclass::text,
               format('%s %s of %s: a step''s delete would reach it past the guards',
                      CASE WHEN c.relispartition THEN 'partition' ELSE 'inheritance child' END,
                      i.inhrelid::regclass::text, i.inhparent::regclass::text)
          FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent IN (SELECT rel FROM reach)
        UNION ALL
        SELECT 5, s.key,
               format('function %s: its settings changed since the contract was recorded (now [%s], recorded [%s])',
                      s.key, array_to_string(ARRAY(SELECT jsonb_array_elements_text(l.st->'config')), '; '),
                      array_to_string(ARRAY(SELECT x FROM jsonb_array_elements_text(s.value->'config') AS x
                                             ORDER BY x), '; '))
          FROM jsonb_each(CASE WHEN jsonb_typeof(p_recorded->'function_settings') = 'object'
                               THEN p_recorded->'function_settings' ELSE '{}'::jsonb END) AS s
          JOIN LATERAL (SELECT cleanup.contract_function_state(p.oid) AS st
                          FROM pg_catalog.pg_proc p
                         WHERE p.oid = to_regprocedure(s.key)
                           AND p.pronamespace IN ('cleanup'::regnamespace, 'inventory'::regnamespace)) l ON true
         WHERE jsonb_typeof(s.value) = 'object'
           AND l.st->'body' = s.value->'body'
           AND l.st->'config' IS DISTINCT FROM to_jsonb(ARRAY(SELECT x FROM jsonb_array_elements_text(s.value->'config') AS x
                                                             ORDER BY x)))
    SELECT array_agg(line ORDER BY o, k, line) INTO found FROM lines;
    IF found IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN array_to_string(found[1:20], '; ')
        || CASE WHEN cardinality(found) > 20 THEN format('; and %s more', cardinality(found) - 20) ELSE '' END;
END $$;

-- Raises CU460 naming every refusal (cleanup.drift_refusals) for a
-- contract about to be recorded; nothing is recorded (the caller's
-- transaction rolls back).
CREATE OR REPLACE FUNCTION cleanup.assert_no_drift(p_recorded jsonb)
RETURNS void LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found text := cleanup.drift_refusals(p_recorded);
BEGIN
    IF found IS NOT NULL THEN
        RAISE EXCEPTION 'install refused: the schema has drift that no contract may record: %', found
            USING ERRCODE = 'CU460',
                  DETAIL = 'recorded, it would let every step run with work outside its budget or without its '
                           'guards (T6: drift never approves itself); nothing was recorded or changed',
                  HINT = 'undo it (drop the cascade or the foreign trigger, ENABLE the trigger, detach the child, '
                         'ALTER FUNCTION ... SET the recorded settings again), then run cleanupctl install; '
                         'docs/data-model.md ("The schema contract")';
    END IF;
END $$;
