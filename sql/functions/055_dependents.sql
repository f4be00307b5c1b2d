-- 055_dependents: dependent records (seed 001): dispositions,
-- dependent admission, claims, and the bounded drains the step engine
-- calls (060_step.sql). docs/steps.md ("Dependents and claims") and
-- docs/data-model.md ("Dependents") explain them.
--
-- SQLSTATEs added here (010_common.sql lists them all):
--   CUA10  a write to a claimed item (update, move, delete, or a write of
--          one of its dependents): rejected until the job deletes it
--   CUA11  a dependent write into a draining library or server
--   CUA12  a write that sets, changes or clears a claim (T1): claims are
--          the engine's (cleanup.job_claims), made and released by steps
--   CU102  a disposition that cannot be recorded (bad input)

-- The references the engine knows how to carry out: a fixed internal list
-- (the engine's drain SQL is written for exactly these; nothing is ever
-- generated from the graph). One row per (referencing table, columns,
-- referenced table). The protocol's own parent references come first.
CREATE OR REPLACE FUNCTION cleanup.known_references(
    OUT table_name text, OUT columns text, OUT referenced_table text, OUT disposition text)
RETURNS SETOF record LANGUAGE sql IMMUTABLE
AS $$
    VALUES ('inventory.items', 'library_id', 'inventory.libraries', 'delete-with-parent'),
           ('inventory.libraries', 'server_id', 'inventory.media_servers', 'delete-with-parent'),
           ('cleanup.library_admission', 'library_id', 'inventory.libraries', 'delete-with-parent'),
           ('cleanup.server_admission', 'server_id', 'inventory.media_servers', 'delete-with-parent'),
           ('inventory.item_retries', 'item_id', 'inventory.items', 'delete-with-item'),
           ('inventory.identity_review_previews', 'item_id', 'inventory.items', 'delete-with-item'),
           ('inventory.library_collections', 'library_id', 'inventory.libraries', 'delete-with-parent'),
           ('inventory.library_sync_status', 'library_id', 'inventory.libraries', 'delete-with-parent'),
           ('inventory.classification_history', 'library_id', 'inventory.libraries', 'detach-and-keep')
$$;

-- Records the disposition of foreign key P_CONSTRAINT of table P_TABLE
-- (schema-qualified). Refused (CU102, nothing recorded) when the table or
-- the constraint does not exist, when it is not a foreign key into the
-- inventory, when its ON DELETE is not NO ACTION or RESTRICT (D1: a
-- cascade would do uncounted work), or when the engine does not carry out
-- that disposition for that reference (cleanup.known_references). Only
-- the installer records dispositions (cleanup.record_dispositions).
CREATE OR REPLACE FUNCTION cleanup.record_disposition(p_table text, p_constraint text, p_disposition text)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel   regclass := to_regclass(p_table);
    c     pg_constraint;
    cols  text;
    ref   text;
BEGIN
    IF rel IS NULL OR p_table !~ '^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$' THEN
        RAISE EXCEPTION 'disposition for table "%" refused: no such table (write it schema-qualified, e.g. inventory.item_retries)',
            p_table USING ERRCODE = 'CU102';
    END IF;
    SELECT * INTO c FROM pg_constraint WHERE conrelid = rel AND conname = p_constraint;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'disposition for %.% refused: table % has no constraint "%"', p_table, p_constraint,
            p_table, p_constraint USING ERRCODE = 'CU102';
    END IF;
    ref := c.confrelid::regclass::text;
    IF c.contype <> 'f' OR ref NOT IN ('inventory.items', 'inventory.libraries', 'inventory.media_servers') THEN
        RAISE EXCEPTION 'disposition for %.% refused: it is not a foreign key into the inventory', p_table, p_constraint
            USING ERRCODE = 'CU102';
    END IF;
    IF c.confdeltype NOT IN ('a', 'r') THEN
        RAISE EXCEPTION 'disposition for %.% refused: ON DELETE % would delete or change rows outside the step budget',
            p_table, p_constraint,
            CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END
            USING ERRCODE = 'CU102', HINT = 'every reference into the inventory must be NO ACTION or RESTRICT (D1)';
    END IF;
    SELECT string_agg(a.attname::text, ', ' ORDER BY k.n) INTO cols
      FROM unnest(c.conkey) WITH ORDINALITY AS k(att, n)
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.att;
    IF NOT EXISTS (SELECT 1 FROM cleanup.known_references() k
                    WHERE k.table_name = p_table AND k.columns = cols AND k.referenced_table = ref
                      AND k.disposition = p_disposition) THEN
        RAISE EXCEPTION 'disposition "%" for %(%) -> % refused: the cleanup engine does not carry it out',
            p_disposition, p_table, cols, ref
            USING ERRCODE = 'CU102',
                  HINT = 'the engine drains a fixed list of references (docs/data-model.md, "Dependents")';
    END IF;
    INSERT INTO cleanup.reference_dispositions AS d
           (constraint_oid, constraint_name, table_name, columns, referenced_table, disposition)
    VALUES (c.oid, c.conname, p_table, cols, ref, p_disposition)
    ON CONFLICT (constraint_oid) DO UPDATE
       SET constraint_name = excluded.constraint_name, table_name = excluded.table_name,
           columns = excluded.columns, referenced_table = excluded.referenced_table,
           disposition = excluded.disposition, recorded_at = now(), recorded_by = current_user
     WHERE (d.constraint_name, d.table_name, d.columns, d.referenced_table, d.disposition)
           IS DISTINCT FROM (excluded.constraint_name, excluded.table_name, excluded.columns,
                             excluded.referenced_table, excluded.disposition);
END $$;

-- The installer's record: every foreign key that matches a known reference
-- (same table, columns and referenced table, NO ACTION or RESTRICT) gets
-- its disposition; rows of constraints that no longer exist, or no longer
-- match, go. A reference the list does not know stays unknown: install
-- then refuses to record the contract (CU404), and jobs and steps refuse.
CREATE OR REPLACE FUNCTION cleanup.record_dispositions()
RETURNS int LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x  record;
    n  int := 0;
BEGIN
    DELETE FROM cleanup.reference_dispositions d
     WHERE NOT EXISTS (SELECT 1 FROM pg_constraint c
                        WHERE c.oid = d.constraint_oid AND c.contype = 'f' AND c.confdeltype IN ('a', 'r')
                          AND c.conrelid::regclass::text = d.table_name);
    FOR x IN SELECT c.conrelid::regclass::text AS t, c.conname, k.disposition
               FROM pg_constraint c
               JOIN cleanup.known_references() k
                 ON k.table_name = c.conrelid::regclass::text
                AND k.referenced_table = c.confrelid::regclass::text
                AND k.columns = (SELECT string_agg(a.attname::text, ', ' ORDER BY u.n)
                                   FROM unnest(c.conkey) WITH ORDINALITY AS u(att, n)
                                   JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = u.att)
              WHERE c.contype = 'f' AND c.confdeltype IN ('a', 'r')
              ORDER BY 1, 2 LOOP
        PERFORM cleanup.record_disposition(x.t, x.conname, x.disposition);
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;

-- True when some foreign key into TABLES has no recorded disposition (or
-- is no longer NO ACTION / RESTRICT). Every step asks this under its locks
-- (the source table lock keeps DDL on inventory.items out until commit).
-- The foreign keys are found through what depends on TABLES
-- (pg_depend_reference_index: every foreign key records a dependency on
-- each referenced column), never by a scan of pg_constraint, which has
-- no index on confrelid: in a database that also holds another
-- application's tables that scan is read by every step (3,000 tables,
-- 9,218 constraints: 0.93 ms a call analyzed, more before; a prune step's
-- median 3.1 -> 5.4 ms; docs/benchmarks.md, "Catalog reads a step"). This
-- costs 42-47 us a call whatever the catalogs hold (the scan: 29 us on a
-- database of 218 constraints). The schema contract is not enough on its
-- own: install may have recorded drift (seed 001).
CREATE OR REPLACE FUNCTION cleanup.has_unknown_references(p_tables regclass[])
RETURNS boolean LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM unnest(p_tables) AS t(rel)
         -- Each table's dependencies, then each one's constraint, by the
         -- indexes' leading columns whatever the planner thinks of the
         -- catalogs' sizes (OFFSET 0: not flattened into a join it could
         -- turn into a scan). Not "refobjid = ANY (...)": on catalogs
         -- never analyzed the planner kept only refclassid as the index
         -- condition and read the dependencies of every relation (6,352
         -- rows in integration_test_plans' database).
         CROSS JOIN LATERAL (SELECT dp.objid FROM pg_depend dp
                              WHERE dp.refclassid = 'pg_class'::regclass AND dp.refobjid = t.rel::oid
                                AND dp.classid = 'pg_constraint'::regclass
                                -- a key's dependency on the columns it
                                -- references is normal; the table's own
                                -- constraints depend on it automatically
                                AND dp.deptype = 'n'
                             OFFSET 0) dp
         CROSS JOIN LATERAL (SELECT c.oid, c.confdeltype FROM pg_constraint c
                              WHERE c.oid = dp.objid AND c.contype = 'f' AND c.confrelid = t.rel::oid
                             OFFSET 0) c
         WHERE c.confdeltype NOT IN ('a', 'r')
            OR NOT EXISTS (SELECT 1 FROM cleanup.reference_dispositions d WHERE d.constraint_oid = c.oid));
END $$;

---------------------------------------------------------------------------
-- Dependent admission (D5). Statement triggers, like the items' guards:
-- the parent rows a statement's dependents point at are locked FOR SHARE
-- NOWAIT in ascending order (a cleanup step holding one FOR UPDATE makes
-- the writer busy, 55P03, never a waiter), then checked.
---------------------------------------------------------------------------

-- Admits dependents of items IDS (table P_WHAT): each item exists, is not
-- claimed (CUA10) and its library and server admit writes (CUA11). A
-- dependent written while a prune collects for the item's library is an
-- accepted write about that item (C9 for dependents): the item's external
-- ID is protected in the job's manifest, as an update of the item would.
CREATE OR REPLACE FUNCTION cleanup.admit_item_dependents(p_what text, ids bigint[])
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    r      record;
    libs   bigint[];
    n      int;
BEGIN
    -- SKIP LOCKED, then a count of what is there, not NOWAIT in an
    -- EXCEPTION block: a subtransaction's lock names nobody once it ends
    -- (cleanup.admit_writes).
    SELECT array_agg(DISTINCT i.library_id), count(*) - cardinality(ids) INTO libs, n
      FROM (SELECT i.id, i.library_id, i.claimed_by FROM inventory.items i
             WHERE i.id = ANY (ids) ORDER BY i.id FOR SHARE SKIP LOCKED) i;
    -- (IDS are distinct: the trigger's array_agg(DISTINCT); N < 0 when
    -- one was skipped, or is missing, which the foreign key refuses.)
    IF n < 0 AND n + cardinality(ids) < (SELECT count(*) FROM inventory.items i WHERE i.id = ANY (ids)) THEN
        SELECT i.id, i.xmax INTO r FROM inventory.items i
         WHERE i.id = ANY (ids) AND cardinality(cleanup.xid_pids(i.xmax)) > 0 ORDER BY i.id LIMIT 1;
        PERFORM cleanup.raise_row_busy(
            pg_catalog.format('an item these %s rows point at is locked by a cleanup step; retry later', p_what),
            pg_catalog.format('item %s', coalesce(r.id::text, '?')), r.xmax);
    END IF;
    SELECT i.id, i.claimed_by INTO r FROM inventory.items i
     WHERE i.id = ANY (ids) AND i.claimed_by IS NOT NULL ORDER BY i.id LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'item % is claimed by cleanup job %: no % rows for it until the job deletes it',
            r.id, r.claimed_by, p_what
            USING ERRCODE = 'CUA10', HINT = 'the item is being deleted with its dependents';
    END IF;
    IF libs IS NOT NULL AND cleanup.admit_dependent_libraries_collecting(p_what, libs) THEN
        PERFORM cleanup.protect_written(array_agg(i.library_id), array_agg(i.external_id))
           FROM inventory.items i WHERE i.id = ANY (ids);
    END IF;
END $$;

-- Admits dependents of libraries LIBS (table P_WHAT): the library rows
-- FOR SHARE without waiting, then their admission rows (cleanup.admit_writes);
-- a draining library or server refuses with CUA11. Returns whether a
-- prune collects for one of LIBS (cleanup.admit_writes).
CREATE OR REPLACE FUNCTION cleanup.admit_dependent_libraries_collecting(p_what text, libs bigint[])
RETURNS boolean LANGUAGE plpgsql
AS $$
DECLARE
    n  int;
    r  record;
BEGIN
    -- No subtransaction (cleanup.admit_writes): SKIP LOCKED and a count.
    SELECT count(*) INTO n
      FROM (SELECT 1 FROM inventory.libraries WHERE id = ANY (libs) ORDER BY id FOR SHARE SKIP LOCKED) q;
    -- (LIBS are distinct: array_agg(DISTINCT) in every caller.)
    IF n < cardinality(libs)
       AND n < (SELECT count(*) FROM inventory.libraries l WHERE l.id = ANY (libs)) THEN
        SELECT l.id, l.xmax INTO r FROM inventory.libraries l
         WHERE l.id = ANY (libs) AND cardinality(cleanup.xid_pids(l.xmax)) > 0 ORDER BY l.id LIMIT 1;
        PERFORM cleanup.raise_row_busy(
            pg_catalog.format('a library these %s rows belong to is locked by a cleanup step; retry later', p_what),
            pg_catalog.format('the row of library %s', coalesce(r.id::text, '?')), r.xmax);
    END IF;
    RETURN cleanup.admit_writes(libs, p_what);
END $$;

CREATE OR REPLACE FUNCTION cleanup.admit_dependent_libraries(p_what text, libs bigint[])
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM cleanup.admit_dependent_libraries_collecting(p_what, libs);
END $$;

-- Trigger: item dependents (item_retries, identity_review_previews),
-- inserts and updates. An update that re-points a row also needs the old
-- item to be unclaimed.
CREATE OR REPLACE FUNCTION cleanup.item_dependents_guard()
RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT item_id) INTO ids FROM new_rows;
    ELSE
        SELECT array_agg(DISTINCT x) INTO ids
          FROM (SELECT item_id AS x FROM new_rows UNION SELECT item_id FROM old_rows) s;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM cleanup.admit_item_dependents(TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME, ids);
    END IF;
    RETURN NULL;
END $$;

-- Trigger (BEFORE, each row): the item a new or changed item dependent
-- points at, locked FOR KEY SHARE NOWAIT before PostgreSQL's own foreign-
-- key check (an AFTER ROW trigger) would take the same lock and wait: a
-- writer meeting a cleanup step's FOR UPDATE (a claim being made) is busy
-- at once (55P03, D5), never a waiter. The statement trigger
-- (item_dependents_guard) then checks claims and admission.
CREATE OR REPLACE FUNCTION cleanup.item_dependents_nowait()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    -- SKIP LOCKED, not NOWAIT in an EXCEPTION block: no subtransaction
    -- for every row a writer inserts (as cleanup.try_engine_lock does).
    PERFORM 1 FROM inventory.items WHERE id = NEW.item_id FOR KEY SHARE SKIP LOCKED;
    IF NOT FOUND AND EXISTS (SELECT 1 FROM inventory.items WHERE id = NEW.item_id) THEN
        RAISE EXCEPTION 'item % is locked by a cleanup step; retry later', NEW.item_id
            USING ERRCODE = '55P03', HINT = 'busy: retry later';
    END IF;
    RETURN NEW;
END $$;

-- Trigger: deletes of item dependents. Free, except for a claimed item:
-- its dependents are the job's to delete (one transaction of the engine
-- holds the item's library lock).
CREATE OR REPLACE FUNCTION cleanup.item_dependents_delete_guard()
RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    r record;
BEGIN
    -- Each item probed by key (a join could be hashed over the whole
    -- inventory: the engine's claims drain ran this for every step). The
    -- library lock of a claimed item: a lock row whose xmax is this
    -- transaction's id is held (cleanup.holds_lock's first answer), read
    -- by a probe of this statement; only another xmax asks
    -- cleanup.holds_lock, a statement of its own (docs/benchmarks.md,
    -- "Removals and step cost").
    SELECT i.id, i.claimed_by, i.library_id INTO r
      FROM (SELECT DISTINCT o.item_id FROM old_rows o) o
     CROSS JOIN LATERAL (SELECT x.id, x.claimed_by, x.library_id FROM inventory.items x
                          WHERE x.id = o.item_id LIMIT 1) i
     WHERE i.claimed_by IS NOT NULL
       -- A CASE: the planner orders a WHERE's clauses by their cost.
       AND CASE WHEN EXISTS (SELECT 1 FROM cleanup.engine_locks l
                              WHERE l.key = cleanup.library_key(i.library_id)
                                AND l.xmax = pg_current_xact_id_if_assigned()::xid) THEN false
                ELSE NOT cleanup.holds_lock(cleanup.library_key(i.library_id)) END
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'item % is claimed by cleanup job %: its % rows are deleted by the job',
            r.id, r.claimed_by, TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME
            USING ERRCODE = 'CUA10';
    END IF;
    RETURN NULL;
END $$;

-- Trigger: library dependents (library_collections, library_sync_status,
-- classification_history), every write. Rows of a draining library change
-- only in the cleanup transaction that holds its library lock (the step's
-- drain and the history detachment, D6); everything else is refused there.
CREATE OR REPLACE FUNCTION cleanup.library_dependents_guard()
RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    libs bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT library_id) INTO libs FROM new_rows WHERE library_id IS NOT NULL;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT library_id) INTO libs FROM old_rows WHERE library_id IS NOT NULL;
    ELSE
        SELECT array_agg(DISTINCT x) INTO libs
          FROM (SELECT library_id AS x FROM new_rows UNION SELECT library_id FROM old_rows) s
         WHERE x IS NOT NULL;
    END IF;
    IF libs IS NULL THEN
        RETURN NULL;
    END IF;
    -- The engine's own drain (it holds every library lock involved).
    IF NOT EXISTS (SELECT 1 FROM unnest(libs) l WHERE NOT cleanup.holds_lock(cleanup.library_key(l))) THEN
        RETURN NULL;
    END IF;
    PERFORM cleanup.admit_dependent_libraries(TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME, libs);
    RETURN NULL;
END $$;

-- Trigger: a claimed item cannot be updated, moved or deleted except by
-- the engine (D4, T1): a step deleting it, or a step changing only its
-- claim (releasing it, or taking over a mark no job of the engine made),
-- both under the library lock the step holds. Row trigger, fired only for
-- claimed rows (WHEN), so unclaimed writes pay nothing.
CREATE OR REPLACE FUNCTION cleanup.items_claim_guard()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    IF cleanup.holds_lock(cleanup.library_key(OLD.library_id))
       AND (TG_OP = 'DELETE'
            OR (NEW.claimed_by IS DISTINCT FROM OLD.claimed_by
                AND (to_jsonb(NEW) - 'claimed_by') = (to_jsonb(OLD) - 'claimed_by'))) THEN
        RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    RAISE EXCEPTION 'item % is claimed by cleanup job %: it cannot be % until the job deletes it',
        OLD.id, OLD.claimed_by, CASE TG_OP WHEN 'DELETE' THEN 'deleted' ELSE 'changed or moved' END
        USING ERRCODE = 'CUA10', HINT = 'the item is being deleted with its dependents';
END $$;

DROP TRIGGER IF EXISTS items_claim_guard ON inventory.items;
CREATE TRIGGER items_claim_guard BEFORE UPDATE OR DELETE ON inventory.items
    FOR EACH ROW WHEN (OLD.claimed_by IS NOT NULL)
    EXECUTE FUNCTION cleanup.items_claim_guard();

-- Trigger: nobody but the engine sets a claim (T1). An insert never
-- carries one; an update that sets one on an unclaimed row is a step's
-- claim only when this transaction holds the row's library lock (which
-- no login outside the engine can take), the row stays where it is, and
-- the claim names a draining job. Fired only when the new row carries a
-- claim the old one did not (WHEN), so writes that leave claimed_by alone,
-- ORMs writing back the value they read included, pay nothing.
-- One statement for a step's claim: the lock row locked by this very
-- transaction (its xmax is this transaction's id: cleanup.holds_lock's
-- first answer) is read in the statement that reads the job; only another
-- xmax asks cleanup.holds_lock (docs/benchmarks.md, "Removals and step
-- cost").
CREATE OR REPLACE FUNCTION cleanup.items_claim_set_guard()
RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.library_id = OLD.library_id
       AND EXISTS (SELECT 1 FROM cleanup.jobs j WHERE j.id = NEW.claimed_by AND j.phase = 'draining')
       AND (EXISTS (SELECT 1 FROM cleanup.engine_locks l
                     WHERE l.key = cleanup.library_key(NEW.library_id)
                       AND l.xmax = pg_current_xact_id_if_assigned()::xid)
            OR cleanup.holds_lock(cleanup.library_key(NEW.library_id))) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'item %: claimed_by is set only by a cleanup step (tried %)',
        NEW.id, NEW.claimed_by
        USING ERRCODE = 'CUA12',
              HINT = 'claims are the cleanup engine''s; write items with claimed_by NULL or unchanged';
END $$;

DROP TRIGGER IF EXISTS items_claim_set_guard_insert ON inventory.items;
CREATE TRIGGER items_claim_set_guard_insert BEFORE INSERT ON inventory.items
    FOR EACH ROW WHEN (NEW.claimed_by IS NOT NULL)
    EXECUTE FUNCTION cleanup.items_claim_set_guard();
DROP TRIGGER IF EXISTS items_claim_set_guard_update ON inventory.items;
CREATE TRIGGER items_claim_set_guard_update BEFORE UPDATE OF claimed_by ON inventory.items
    FOR EACH ROW WHEN (OLD.claimed_by IS NULL AND NEW.claimed_by IS NOT NULL)
    EXECUTE FUNCTION cleanup.items_claim_set_guard();

-- The guards of the five dependent tables: admission on insert and
-- update, the delete guard, and TRUNCATE refused (it skips row and
-- statement triggers, like on the inventory tables: 020_admission.sql).
DO $$
DECLARE
    t   text;
    fn  text;
    del text;
BEGIN
    FOREACH t IN ARRAY ARRAY['item_retries', 'identity_review_previews', 'library_collections',
                             'library_sync_status', 'classification_history'] LOOP
        fn := CASE WHEN t IN ('item_retries', 'identity_review_previews')
                   THEN 'item_dependents_guard' ELSE 'library_dependents_guard' END;
        del := CASE WHEN t IN ('item_retries', 'identity_review_previews')
                    THEN 'item_dependents_delete_guard' ELSE 'library_dependents_guard' END;
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON inventory.%I', t || '_admit_insert', t);
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON inventory.%I REFERENCING NEW TABLE AS new_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION cleanup.%I()', t || '_admit_insert', t, fn);
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON inventory.%I', t || '_admit_update', t);
        EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON inventory.%I REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION cleanup.%I()', t || '_admit_update', t, fn);
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON inventory.%I', t || '_guard_delete', t);
        EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON inventory.%I REFERENCING OLD TABLE AS old_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION cleanup.%I()', t || '_guard_delete', t, del);
        IF fn = 'item_dependents_guard' THEN
            EXECUTE format('DROP TRIGGER IF EXISTS %I ON inventory.%I', t || '_nowait', t);
            EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE OF item_id ON inventory.%I '
                           'FOR EACH ROW EXECUTE FUNCTION cleanup.item_dependents_nowait()', t || '_nowait', t);
        END IF;
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON inventory.%I', t || '_guard_truncate', t);
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON inventory.%I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION cleanup.inventory_truncate_guard()', t || '_guard_truncate', t);
    END LOOP;
END $$;

---------------------------------------------------------------------------
-- Bounded drains, called by the step engine under its locks (060_step.sql).
---------------------------------------------------------------------------

-- Which items of a batch fit budget P_LEFT, item k costing P_COST[k] (1 +
-- its dependents): first fit in the array's order, one flag per item.
CREATE OR REPLACE FUNCTION cleanup.fit_in_budget(p_left int, p_cost int[])
RETURNS boolean[] LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    v_fit  boolean[] := '{}'::boolean[];
    v_left int := p_left;
    c      int;
BEGIN
    FOREACH c IN ARRAY p_cost LOOP
        v_fit := v_fit || (c <= v_left);
        IF c <= v_left THEN
            v_left := v_left - c;
        END IF;
    END LOOP;
    RETURN v_fit;
END $$;

-- Deletes every dependent of items P_IDS (their retries and previews),
-- item k having P_N[k] of them when they were counted; returns how many of
-- each went, and HELD: the items whose dependents are not all there to
-- take. Called under the items' FOR UPDATE (a step's lock or a claim's),
-- for items whose dependents fit the budget: by cleanup.step_drain and
-- cleanup.claims_drain. One statement: every dependent of the items is
-- locked FOR UPDATE SKIP LOCKED first, and an item is done only when all
-- P_N[k] of its dependents were locked (the two tables' deletes do not see
-- each other). A dependent another transaction holds (a sync writer's
-- UPDATE or SELECT ... FOR UPDATE of a retry, which needs no lock of the
-- item) is skipped, never waited for: its item is in HELD, and its
-- dependents and it stay (the caller retains it, or keeps its claim, and
-- names the holder, T3/T4: cleanup.raise_item_held). Before this, the
-- DELETE waited for the holder until the step's lock_timeout, and the busy
-- answer named nobody. A count that changed since it was taken (none can
-- be added under the item's lock, one can be deleted) holds the item back
-- too: its deletes would not be the mutations the budget counted.
-- With P_PARTIAL (claimed items, whose dependents are being drained
-- anyway), the dependents of a held item that were locked go all the same.
DROP FUNCTION IF EXISTS cleanup.delete_item_dependents(bigint[]);
CREATE OR REPLACE FUNCTION cleanup.delete_item_dependents(p_ids bigint[], p_n int[], p_partial boolean,
    OUT n_retries int, OUT n_previews int, OUT held bigint[])
LANGUAGE plpgsql
AS $$
BEGIN
    WITH lr AS MATERIALIZED (SELECT r.item_id, r.ctid AS t FROM inventory.item_retries r
                              WHERE r.item_id = ANY (p_ids) FOR UPDATE SKIP LOCKED),
         lp AS MATERIALIZED (SELECT p.item_id, p.ctid AS t FROM inventory.identity_review_previews p
                              WHERE p.item_id = ANY (p_ids) FOR UPDATE SKIP LOCKED),
         got AS (SELECT q.item_id, count(*) AS n
                   FROM (SELECT lr.item_id FROM lr UNION ALL SELECT lp.item_id FROM lp) q GROUP BY q.item_id),
         v AS MATERIALIZED (SELECT u.x, coalesce(g.n, 0) = u.n AS ok
                              FROM unnest(p_ids, p_n) AS u(x, n) LEFT JOIN got g ON g.item_id = u.x),
         dr AS (DELETE FROM inventory.item_retries r
                 WHERE r.ctid = ANY (ARRAY(SELECT lr.t FROM lr JOIN v ON v.x = lr.item_id WHERE v.ok OR p_partial))
                RETURNING 1),
         dp AS (DELETE FROM inventory.identity_review_previews p
                 WHERE p.ctid = ANY (ARRAY(SELECT lp.t FROM lp JOIN v ON v.x = lp.item_id WHERE v.ok OR p_partial))
                RETURNING 1)
    SELECT (SELECT count(*) FROM dr), (SELECT count(*) FROM dp), (SELECT array_agg(v.x) FROM v WHERE NOT v.ok)
      INTO n_retries, n_previews, held;
END $$;

-- Claims in flight of job P_JOB (T1): the claims it recorded in
-- cleanup.job_claims, at most P_BUDGET of them in item id order, their
-- items locked FOR UPDATE SKIP LOCKED (a skipped one stays claimed for a
-- later step). A claim is good when its item still carries the version
-- the claim wrote (xmin), the claim mark names the job, the item is in
-- the job's scope (its library; for remove-server a library of its
-- server) and, for a prune, its external ID is not in the manifest and
-- its id is at or below the high-water id: the checks every candidate
-- passes (S2, S3). Good claims: each costs 1 + its dependents; those
-- that fit P_BUDGET, first fit in item id order, are deleted whole, their
-- dependents and then they (an item is deleted last, D2); what is left of
-- P_BUDGET goes to the other claims' dependents, retries first, then
-- previews (their items in a later step). Every other claim is released: its item gone,
-- absent; out of scope, moved; else retained (its mark cleared; a later
-- pass looks at it afresh). N_HELD: claims skipped because another
-- transaction holds their item, or a dependent of it (never waited for:
-- cleanup.delete_item_dependents; the step names the holder through
-- cleanup.raise_item_held). N_LEFT: claims still in flight after this.
-- With P_PREVIEW nothing is locked or changed and the counts are
-- predictions.
DROP FUNCTION IF EXISTS cleanup.claims_drain(bigint, int, boolean);
CREATE OR REPLACE FUNCTION cleanup.claims_drain(p_job bigint, p_budget int, p_preview boolean,
    OUT n_items int, OUT n_retries int, OUT n_previews int, OUT n_left int,
    OUT n_absent int, OUT n_moved int, OUT n_retained int, OUT n_held int)
LANGUAGE plpgsql
AS $$
DECLARE
    v_n_all int;               -- the job's claims before this drain
    v_ids   bigint[];          -- good claims, their items locked
    v_ret   bigint[];          -- released: retained (mark to clear)
    v_rel   bigint[];          -- every claim released by a verdict
    v_gone  bigint[];          -- released: absent
    v_n     int := p_budget;
    v_done  bigint[];          -- items deleted
    v_nr    int[];             -- each good claim's retries, previews (at most 128 each)
    v_np    int[];
    v_fit   bigint[];          -- good claims deleted whole in this drain
    v_rest  bigint[];          -- the others
    v_nr1   int;               -- the others' retries, previews deleted
    v_np1   int;
    v_held  bigint[];          -- good claims that fit, a dependent of which another transaction holds
BEGIN
    n_items := 0; n_retries := 0; n_previews := 0; n_absent := 0; n_moved := 0; n_retained := 0; n_held := 0;
    IF p_preview THEN
        v_ids := ARRAY(SELECT c.item_id FROM cleanup.job_claims c WHERE c.job_id = p_job
                        ORDER BY c.job_id, c.item_id LIMIT p_budget);
    ELSE
        -- Lock and judge, one statement: each claim's item by key, locked
        -- FOR UPDATE SKIP LOCKED, then the checks of every candidate
        -- against the job's row (locked by the step: read here by key, not
        -- in a statement of its own); and how many claims the job has (an
        -- init plan over the claims' keys; a step claims only when none
        -- are in flight, at most 128), so that the statement after it runs
        -- only when the lock did not return some of them, and N_LEFT needs
        -- no count of its own.
        SELECT array_agg(v.item_id) FILTER (WHERE v.verdict = 'good'),
               array_agg(v.item_id) FILTER (WHERE v.verdict = 'retained'),
               array_agg(v.item_id) FILTER (WHERE v.verdict <> 'good'),
               count(*) FILTER (WHERE v.verdict = 'moved'),
               count(*) FILTER (WHERE v.verdict = 'retained'),
               (SELECT count(*) FROM cleanup.job_claims c WHERE c.job_id = p_job)
          INTO v_ids, v_ret, v_rel, n_moved, n_retained, v_n_all
          FROM (SELECT l.item_id,
                       CASE
                         WHEN NOT (CASE WHEN j.kind = 'remove-server'
                                        THEN EXISTS (SELECT 1 FROM inventory.libraries lb
                                                      WHERE lb.id = l.library_id AND lb.server_id = j.server_id)
                                        ELSE l.library_id = j.library_id END)
                           THEN 'moved'
                         WHEN l.claimed_by IS DISTINCT FROM p_job OR NOT (l.x = l.claimed_xid)
                           THEN 'retained'
                         WHEN j.kind = 'prune'
                              AND (l.item_id > j.high_water_id
                                   OR coalesce((SELECT true FROM cleanup.manifest m
                                                 WHERE m.job_id = p_job AND m.external_id = l.external_id
                                                 LIMIT 1), false))
                           THEN 'retained'
                         ELSE 'good'
                       END AS verdict
                  FROM (SELECT c.item_id, c.claimed_xid, i.xmin AS x, i.library_id, i.claimed_by, i.external_id
                          FROM (SELECT c.item_id, c.claimed_xid FROM cleanup.job_claims c
                                 WHERE c.job_id = p_job ORDER BY c.job_id, c.item_id LIMIT p_budget) c
                          JOIN inventory.items i ON i.id = c.item_id
                           FOR UPDATE OF i SKIP LOCKED) l
                 CROSS JOIN (SELECT x.kind, x.server_id, x.library_id, x.high_water_id
                               FROM cleanup.jobs x WHERE x.id = p_job) j
                OFFSET 0) v;
        n_moved := coalesce(n_moved, 0);
        n_retained := coalesce(n_retained, 0);
        IF coalesce(cardinality(v_ids), 0) + coalesce(cardinality(v_rel), 0) < least(v_n_all, p_budget) THEN
            -- The claims whose item the lock did not return: gone (absent,
            -- released) or held by another transaction (skipped, stays).
            SELECT array_agg(c.item_id) FILTER (WHERE i.id IS NULL),
                   count(*) FILTER (WHERE i.id IS NOT NULL)
              INTO v_gone, n_held
              FROM (SELECT c.item_id FROM cleanup.job_claims c
                     WHERE c.job_id = p_job ORDER BY c.job_id, c.item_id LIMIT p_budget) c
              LEFT JOIN LATERAL (SELECT x.id FROM inventory.items x WHERE x.id = c.item_id LIMIT 1) i ON true
             WHERE c.item_id <> ALL (coalesce(v_ids, '{}'::bigint[]) || coalesce(v_rel, '{}'::bigint[]));
        END IF;
        n_absent := coalesce(cardinality(v_gone), 0);
        -- Released claims leave the record; a retained one's mark is
        -- cleared (the engine's own change: this step holds the library
        -- lock, and only claimed_by changes).
        IF v_rel IS NOT NULL OR v_gone IS NOT NULL THEN
            DELETE FROM cleanup.job_claims c
             WHERE c.job_id = p_job AND c.item_id = ANY (coalesce(v_rel, '{}'::bigint[]) || coalesce(v_gone, '{}'::bigint[]));
        END IF;
        IF v_ret IS NOT NULL THEN
            UPDATE inventory.items i SET claimed_by = NULL WHERE i.id = ANY (v_ret) AND i.claimed_by = p_job;
            INSERT INTO cleanup.job_retained (job_id, item_id)
            SELECT p_job, x FROM unnest(v_ret) AS x ON CONFLICT DO NOTHING;
        END IF;
    END IF;
    IF cardinality(v_ids) > 0 AND v_n > 0 THEN
        -- Each good claim costs 1 + its dependents (each table's count
        -- stops at 128: such an item never fits a budget). The claims
        -- that fit the budget, first fit in v_ids' order
        -- (cleanup.fit_in_budget), go whole: their dependents, then the
        -- items. What that leaves goes to the others' dependents (below).
        -- (Draining every claim's retries before any claim's previews,
        -- and an item only once none of the claims had dependents left,
        -- kept every claim in flight for as many steps as all their
        -- dependents took.)
        SELECT array_agg(c.nr ORDER BY c.o), array_agg(c.np ORDER BY c.o) INTO v_nr, v_np
          FROM (SELECT u.o,
                       (SELECT count(*) FROM (SELECT 1 FROM inventory.item_retries r
                                               WHERE r.item_id = u.x LIMIT 128) r)::int AS nr,
                       (SELECT count(*) FROM (SELECT 1 FROM inventory.identity_review_previews r
                                               WHERE r.item_id = u.x LIMIT 128) r)::int AS np
                  FROM unnest(v_ids) WITH ORDINALITY u(x, o)) c;
        SELECT array_agg(u.x) FILTER (WHERE u.fit), array_agg(u.x) FILTER (WHERE NOT u.fit),
               coalesce(sum(u.nr) FILTER (WHERE u.fit), 0), coalesce(sum(u.np) FILTER (WHERE u.fit), 0)
          INTO v_fit, v_rest, n_retries, n_previews
          FROM unnest(v_ids, v_nr, v_np,
                      cleanup.fit_in_budget(v_n, ARRAY(SELECT 1 + a + b FROM unnest(v_nr, v_np) AS c(a, b))))
               AS u(x, nr, np, fit);
        IF p_preview THEN
            n_items := coalesce(cardinality(v_fit), 0);
        ELSIF v_fit IS NOT NULL THEN
            IF n_retries + n_previews > 0 THEN
                SELECT x.n_retries, x.n_previews, x.held INTO n_retries, n_previews, v_held
                  FROM cleanup.delete_item_dependents(
                           v_fit, ARRAY(SELECT u.nr + u.np FROM unnest(v_ids, v_nr, v_np) AS u(x, nr, np)
                                         WHERE u.x = ANY (v_fit) ORDER BY array_position(v_fit, u.x)),
                           true) x;
                IF v_held IS NOT NULL THEN
                    -- A dependent another transaction holds: the claim
                    -- stays in flight, held like a claim whose item is
                    -- (its other dependents went).
                    v_fit := ARRAY(SELECT x FROM unnest(v_fit) AS x WHERE x <> ALL (v_held));
                    n_held := n_held + cardinality(v_held);
                END IF;
            END IF;
            WITH d AS (DELETE FROM inventory.items i WHERE i.id = ANY (v_fit) AND i.claimed_by = p_job
                       RETURNING i.id)
            SELECT array_agg(d.id) INTO v_done FROM d;
            n_items := coalesce(cardinality(v_done), 0);
            IF n_items > 0 THEN
                DELETE FROM cleanup.job_claims c WHERE c.job_id = p_job AND c.item_id = ANY (v_done);
            END IF;
        END IF;
        v_n := v_n - n_items - n_retries - n_previews;
        IF v_rest IS NOT NULL AND v_n > 0 THEN
            -- The claims that did not fit: their dependents with what is
            -- left, retries first, then previews, in v_rest's order; the
            -- items in a later step. The walk stops at the budget (the
            -- LIMIT ends the nested loop): index (item_id, id) probes only.
            IF p_preview THEN
                SELECT count(*) INTO v_nr1 FROM (
                    SELECT 1 FROM unnest(v_rest) WITH ORDINALITY u(x, o)
                     CROSS JOIN LATERAL (SELECT r.id FROM inventory.item_retries r WHERE r.item_id = u.x) r
                     LIMIT v_n) q;
                SELECT count(*) INTO v_np1 FROM (
                    SELECT 1 FROM unnest(v_rest) WITH ORDINALITY u(x, o)
                     CROSS JOIN LATERAL (SELECT r.id FROM inventory.identity_review_previews r WHERE r.item_id = u.x) r
                     LIMIT v_n - v_nr1) q;
            ELSE
                -- One statement (the two tables' deletes do not see each
                -- other). Each dependent is locked FOR UPDATE SKIP LOCKED
                -- before its delete: one another transaction holds is
                -- skipped, never waited for (its claim stays in flight,
                -- held, once nothing else of it is left).
                WITH rr AS MATERIALIZED (
                         SELECT r.id FROM unnest(v_rest) WITH ORDINALITY u(x, o)
                          CROSS JOIN LATERAL (SELECT r.id FROM inventory.item_retries r
                                               WHERE r.item_id = u.x ORDER BY r.item_id, r.id
                                                 FOR UPDATE SKIP LOCKED) r
                          LIMIT v_n),
                     dr AS (DELETE FROM inventory.item_retries WHERE id = ANY (ARRAY(SELECT rr.id FROM rr)) RETURNING 1),
                     dp AS (DELETE FROM inventory.identity_review_previews
                             WHERE id = ANY (ARRAY(SELECT p.id FROM unnest(v_rest) WITH ORDINALITY u(x, o)
                                                    CROSS JOIN LATERAL (SELECT p.id FROM inventory.identity_review_previews p
                                                                         WHERE p.item_id = u.x ORDER BY p.item_id, p.id
                                                                           FOR UPDATE SKIP LOCKED) p
                                                    LIMIT greatest(v_n - (SELECT count(*) FROM rr), 0)))
                            RETURNING 1)
                SELECT (SELECT count(*) FROM dr), (SELECT count(*) FROM dp) INTO v_nr1, v_np1;
            END IF;
            n_retries := n_retries + v_nr1;
            n_previews := n_previews + v_np1;
        END IF;
    END IF;
    IF p_preview THEN
        SELECT count(*) - n_items INTO n_left FROM cleanup.job_claims WHERE job_id = p_job;
    ELSE
        -- Every claim released or deleted above left cleanup.job_claims.
        n_left := v_n_all - coalesce(cardinality(v_rel), 0) - coalesce(cardinality(v_gone), 0) - n_items;
    END IF;
END $$;

-- Releases every claim of job P_JOB (T2: a job's claims end with it): a
-- cancelled job's, before its admission reopens. Under the libraries'
-- locks (taken here without waiting, 55P03 naming the holder), the marks
-- are cleared and the record emptied. Returns how many were released.
CREATE OR REPLACE FUNCTION cleanup.release_claims(p_job bigint)
RETURNS int LANGUAGE plpgsql
AS $$
DECLARE
    v_libs bigint[];
    n      int;
BEGIN
    v_libs := ARRAY(SELECT DISTINCT c.library_id FROM cleanup.job_claims c WHERE c.job_id = p_job ORDER BY 1);
    IF cardinality(v_libs) = 0 THEN
        RETURN 0;
    END IF;
    PERFORM cleanup.lock_libraries(v_libs);
    UPDATE inventory.items i SET claimed_by = NULL
      FROM cleanup.job_claims c
     WHERE c.job_id = p_job AND i.id = c.item_id AND i.claimed_by = p_job;
    DELETE FROM cleanup.job_claims WHERE job_id = p_job;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

-- Raises 55P03: library P_LIB cannot be deleted yet, because another
-- transaction holds one of its own dependents (a collection, its sync
-- status, a history record), naming the holder of the first one (T3).
CREATE OR REPLACE FUNCTION cleanup.raise_library_dependent_held(p_lib bigint)
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    r record;
BEGIN
    SELECT x.what, x.xmax INTO r
      FROM (SELECT 1 AS k, c.id, pg_catalog.format('collection %s of library %s', c.id, p_lib) AS what, c.xmax
              FROM inventory.library_collections c WHERE c.library_id = p_lib
            UNION ALL
            SELECT 2, 0, pg_catalog.format('the sync status of library %s', p_lib), st.xmax
              FROM inventory.library_sync_status st WHERE st.library_id = p_lib
            UNION ALL
            SELECT 3, h.id, pg_catalog.format('history record %s of library %s', h.id, p_lib), h.xmax
              FROM inventory.classification_history h WHERE h.library_id = p_lib) x
     WHERE x.xmax <> '0'::xid AND cardinality(cleanup.xid_pids(x.xmax)) > 0
     ORDER BY x.k, x.id LIMIT 1;
    PERFORM cleanup.raise_row_busy(
        pg_catalog.format('library %s cannot be deleted yet: %s is locked by another transaction',
                          p_lib, coalesce(r.what, 'one of its dependents')),
        coalesce(r.what, pg_catalog.format('a dependent of library %s', p_lib)), r.xmax,
        'busy: retry later; the library is deleted once the holder commits or rolls back');
END $$;

-- Library dependents of library P_LIB before its parent delete (item 6):
-- collections, then sync status, then history detachment (D6), at most
-- P_BUDGET mutations together. N_LEFT: whether any remain (0/1). A row
-- another transaction holds (a writer's SELECT ... FOR UPDATE, or a write
-- begun before the library closed) is skipped, never waited for: the
-- drain goes on with the others, and once only held rows are left, it is
-- busy (55P03) naming the holder (cleanup.raise_library_dependent_held)
-- instead of a lock timeout that named nobody, or a parent delete that
-- the foreign key refuses.
CREATE OR REPLACE FUNCTION cleanup.library_dependents_drain(p_lib bigint, p_budget int, p_preview boolean,
    OUT n_collections int, OUT n_sync int, OUT n_history int, OUT n_left int)
LANGUAGE plpgsql
AS $$
DECLARE
    v_n     int := p_budget;
    v_name  text;
BEGIN
    n_collections := 0; n_sync := 0; n_history := 0;
    IF p_preview THEN
        SELECT count(*) INTO n_collections FROM (SELECT 1 FROM inventory.library_collections
                                                  WHERE library_id = p_lib LIMIT v_n) q;
        v_n := v_n - n_collections;
        SELECT count(*) INTO n_sync FROM (SELECT 1 FROM inventory.library_sync_status
                                           WHERE library_id = p_lib LIMIT v_n) q;
        v_n := v_n - n_sync;
        SELECT count(*) INTO n_history FROM (SELECT 1 FROM inventory.classification_history
                                              WHERE library_id = p_lib LIMIT v_n) q;
    ELSE
        DELETE FROM inventory.library_collections
         WHERE id = ANY (ARRAY(SELECT id FROM inventory.library_collections
                                WHERE library_id = p_lib ORDER BY library_id, id LIMIT v_n
                                  FOR UPDATE SKIP LOCKED));
        GET DIAGNOSTICS n_collections = ROW_COUNT;
        v_n := v_n - n_collections;
        IF v_n > 0 THEN
            DELETE FROM inventory.library_sync_status
             WHERE ctid = ANY (ARRAY(SELECT ctid FROM inventory.library_sync_status
                                      WHERE library_id = p_lib LIMIT v_n FOR UPDATE SKIP LOCKED));
            GET DIAGNOSTICS n_sync = ROW_COUNT;
            v_n := v_n - n_sync;
        END IF;
        IF v_n > 0 THEN
            -- D6: the one narrow operation that changes history of a
            -- draining library (the guard lets it through because this
            -- transaction holds the library lock).
            SELECT name INTO v_name FROM inventory.libraries WHERE id = p_lib;
            UPDATE inventory.classification_history h
               SET library_id = NULL,
                   library_name = coalesce(h.library_name, v_name),
                   status_before_detach = h.status,
                   status = CASE WHEN h.status = 'failed' THEN h.status ELSE 'failed' END,
                   error = coalesce(h.error, 'library deleted'),
                   detached_at = now()
             WHERE h.id = ANY (ARRAY(SELECT id FROM inventory.classification_history
                                      WHERE library_id = p_lib ORDER BY library_id, id LIMIT v_n
                                        FOR UPDATE SKIP LOCKED));
            GET DIAGNOSTICS n_history = ROW_COUNT;
        END IF;
    END IF;
    n_left := CASE WHEN EXISTS (SELECT 1 FROM inventory.library_collections WHERE library_id = p_lib)
                     OR EXISTS (SELECT 1 FROM inventory.library_sync_status WHERE library_id = p_lib)
                     OR EXISTS (SELECT 1 FROM inventory.classification_history WHERE library_id = p_lib)
                   THEN 1 ELSE 0 END;
    IF p_preview THEN
        n_left := CASE WHEN n_collections + n_sync + n_history < p_budget THEN 0 ELSE n_left END;
    ELSIF n_left = 1 AND n_collections + n_sync + n_history < p_budget THEN
        -- Rows left with budget to spare: each was skipped, another
        -- transaction holds it. Busy, naming the holder, once nothing
        -- else could be done (a step that drained others commits them).
        IF n_collections + n_sync + n_history = 0 THEN
            PERFORM cleanup.raise_library_dependent_held(p_lib);
        END IF;
    END IF;
END $$;
