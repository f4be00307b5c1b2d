-- 032_plan: the plan phase's dependency check (seed 004 section 3.1, seed
-- 001). Before a job fences anything, every foreign key that references
-- the tables its steps delete from must be one the protocol knows how to
-- drain. An unknown reference would either cascade uncounted work
-- (ON DELETE CASCADE / SET NULL: the 128-mutation budget would be a lie) or
-- make a delete fail after the drain had already removed the inventory
-- (RESTRICT / NO ACTION on a parent: an empty, fenced library stuck in
-- finalizing). So the job is refused up front, naming the reference, and
-- nothing changes. Catalog reads only; no SQL is generated from the graph.
-- References created after the installer recorded the schema contract are
-- also caught by every step's contract check (095_contract.sql).

-- Foreign keys referencing TABLES without a recorded disposition, one line
-- each ("public.lib_notes(library_id) -> inventory.libraries ON DELETE no
-- action"), or NULL when there are none.
CREATE OR REPLACE FUNCTION cleanup.unknown_references(p_tables regclass[])
RETURNS text LANGUAGE sql STABLE
-- Names print schema-qualified (regclass output omits schemas on the path).
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT string_agg(format('%s(%s) -> %s ON DELETE %s (constraint %s)',
                             c.conrelid::regclass::text,
                             (SELECT string_agg(a.attname::text, ', ' ORDER BY k.n)
                                FROM unnest(c.conkey) WITH ORDINALITY AS k(att, n)
                                JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.att),
                             c.confrelid::regclass::text,
                             CASE c.confdeltype WHEN 'a' THEN 'no action' WHEN 'r' THEN 'restrict'
                                                WHEN 'c' THEN 'cascade' WHEN 'n' THEN 'set null'
                                                WHEN 'd' THEN 'set default' ELSE '?' END,
                             c.conname),
                      '; ' ORDER BY c.conrelid::regclass::text, c.conname)
      FROM pg_constraint c
     WHERE c.contype = 'f'
       AND c.confrelid = ANY (p_tables)
       -- Known: a disposition recorded by the installer for this very
       -- constraint (055_dependents.sql), still NO ACTION or RESTRICT.
       AND (c.confdeltype NOT IN ('a', 'r')
            OR NOT EXISTS (SELECT 1 FROM cleanup.reference_dispositions d WHERE d.constraint_oid = c.oid))
$$;

-- Refuses (CU404) a job of KIND whose steps would delete from a table
-- with an unknown incoming foreign key.
CREATE OR REPLACE FUNCTION cleanup.assert_known_references(p_kind text)
RETURNS void LANGUAGE plpgsql STABLE
AS $$
DECLARE
    found text;
BEGIN
    found := cleanup.unknown_references(CASE p_kind
        WHEN 'prune' THEN ARRAY['inventory.items'::regclass]
        WHEN 'remove-library' THEN ARRAY['inventory.items'::regclass, 'inventory.libraries'::regclass]
        ELSE ARRAY['inventory.items'::regclass, 'inventory.libraries'::regclass,
                   'inventory.media_servers'::regclass] END);
    IF found IS NOT NULL THEN
        RAISE EXCEPTION '% job refused: % has references without a disposition the cleanup engine carries out: %',
            p_kind, CASE p_kind WHEN 'prune' THEN 'inventory.items' ELSE 'the inventory it deletes' END, found
            USING ERRCODE = 'CU404',
                  DETAIL = 'a cascade would do work outside the 128-mutation budget; an unknown restricting reference would fail the delete after the drain',
                  HINT = 'see cleanupctl deps and docs/data-model.md ("Dependents"); resolve the dependency (and run cleanupctl install), then retry';
    END IF;
END $$;

-- The installer's check (099_contract_record.sql), after recording the
-- dispositions: a contract that contains a reference into the inventory
-- without a disposition is not recorded; the install fails (CU404, exit 4)
-- naming it, and nothing of the install is committed.
CREATE OR REPLACE FUNCTION cleanup.assert_install_references()
RETURNS void LANGUAGE plpgsql STABLE
AS $$
DECLARE
    found text := cleanup.unknown_references(ARRAY['inventory.items'::regclass, 'inventory.libraries'::regclass,
                                                   'inventory.media_servers'::regclass]);
BEGIN
    IF found IS NOT NULL THEN
        RAISE EXCEPTION 'install refused: references into the inventory without a disposition: %', found
            USING ERRCODE = 'CU404',
                  DETAIL = 'the cleanup engine drains a fixed list of references, each NO ACTION or RESTRICT; '
                           'recording a contract with another would let it approve drift',
                  HINT = 'drop the constraint or make it one the engine knows (docs/data-model.md, "Dependents"), then install again';
    END IF;
END $$;
