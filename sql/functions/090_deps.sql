-- 090_deps: foreign-key dependency evidence (seed 001, "Dependency
-- evidence"). Walks the declared foreign-key graph from the inventory roots,
-- transitively, with explicit cycle detection and resource limits, and
-- reports every edge with its delete action, validation, referencing index
-- and trigger evidence. It produces evidence and proposed dispositions only;
-- it never executes SQL generated from the graph, and a matching
-- fingerprint authorizes nothing.

-- Edges reachable from the roots (bounded: P_MAX_DEPTH hops, P_MAX_TABLES
-- referencing tables). One row per foreign-key constraint.
CREATE OR REPLACE FUNCTION cleanup.dependency_edges(p_max_depth int DEFAULT 16, p_max_tables int DEFAULT 64)
RETURNS TABLE (
    depth int, constraint_name text, referencing text, referencing_columns text[],
    referenced text, referenced_columns text[], on_delete text, is_deferrable boolean,
    validated boolean, has_index boolean, index_name text, triggers text[],
    cycle boolean, disposition text)
LANGUAGE sql STABLE
AS $$
WITH RECURSIVE
roots AS (
    SELECT to_regclass(r)::oid AS relid
      FROM unnest(ARRAY['inventory.media_servers', 'inventory.libraries', 'inventory.items']) AS r
     WHERE to_regclass(r) IS NOT NULL),
fks AS (
    SELECT c.oid, c.conname, c.conrelid, c.confrelid, c.conkey, c.confkey, c.confdeltype,
           c.condeferrable, c.convalidated
      FROM pg_constraint c WHERE c.contype = 'f'),
walk (relid, depth, path, cycle) AS (
    SELECT relid, 0, ARRAY[relid], false FROM roots
    UNION ALL
    SELECT f.conrelid, w.depth + 1, w.path || f.conrelid, f.conrelid = ANY (w.path)
      FROM walk w JOIN fks f ON f.confrelid = w.relid
     WHERE NOT w.cycle AND w.depth < p_max_depth),
reached AS (
    SELECT relid, min(depth) AS depth FROM walk GROUP BY relid),
edges AS (
    SELECT f.*, r.depth + 1 AS depth,
           EXISTS (SELECT 1 FROM walk w WHERE w.relid = f.conrelid AND w.cycle) AS cycle
      FROM fks f JOIN reached r ON r.relid = f.confrelid
     WHERE f.conrelid IN (SELECT relid FROM reached ORDER BY depth, relid
                           LIMIT p_max_tables + 4))
SELECT e.depth,
       e.conname::text,
       e.conrelid::regclass::text,
       (SELECT array_agg(a.attname::text ORDER BY k.n)
          FROM unnest(e.conkey) WITH ORDINALITY AS k(att, n)
          JOIN pg_attribute a ON a.attrelid = e.conrelid AND a.attnum = k.att),
       e.confrelid::regclass::text,
       (SELECT array_agg(a.attname::text ORDER BY k.n)
          FROM unnest(e.confkey) WITH ORDINALITY AS k(att, n)
          JOIN pg_attribute a ON a.attrelid = e.confrelid AND a.attnum = k.att),
       CASE e.confdeltype WHEN 'a' THEN 'no action' WHEN 'r' THEN 'restrict' WHEN 'c' THEN 'cascade'
                          WHEN 'n' THEN 'set null' WHEN 'd' THEN 'set default' ELSE 'unknown' END,
       e.condeferrable,
       e.convalidated,
       ix.indexrelid IS NOT NULL,
       ix.indexrelid::regclass::text,
       coalesce((SELECT array_agg(t.tgname::text ORDER BY t.tgname)
                   FROM pg_trigger t WHERE t.tgrelid = e.conrelid AND NOT t.tgisinternal), '{}'),
       e.cycle,
       CASE
           WHEN e.conrelid IN (SELECT relid FROM roots) THEN 'inventory: drained by cleanup steps'
           WHEN (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = e.conrelid) = 'cleanup'
               THEN 'engine bookkeeping: removed with its parent by the finalize step'
           WHEN e.confdeltype = 'c' THEN 'unresolved: implicit cascade would do uncounted work'
           WHEN e.confdeltype IN ('n', 'd') THEN 'unresolved: detach (counts as a mutation) or delete'
           WHEN e.confdeltype IN ('a', 'r') THEN 'unresolved: must be drained before its parent'
           ELSE 'unresolved: unknown action'
       END
  FROM edges e
  -- A valid, ready, nonpartial B-tree whose leading key columns are exactly
  -- the foreign-key columns (in any order). Conservative: other usable
  -- indexes are not claimed absent, only unproven.
  LEFT JOIN LATERAL (
      SELECT i.indexrelid FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
       JOIN pg_am am ON am.oid = ic.relam
       WHERE i.indrelid = e.conrelid AND i.indisvalid AND i.indisready AND i.indpred IS NULL
         AND am.amname = 'btree' AND i.indnkeyatts >= cardinality(e.conkey)
         AND (SELECT array_agg(x ORDER BY x) FROM unnest((i.indkey::int2[])[0:cardinality(e.conkey) - 1]) x)
             = (SELECT array_agg(x ORDER BY x) FROM unnest(e.conkey) x)
       ORDER BY i.indexrelid LIMIT 1) ix ON true
 ORDER BY e.depth, e.conrelid::regclass::text, e.conname
$$;

-- The evidence document: edges, gaps (cycles, limits reached) and a
-- fingerprint over the evidence (not the capture time).
CREATE OR REPLACE FUNCTION cleanup.dependency_evidence(p_max_depth int DEFAULT 16, p_max_tables int DEFAULT 64)
RETURNS jsonb LANGUAGE plpgsql STABLE
AS $$
DECLARE
    edges   jsonb;
    tables  int;
    gaps    jsonb := '[]'::jsonb;
    maxd    int;
BEGIN
    IF p_max_depth NOT BETWEEN 1 AND 64 OR p_max_tables NOT BETWEEN 1 AND 1024 THEN
        RAISE EXCEPTION 'limits out of range: depth % (1-64), tables % (1-1024)', p_max_depth, p_max_tables
            USING ERRCODE = 'CU101';
    END IF;
    SELECT coalesce(jsonb_agg(to_jsonb(d)), '[]'::jsonb),
           count(DISTINCT d.referencing) FILTER (WHERE d.referencing NOT IN
               ('inventory.media_servers', 'inventory.libraries', 'inventory.items')),
           max(d.depth)
      INTO edges, tables, maxd
      FROM cleanup.dependency_edges(p_max_depth, p_max_tables) d;
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(edges) e WHERE (e->>'cycle')::boolean) THEN
        gaps := gaps || jsonb_build_array(jsonb_build_object('kind', 'cycle',
            'tables', (SELECT jsonb_agg(DISTINCT e->>'referencing') FROM jsonb_array_elements(edges) e
                        WHERE (e->>'cycle')::boolean)));
    END IF;
    IF maxd >= p_max_depth THEN
        gaps := gaps || jsonb_build_array(jsonb_build_object('kind', 'depth-limit', 'limit', p_max_depth));
    END IF;
    IF tables > p_max_tables THEN
        gaps := gaps || jsonb_build_array(jsonb_build_object('kind', 'table-limit', 'limit', p_max_tables));
    END IF;
    RETURN jsonb_build_object(
        'roots', jsonb_build_array('inventory.media_servers', 'inventory.libraries', 'inventory.items'),
        'edges', edges,
        'referencing_tables', tables,
        'gaps', gaps,
        'fingerprint', encode(sha256(convert_to(edges::text || gaps::text, 'UTF8')), 'hex'),
        'captured_at', now(),
        'database', current_database());
END $$;
