-- 077_gateway: the count cache's supported writer path where a sync writer
-- can reach it (K3; docs/count-cache.md, docs/roles.md).
--
-- A login in cleanup_writer has no USAGE on schema cleanup (T1-T8), so it
-- cannot call cleanup.write_items or cleanup.count_declare (075). These
-- two wrappers in schema inventory, the writer's own, are its way in:
-- SECURITY DEFINER, owned by cleanup_owner (098 hands every object of
-- inventory to it), search_path fixed to pg_catalog, pg_temp, EXECUTE for
-- cleanup_writer only (098). Each bounds and validates its input before
-- any work and builds no identifier from it: values go on as parameters of
-- the function they wrap.
--
-- The locks they take stay the caller's: a definer function runs in the
-- caller's transaction, and the write locks are row locks of
-- cleanup.engine_locks taken with this transaction's id, which the guard
-- (cleanup.holds_lock, by xmax) checks whichever role took them. So
-- `SELECT inventory.count_declare(ARRAY[3, 4]); UPDATE inventory.items ...`
-- in one transaction passes the guard as the owner's declared write does.

-- The mutation gateway for writers: cleanup.write_items (075) with its
-- limits (a JSON array of 1 to 128 operations, at most 64 KiB, every field
-- checked, libraries known) checked before any lock is taken; refusals are
-- CU110/CU111 (exit 2), a membership mismatch CU411 (nothing applied), a
-- delete without DELETE on inventory.items for the login role CU412.
-- Returns what cleanup.write_items returns.
CREATE OR REPLACE FUNCTION inventory.write_items(p_ops jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN cleanup.write_items(p_ops);
END $$;

-- Declares the write locks of the libraries P_LIBS (distinct, ascending,
-- at most 256: the old and new libraries of a gateway batch of 128
-- operations) for this transaction, as cleanup.count_declare does (075:
-- waits bounded by lock_timeout, refuses descending order with CU112).
-- The libraries must exist (CU111): a writer may not make lock rows for
-- ids that are not libraries.
CREATE OR REPLACE FUNCTION inventory.count_declare(p_libs bigint[])
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_lib bigint;
BEGIN
    -- NULL or empty passes every check below: cleanup.count_declare then
    -- returns at once.
    IF array_ndims(p_libs) <> 1 OR cardinality(p_libs) > 256 THEN
        RAISE EXCEPTION 'library lock declaration: % libraries in % dimension(s); 1 to 256 in one list are allowed',
            cardinality(p_libs), array_ndims(p_libs)
            USING ERRCODE = 'CU112';
    END IF;
    SELECT x INTO v_lib FROM unnest(p_libs) AS x
     WHERE x IS NOT NULL AND x > 0 AND NOT EXISTS (SELECT 1 FROM inventory.libraries l WHERE l.id = x)
     ORDER BY x LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'library lock declaration: library % does not exist', v_lib
            USING ERRCODE = 'CU111', HINT = 'cleanupctl status lists the libraries';
    END IF;
    PERFORM cleanup.count_declare(p_libs);
END $$;
