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

---------------------------------------------------------------------------
-- The plan phase of `job create` (seed 004, section 3.1):
-- lock the parent, run the RESTRICT checks and the validators, release the
-- parent. Validators and the rollout switch live in migration 014_plan.sql.
---------------------------------------------------------------------------

-- Validator name P_NAME ('schema.func', quoted identifiers allowed) as its
-- two identifiers; NULL when it is not written so (or is NULL).
CREATE OR REPLACE FUNCTION cleanup.plan_validator_parts(p_name text)
RETURNS text[] LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    parts text[];
BEGIN
    BEGIN
        parts := pg_catalog.parse_ident(p_name);
    EXCEPTION WHEN invalid_parameter_value OR syntax_error THEN
        RETURN NULL;
    END;
    RETURN CASE WHEN cardinality(parts) = 2 THEN parts END;
END $$;

-- Validator P_NAME ('schema.func', quoted identifiers allowed) as the
-- function the plan phase calls: SCHEMA.FUNC(text, bigint) RETURNS text,
-- owned by cleanup_owner or a superuser (job_create runs it as
-- cleanup_owner: a function its owner could replace would otherwise run
-- anything with the engine's rights). Resolved in pg_proc through
-- parse_ident and format('%I.%I(text, bigint)'): never concatenated
-- text. Raises CU102 naming what is wrong.
CREATE OR REPLACE FUNCTION cleanup.plan_validator_resolve(p_name text)
RETURNS regprocedure LANGUAGE plpgsql STABLE
AS $$
DECLARE
    parts text[] := cleanup.plan_validator_parts(p_name);
    fn    regprocedure;
    p     pg_catalog.pg_proc;
BEGIN
    IF parts IS NULL THEN
        RAISE EXCEPTION 'validator "%" refused: write it as schema.function', coalesce(p_name, '')
            USING ERRCODE = 'CU102', HINT = 'e.g. cleanupctl install --validator ops.keep_vip_libraries';
    END IF;
    fn := pg_catalog.to_regprocedure(pg_catalog.format('%I.%I(text, bigint)', parts[1], parts[2]));
    IF fn IS NULL THEN
        RAISE EXCEPTION 'validator "%" refused: no function %.%(text, bigint)', p_name, parts[1], parts[2]
            USING ERRCODE = 'CU102',
                  HINT = 'a validator takes (kind text, target_id bigint) and returns a refusal reason text or NULL';
    END IF;
    SELECT * INTO p FROM pg_catalog.pg_proc WHERE oid = fn;
    IF p.prorettype <> 'text'::regtype OR p.proretset OR p.prokind <> 'f' THEN
        RAISE EXCEPTION 'validator % refused: it must return one text (a refusal reason, or NULL)', fn
            USING ERRCODE = 'CU102';
    END IF;
    IF NOT (p.proowner = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = 'cleanup_owner')
            OR (SELECT rolsuper FROM pg_catalog.pg_roles WHERE oid = p.proowner)) THEN
        RAISE EXCEPTION 'validator % refused: it is owned by %, not by cleanup_owner or a superuser', fn,
            p.proowner::regrole
            USING ERRCODE = 'CU102',
                  HINT = 'job create runs validators with the engine''s rights; ALTER FUNCTION ... OWNER TO cleanup_owner';
    END IF;
    RETURN fn;
END $$;

-- Records validator P_NAME (the installer's: cleanupctl install
-- --validator) and gives cleanup_owner, which job_create runs as, USAGE
-- on its schema and EXECUTE on it (what the validator itself reads is
-- the operator's to grant, or it is SECURITY DEFINER). Returns its
-- signature.
CREATE OR REPLACE FUNCTION cleanup.plan_validator_record(p_name text)
RETURNS text LANGUAGE plpgsql
AS $$
DECLARE
    fn  regprocedure := cleanup.plan_validator_resolve(p_name);
    nsp name := (SELECT n.nspname FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
                  WHERE p.oid = fn);
BEGIN
    IF NOT pg_catalog.has_schema_privilege('cleanup_owner', nsp, 'USAGE') THEN
        EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA %I TO cleanup_owner', nsp);
    END IF;
    IF NOT pg_catalog.has_function_privilege('cleanup_owner', fn, 'EXECUTE') THEN
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO cleanup_owner', fn);
    END IF;
    INSERT INTO cleanup.plan_validators (name) VALUES (fn::text) ON CONFLICT (name) DO NOTHING;
    RETURN fn::text;
END $$;

-- Removes validator P_NAME (cleanupctl install --remove-validator): by
-- its recorded signature, so a validator whose function was dropped can
-- be removed too. CU102 when none is recorded under that name.
CREATE OR REPLACE FUNCTION cleanup.plan_validator_remove(p_name text)
RETURNS text LANGUAGE plpgsql
AS $$
DECLARE
    parts text[] := cleanup.plan_validator_parts(p_name);
    v     text;
BEGIN
    IF parts IS NULL THEN
        RAISE EXCEPTION 'validator "%" refused: write it as schema.function', coalesce(p_name, '')
            USING ERRCODE = 'CU102';
    END IF;
    DELETE FROM cleanup.plan_validators
     WHERE name = pg_catalog.format('%s.%s(text,bigint)', quote_ident(parts[1]), quote_ident(parts[2]))
    RETURNING name INTO v;
    IF v IS NULL THEN
        RAISE EXCEPTION 'no validator %.% is recorded', parts[1], parts[2]
            USING ERRCODE = 'CU102',
                  HINT = coalesce('recorded: ' || (SELECT string_agg(name, ', ' ORDER BY name) FROM cleanup.plan_validators),
                                  'none is recorded');
    END IF;
    RETURN v;
END $$;

-- The rollout switch (cleanupctl install --default-mode MODE). CU102 for
-- another mode.
CREATE OR REPLACE FUNCTION cleanup.plan_set_default_mode(p_mode text)
RETURNS text LANGUAGE plpgsql
AS $$
BEGIN
    IF p_mode IS NULL OR p_mode NOT IN ('bounded', 'single-transaction') THEN
        RAISE EXCEPTION 'default mode "%" refused: expected bounded or single-transaction', coalesce(p_mode, '')
            USING ERRCODE = 'CU102';
    END IF;
    INSERT INTO cleanup.plan_settings AS s (singleton, default_mode) VALUES (true, p_mode)
    ON CONFLICT (singleton) DO UPDATE
       SET default_mode = excluded.default_mode, recorded_at = now(), recorded_by = session_user
     WHERE s.default_mode IS DISTINCT FROM excluded.default_mode;
    RETURN p_mode;
END $$;

-- The mode of a new job of P_KIND when `job create` names none: the
-- recorded default, where it applies (single-transaction is only for
-- remove-library; other kinds stay bounded).
CREATE OR REPLACE FUNCTION cleanup.plan_default_mode(p_kind text)
RETURNS text LANGUAGE plpgsql STABLE
AS $$
DECLARE
    m text := coalesce((SELECT default_mode FROM cleanup.plan_settings), 'bounded');
BEGIN
    RETURN CASE WHEN m = 'single-transaction' AND p_kind <> 'remove-library' THEN 'bounded' ELSE m END;
END $$;

-- The plan phase of a job of P_KIND on P_TARGET (the library; the server
-- for remove-server), inside job_create after its table and coordinator
-- locks. The parent row FOR UPDATE NOWAIT: a holder makes the create busy
-- (55P03, the holder named, 011_holders.sql), never a waiter. Under it:
-- the RESTRICT checks (CU404: every reference into what the job deletes
-- has a disposition the engine carries out) and every recorded validator,
-- in name order, each called as VALIDATOR(P_KIND, P_TARGET); the first
-- reason refuses the job (CU461, naming the validator and its reason). A
-- validator that is gone, changed owner or fails refuses too (it was
-- recorded to be asked). The whole check runs in a subtransaction that is
-- rolled back on purpose, so the parent row lock is released at once (a
-- row lock ends only with its (sub)transaction; seed 004: the parent is
-- never held across the drain) and nothing a validator did stays. The
-- lock is taken in that subtransaction itself, not in a block of its own
-- (lock_parent_row's): a block that ends without an error commits into
-- its parent and frees its transaction id, and a writer that then waits
-- for the row waits for the top-level transaction, the whole job create,
-- instead of this check (isolation spec plan-parent-wait).
CREATE OR REPLACE FUNCTION cleanup.plan_check(p_kind text, p_target bigint)
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    v_name   text;
    v_fn     regprocedure;
    v_call   text;
    v_reason text;
    v_by     text;
    v_what   text := CASE WHEN p_kind = 'remove-server' THEN 'server' ELSE 'library' END;
BEGIN
    -- The RESTRICT checks once before the parent row lock as well: an
    -- unknown reference refuses here already, and the first call in a
    -- session (every `cleanupctl job create` is one) compiles the check and
    -- plans its catalog query, ~20 ms that every writer's foreign-key check
    -- on the parent row waited for (bench_cleanup: a parent-row reader's
    -- lock waits over 15 ms, one at every create). Under the lock they run
    -- again, warm (~1 ms).
    PERFORM cleanup.assert_known_references(p_kind);
    BEGIN
        IF v_what = 'server' THEN
            PERFORM 1 FROM inventory.media_servers WHERE id = p_target FOR UPDATE NOWAIT;
        ELSE
            PERFORM 1 FROM inventory.libraries WHERE id = p_target FOR UPDATE NOWAIT;
        END IF;
        PERFORM cleanup.assert_known_references(p_kind);
        FOR v_name IN SELECT name FROM cleanup.plan_validators ORDER BY name LOOP
            BEGIN
                v_fn := cleanup.plan_validator_resolve(
                            (SELECT pg_catalog.format('%I.%I', n.nspname, p.proname)
                               FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
                              WHERE p.oid = pg_catalog.to_regprocedure(v_name)));
                SELECT pg_catalog.format('SELECT %I.%I($1, $2)', n.nspname, p.proname) INTO v_call
                  FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
                 WHERE p.oid = v_fn;
                EXECUTE v_call INTO v_reason USING p_kind, p_target;
            EXCEPTION WHEN OTHERS THEN
                v_reason := CASE WHEN SQLSTATE = 'CU102' AND pg_catalog.to_regprocedure(v_name) IS NULL
                                 THEN 'it no longer exists'
                                 ELSE 'it failed: ' || SQLERRM END;
            END;
            IF v_reason IS NOT NULL THEN
                v_by := v_name;
                EXIT;
            END IF;
        END LOOP;
        -- Roll the block back: the parent row lock ends here.
        RAISE EXCEPTION USING ERRCODE = 'CU4Z9';
    EXCEPTION
        WHEN SQLSTATE 'CU4Z9' THEN
            NULL;
        -- Only the row lock can raise it here: the catalog check takes no
        -- row lock, and each validator's block catches what it raises.
        WHEN lock_not_available THEN
            PERFORM cleanup.raise_parent_busy(v_what, p_target);
    END;
    IF v_by IS NOT NULL THEN
        RAISE EXCEPTION '% job refused by validator %: %', p_kind, v_by, left(v_reason, 500)
            USING ERRCODE = 'CU461',
                  DETAIL = pg_catalog.format('plan phase of %s %s: the validator, recorded by the installer, '
                                             'returned a refusal; nothing changed',
                                             CASE WHEN p_kind = 'remove-server' THEN 'server' ELSE 'library' END,
                                             p_target),
                  HINT = 'resolve what it names and retry; an operator removes a validator with '
                         'cleanupctl install --remove-validator SCHEMA.FUNC';
    END IF;
END $$;

-- The installer's part (cleanupctl install --validator, --remove-validator,
-- --default-mode; each NULL: unchanged): records them, then returns what
-- is recorded (validators ', '-separated, '' when none) and whether this
-- call changed it.
CREATE OR REPLACE FUNCTION cleanup.plan_install(p_add text, p_remove text, p_mode text,
    OUT changed boolean, OUT default_mode text, OUT validators text)
LANGUAGE plpgsql
AS $$
DECLARE
    before text := (SELECT s.default_mode FROM cleanup.plan_settings s) || ' / '
                   || coalesce((SELECT string_agg(v.name, ', ' ORDER BY v.name) FROM cleanup.plan_validators v), '');
BEGIN
    IF p_add IS NOT NULL THEN
        PERFORM cleanup.plan_validator_record(p_add);
    END IF;
    IF p_remove IS NOT NULL THEN
        PERFORM cleanup.plan_validator_remove(p_remove);
    END IF;
    IF p_mode IS NOT NULL THEN
        PERFORM cleanup.plan_set_default_mode(p_mode);
    END IF;
    default_mode := coalesce((SELECT s.default_mode FROM cleanup.plan_settings s), 'bounded');
    validators := coalesce((SELECT string_agg(v.name, ', ' ORDER BY v.name) FROM cleanup.plan_validators v), '');
    changed := before IS DISTINCT FROM default_mode || ' / ' || validators;
END $$;
