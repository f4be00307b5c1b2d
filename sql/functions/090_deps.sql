-- 090_deps: foreign-key dependency evidence (seed 001, "Dependency
-- evidence"). Walks the declared foreign-key graph from the inventory roots,
-- transitively, and reports every constraint it reached with its catalog
-- assessment: columns, delete/update action, validation and enforcement
-- (the enabled state of the constraint's RI triggers: ALTER TABLE ...
-- DISABLE TRIGGER ALL switches a foreign key off without changing
-- pg_constraint), the referencing index, user triggers with their enabled
-- state and row-security flags. It produces evidence and proposed
-- dispositions only; it never executes SQL generated from the graph (fixed
-- catalog queries with parameters), and a matching fingerprint authorizes
-- nothing.
--
-- The walk is a breadth-first traversal over tables with a visited set:
-- each table is expanded once and each constraint is an edge once, so the
-- work is linear in the edges reached, never in the paths (a 13-table chain
-- with 3 keys per level has 3^13 paths and 39 edges). It is bounded by
-- depth, tables, edges and time; hitting a bound is a recorded gap naming
-- what was left out, never a silent truncation. A constraint that closes a
-- loop (its referencing table can already reach its referenced table) is a
-- cycle gap naming the loop; the loop is not followed again.

-- The evidence document (jsonb): roots, edges (one object per constraint),
-- referencing_tables, gaps, limits, fingerprint (SHA-256 over roots, edges,
-- gaps and limits: not over captured_at or elapsed_ms), captured_at,
-- elapsed_ms, database, source. Limits: depth 1-64, tables 1-1024, edges
-- 1-100000, time 1-600000 ms (CU101 otherwise). Reads catalogs only, as the
-- caller (it shows what the caller may see). Names are schema-qualified.
CREATE OR REPLACE FUNCTION cleanup.dependency_evidence(p_max_depth int, p_max_tables int, p_max_edges int,
                                                       p_max_ms int)
RETURNS jsonb LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t0        timestamptz := clock_timestamp();
    roots     oid[];
    visited   oid[];          -- every table reached, in order
    t_first   int[] := '{}';  -- per visited table: its outgoing edges e_*[t_first..t_last], 0 if not expanded
    t_last    int[] := '{}';
    frontier  oid[];
    nxt       oid[];
    e_oid     oid[] := '{}';  -- edges (constraints), in walk order
    e_depth   int[] := '{}';
    e_parent  oid[] := '{}';  -- referenced table
    e_child   oid[] := '{}';  -- referencing table
    e_cand    boolean[] := '{}'; -- child already reached: may close a loop
    e_cycle   boolean[] := '{}';
    depth     int := 0;
    ntables   int := 0;
    gaps      jsonb := '[]'::jsonb;
    lo_tables text[] := '{}';  -- left out by the table limit
    lo_cons   text[] := '{}';
    le_tables text[] := '{}';  -- left out by the edge limit
    le_cons   text[] := '{}';
    timed_out boolean := false;
    r         record;
    idx       int;
    cur_par   oid;
    cands     oid[];
    q         oid[];
    qe        int[];
    qp        int[];
    i         int;
    k         int;
    path      text[];
    ckey      text;
    cyc_key   text[] := '{}';  -- one per loop: its tables, sorted
    cyc_path  text[] := '{}';
    cyc_tables jsonb[] := '{}';
    cyc_by    text[] := '{}';
    cyc_more  int[] := '{}';
    edges     jsonb;
    limits    jsonb;
    reftables int;
BEGIN
    IF p_max_depth IS NULL OR p_max_depth NOT BETWEEN 1 AND 64 OR p_max_tables IS NULL
       OR p_max_tables NOT BETWEEN 1 AND 1024 OR p_max_edges IS NULL OR p_max_edges NOT BETWEEN 1 AND 100000
       OR p_max_ms IS NULL OR p_max_ms NOT BETWEEN 1 AND 600000 THEN
        RAISE EXCEPTION 'limits out of range: depth % (1-64), tables % (1-1024), edges % (1-100000), time % ms (1-600000)',
            p_max_depth, p_max_tables, p_max_edges, p_max_ms USING ERRCODE = 'CU101';
    END IF;
    limits := jsonb_build_object('max_depth', p_max_depth, 'max_tables', p_max_tables,
                                 'max_edges', p_max_edges, 'max_ms', p_max_ms);
    SELECT coalesce(array_agg(to_regclass(x)::oid ORDER BY n), '{}') INTO roots
      FROM unnest(ARRAY['inventory.media_servers', 'inventory.libraries', 'inventory.items'])
           WITH ORDINALITY AS u(x, n)
     WHERE to_regclass(x) IS NOT NULL;
    visited := roots;
    frontier := roots;
    FOR i IN 1..cardinality(roots) LOOP
        t_first := t_first || 0;
        t_last := t_last || 0;
    END LOOP;

    -- Breadth-first, one level per iteration; each table expanded once.
    WHILE cardinality(frontier) > 0 LOOP
        IF depth >= p_max_depth THEN
            SELECT coalesce(array_agg(format('%s.%s', c.conrelid::regclass, c.conname)
                                      ORDER BY c.conrelid::regclass::text, c.conname), '{}'),
                   coalesce(array_agg(DISTINCT c.conrelid::regclass::text)
                                FILTER (WHERE NOT c.conrelid = ANY (visited)), '{}')
              INTO lo_cons, path
              FROM pg_constraint c WHERE c.contype = 'f' AND c.confrelid = ANY (frontier);
            IF cardinality(lo_cons) > 0 THEN
                gaps := gaps || jsonb_build_array(jsonb_build_object(
                    'kind', 'depth-limit', 'limit', p_max_depth,
                    'summary', format('depth limit %s: %s constraint(s) into %s table(s) at depth %s not walked (%s)',
                                      p_max_depth, cardinality(lo_cons), cardinality(frontier), depth,
                                      array_to_string(lo_cons[1:5], ', ')
                                          || CASE WHEN cardinality(lo_cons) > 5 THEN ', ...' ELSE '' END),
                    'left_out', jsonb_build_object(
                        'constraints', to_jsonb(lo_cons[1:20]), 'constraints_total', cardinality(lo_cons),
                        'tables', to_jsonb(path[1:20]), 'tables_total', cardinality(path),
                        'unexpanded', (SELECT to_jsonb(array_agg(f::regclass::text ORDER BY f::regclass::text))
                                         FROM unnest(frontier) f))));
            END IF;
            lo_cons := '{}';
            EXIT;
        END IF;
        IF clock_timestamp() - t0 > make_interval(secs => p_max_ms / 1000.0) THEN
            timed_out := true;
            EXIT;
        END IF;
        nxt := '{}';
        cur_par := NULL;
        FOR r IN SELECT c.oid, c.conname, c.conrelid, c.confrelid
                   FROM pg_constraint c
                  WHERE c.contype = 'f' AND c.confrelid = ANY (frontier)
                  ORDER BY c.confrelid, c.conrelid::regclass::text, c.conname LOOP
            IF cardinality(e_oid) >= p_max_edges THEN
                le_cons := le_cons || format('%s.%s', r.conrelid::regclass, r.conname);
                IF NOT r.conrelid = ANY (visited) AND NOT r.conrelid = ANY (nxt)
                   AND NOT r.conrelid::regclass::text = ANY (le_tables) THEN
                    le_tables := le_tables || r.conrelid::regclass::text;
                END IF;
                CONTINUE;
            END IF;
            IF r.conrelid = ANY (visited) OR r.conrelid = ANY (nxt) THEN
                e_cand := e_cand || true;
            ELSIF ntables >= p_max_tables THEN
                lo_cons := lo_cons || format('%s.%s', r.conrelid::regclass, r.conname);
                IF NOT r.conrelid::regclass::text = ANY (lo_tables) THEN
                    lo_tables := lo_tables || r.conrelid::regclass::text;
                END IF;
                CONTINUE;
            ELSE
                nxt := nxt || r.conrelid;
                ntables := ntables + 1;
                e_cand := e_cand || false;
            END IF;
            e_oid := e_oid || r.oid;
            e_depth := e_depth || (depth + 1);
            e_parent := e_parent || r.confrelid;
            e_child := e_child || r.conrelid;
            e_cycle := e_cycle || false;
            -- Rows come grouped by referenced table: one contiguous range each.
            IF cur_par IS DISTINCT FROM r.confrelid THEN
                cur_par := r.confrelid;
                idx := array_position(visited, cur_par);
                t_first[idx] := cardinality(e_oid);
            END IF;
            t_last[idx] := cardinality(e_oid);
        END LOOP;
        FOR i IN 1..coalesce(cardinality(nxt), 0) LOOP
            t_first := t_first || 0;
            t_last := t_last || 0;
        END LOOP;
        visited := visited || nxt;
        frontier := nxt;
        depth := depth + 1;
    END LOOP;

    -- Loops: only an edge into an already reached table can close one. For
    -- each such table C, one breadth-first search over the walked edges;
    -- an edge P -> C closes a loop when P is reachable from C (or is C).
    SELECT coalesce(array_agg(DISTINCT x), '{}') INTO cands
      FROM unnest(e_child, e_cand) AS u(x, cand) WHERE cand;
    FOREACH cur_par IN ARRAY cands LOOP
        IF clock_timestamp() - t0 > make_interval(secs => p_max_ms / 1000.0) THEN
            timed_out := true;
            EXIT;
        END IF;
        q := ARRAY[cur_par];
        qe := ARRAY[0];
        qp := ARRAY[0];
        i := 1;
        WHILE i <= cardinality(q) LOOP
            idx := array_position(visited, q[i]);
            IF t_first[idx] > 0 THEN
                FOR j IN t_first[idx]..t_last[idx] LOOP
                    IF array_position(q, e_child[j]) IS NULL THEN
                        q := q || e_child[j];
                        qe := qe || j;
                        qp := qp || i;
                    END IF;
                END LOOP;
            END IF;
            i := i + 1;
        END LOOP;
        FOR j IN 1..cardinality(e_oid) LOOP
            CONTINUE WHEN NOT e_cand[j] OR e_child[j] <> cur_par;
            k := array_position(q, e_parent[j]);
            CONTINUE WHEN k IS NULL;
            e_cycle[j] := true;
            path := ARRAY[e_parent[j]::regclass::text];
            WHILE k > 1 LOOP
                e_cycle[qe[k]] := true;
                k := qp[k];
                path := q[k]::regclass::text || path;
            END LOOP;
            -- One gap per loop (its set of tables); parallel keys that
            -- close the same loop are counted on it.
            ckey := (SELECT string_agg(x, ' ' ORDER BY x) FROM unnest(path) x);
            k := array_position(cyc_key, ckey);
            IF k IS NULL THEN
                cyc_key := cyc_key || ckey;
                cyc_path := cyc_path || array_to_string(path || e_child[j]::regclass::text, ' -> ');
                cyc_tables := cyc_tables || to_jsonb(path);
                cyc_by := cyc_by || format('%s.%s', e_child[j]::regclass,
                                           (SELECT conname FROM pg_constraint WHERE oid = e_oid[j]));
                cyc_more := cyc_more || 0;
            ELSE
                cyc_more[k] := cyc_more[k] + 1;
            END IF;
        END LOOP;
    END LOOP;
    FOR k IN 1..least(coalesce(cardinality(cyc_key), 0), 20) LOOP
        gaps := gaps || jsonb_build_array(jsonb_build_object(
            'kind', 'cycle', 'tables', cyc_tables[k], 'closed_by', cyc_by[k], 'also_closed_by', cyc_more[k],
            'summary', format('cycle: %s (closed by constraint %s%s); the loop is not followed again, '
                              'no drain order is implied', cyc_path[k], cyc_by[k],
                              CASE WHEN cyc_more[k] > 0 THEN format(' and %s more', cyc_more[k]) ELSE '' END)));
    END LOOP;
    IF cardinality(cyc_key) > 20 THEN
        gaps := gaps || jsonb_build_array(jsonb_build_object('kind', 'cycle', 'more', cardinality(cyc_key) - 20,
            'summary', format('%s more cycle(s) not listed', cardinality(cyc_key) - 20)));
    END IF;
    IF cardinality(lo_cons) > 0 THEN
        gaps := gaps || jsonb_build_array(jsonb_build_object(
            'kind', 'table-limit', 'limit', p_max_tables,
            'summary', format('table limit %s: %s table(s) not walked (%s), %s constraint(s) left out',
                              p_max_tables, cardinality(lo_tables),
                              array_to_string(lo_tables[1:5], ', ')
                                  || CASE WHEN cardinality(lo_tables) > 5 THEN ', ...' ELSE '' END,
                              cardinality(lo_cons)),
            'left_out', jsonb_build_object(
                'tables', to_jsonb(lo_tables[1:20]), 'tables_total', cardinality(lo_tables),
                'constraints', to_jsonb(lo_cons[1:20]), 'constraints_total', cardinality(lo_cons))));
    END IF;
    IF cardinality(le_cons) > 0 THEN
        gaps := gaps || jsonb_build_array(jsonb_build_object(
            'kind', 'edge-limit', 'limit', p_max_edges,
            'summary', format('edge limit %s: %s constraint(s) not walked (%s)', p_max_edges, cardinality(le_cons),
                              array_to_string(le_cons[1:5], ', ')
                                  || CASE WHEN cardinality(le_cons) > 5 THEN ', ...' ELSE '' END),
            'left_out', jsonb_build_object(
                'constraints', to_jsonb(le_cons[1:20]), 'constraints_total', cardinality(le_cons),
                'tables', to_jsonb(le_tables[1:20]), 'tables_total', cardinality(le_tables))));
    END IF;
    IF timed_out THEN
        gaps := gaps || jsonb_build_array(jsonb_build_object(
            'kind', 'time-limit', 'limit_ms', p_max_ms,
            'summary', format('time limit %s ms: stopped at depth %s; %s table(s) not expanded%s', p_max_ms, depth,
                              cardinality(frontier),
                              CASE WHEN cardinality(cands) > 0 THEN ', cycle analysis may be incomplete' ELSE '' END),
            'left_out', jsonb_build_object(
                'unexpanded', (SELECT coalesce(to_jsonb(array_agg(f::regclass::text ORDER BY f::regclass::text)), '[]')
                                 FROM unnest(frontier) f))));
    END IF;

    -- The catalog assessment of every walked edge.
    SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x.depth, x.referencing, x.constraint_name), '[]'::jsonb),
           count(DISTINCT x.referencing) FILTER (WHERE NOT x.referencing_oid = ANY (roots))
      INTO edges, reftables
      FROM (
        SELECT u.depth,
               c.conname::text AS constraint_name,
               c.conrelid::regclass::text AS referencing,
               c.conrelid AS referencing_oid,
               (SELECT array_agg(a.attname::text ORDER BY kk.n)
                  FROM unnest(c.conkey) WITH ORDINALITY AS kk(att, n)
                  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = kk.att) AS referencing_columns,
               c.confrelid::regclass::text AS referenced,
               (SELECT array_agg(a.attname::text ORDER BY kk.n)
                  FROM unnest(c.confkey) WITH ORDINALITY AS kk(att, n)
                  JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = kk.att) AS referenced_columns,
               CASE c.confdeltype WHEN 'a' THEN 'no action' WHEN 'r' THEN 'restrict' WHEN 'c' THEN 'cascade'
                                  WHEN 'n' THEN 'set null' WHEN 'd' THEN 'set default' ELSE 'unknown' END AS on_delete,
               CASE c.confupdtype WHEN 'a' THEN 'no action' WHEN 'r' THEN 'restrict' WHEN 'c' THEN 'cascade'
                                  WHEN 'n' THEN 'set null' WHEN 'd' THEN 'set default' ELSE 'unknown' END AS on_update,
               CASE c.confmatchtype WHEN 's' THEN 'simple' WHEN 'f' THEN 'full' WHEN 'p' THEN 'partial'
                                    ELSE 'unknown' END AS match,
               c.condeferrable AS is_deferrable,
               c.condeferred AS initially_deferred,
               c.convalidated AS validated,
               -- Enforced: every RI trigger of the constraint fires in an
               -- ordinary session (enabled or ALWAYS). Disabled or
               -- replica-only triggers leave the key unchecked.
               (ri.n > 0 AND ri.off = 0) AS enforced,
               coalesce(ri.list, '{}') AS ri_triggers,
               ix.indexrelid IS NOT NULL AS has_index,
               ix.indexrelid::regclass::text AS index_name,
               CASE WHEN ix.indexrelid IS NOT NULL THEN 'present'
                    WHEN EXISTS (SELECT 1 FROM pg_index i
                                  WHERE i.indrelid = c.conrelid
                                    AND (i.indexprs IS NOT NULL OR i.indkey::int2[] && c.conkey)) THEN 'unproven'
                    ELSE 'absent' END AS index_status,
               coalesce((SELECT array_agg(format('%s %s', t.tgname,
                                                 CASE t.tgenabled WHEN 'O' THEN 'enabled' WHEN 'D' THEN 'disabled'
                                                                  WHEN 'R' THEN 'replica-only' WHEN 'A' THEN 'always'
                                                                  ELSE t.tgenabled::text END) ORDER BY t.tgname)
                           FROM pg_trigger t WHERE t.tgrelid = c.conrelid AND NOT t.tgisinternal), '{}') AS triggers,
               rc.relrowsecurity AS row_security,
               rc.relforcerowsecurity AS force_row_security,
               u.cycle,
               CASE
                   -- Recorded by the installer (055_dependents.sql): what
                   -- the engine does with it, still NO ACTION / RESTRICT.
                   WHEN c.confdeltype IN ('a', 'r') AND EXISTS (
                            SELECT 1 FROM cleanup.reference_dispositions d WHERE d.constraint_oid = c.oid)
                       THEN 'recorded: ' || (SELECT replace(d.disposition, '-', ' ')
                                               FROM cleanup.reference_dispositions d WHERE d.constraint_oid = c.oid)
                   WHEN c.conrelid = ANY (roots) THEN 'inventory: drained by cleanup steps'
                   WHEN rc.relnamespace = 'cleanup'::regnamespace
                       THEN 'engine bookkeeping: removed with its parent by the finalize step'
                   WHEN c.confdeltype = 'c' THEN 'unresolved: implicit cascade would do uncounted work'
                   WHEN c.confdeltype IN ('n', 'd') THEN 'unresolved: detach (counts as a mutation) or delete'
                   WHEN c.confdeltype IN ('a', 'r') THEN 'unresolved: must be drained before its parent'
                   ELSE 'unresolved: unknown action'
               END AS disposition
          FROM unnest(e_oid, e_depth, e_cycle) AS u(oid, depth, cycle)
          JOIN pg_constraint c ON c.oid = u.oid
          JOIN pg_class rc ON rc.oid = c.conrelid
          LEFT JOIN LATERAL (
              SELECT count(*) AS n,
                     count(*) FILTER (WHERE t.tgenabled NOT IN ('O', 'A')) AS off,
                     array_agg(format('%s %s %s', t.tgrelid::regclass, p.proname,
                                      CASE t.tgenabled WHEN 'O' THEN 'enabled' WHEN 'D' THEN 'disabled'
                                                       WHEN 'R' THEN 'replica-only' WHEN 'A' THEN 'always'
                                                       ELSE t.tgenabled::text END)
                               ORDER BY t.tgrelid::regclass::text, p.proname, t.tgenabled) AS list
                FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
               WHERE t.tgconstraint = c.oid) ri ON true
          -- A valid, ready, nonpartial B-tree whose leading key columns are
          -- exactly the foreign-key columns (in any order). Conservative:
          -- other strategies are "unproven", never claimed absent.
          LEFT JOIN LATERAL (
              SELECT i.indexrelid FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
               JOIN pg_am am ON am.oid = ic.relam
               WHERE i.indrelid = c.conrelid AND i.indisvalid AND i.indisready AND i.indpred IS NULL
                 AND am.amname = 'btree' AND i.indnkeyatts >= cardinality(c.conkey)
                 AND (SELECT array_agg(x ORDER BY x) FROM unnest((i.indkey::int2[])[0:cardinality(c.conkey) - 1]) x)
                     = (SELECT array_agg(x ORDER BY x) FROM unnest(c.conkey) x)
               ORDER BY i.indexrelid::regclass::text LIMIT 1) ix ON true) x;
    edges := (SELECT coalesce(jsonb_agg(e - 'referencing_oid' ORDER BY n), '[]'::jsonb)
                FROM jsonb_array_elements(edges) WITH ORDINALITY AS a(e, n));

    RETURN jsonb_build_object(
        'source', 'catalog',
        'roots', jsonb_build_array('inventory.media_servers', 'inventory.libraries', 'inventory.items'),
        'edges', edges,
        'referencing_tables', reftables,
        'gaps', gaps,
        'limits', limits,
        'fingerprint', encode(sha256(convert_to(jsonb_build_object(
                           'roots', jsonb_build_array('inventory.media_servers', 'inventory.libraries', 'inventory.items'),
                           'edges', edges, 'gaps', gaps, 'limits', limits)::text, 'UTF8')), 'hex'),
        'fingerprint_covers', jsonb_build_array('roots', 'edges', 'gaps', 'limits'),
        'captured_at', now(),
        'elapsed_ms', round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1000, 1),
        'database', current_database());
END $$;

-- The two-limit forms kept for existing callers (and the grants of
-- 098_privileges.sql): 4096 edges, 2000 ms.
CREATE OR REPLACE FUNCTION cleanup.dependency_evidence(p_max_depth int DEFAULT 16, p_max_tables int DEFAULT 64)
RETURNS jsonb LANGUAGE sql STABLE
AS $$ SELECT cleanup.dependency_evidence(p_max_depth, p_max_tables, 4096, 2000) $$;

-- One row per walked constraint (the evidence document's edges).
CREATE OR REPLACE FUNCTION cleanup.dependency_edges(p_max_depth int DEFAULT 16, p_max_tables int DEFAULT 64)
RETURNS TABLE (
    depth int, constraint_name text, referencing text, referencing_columns text[],
    referenced text, referenced_columns text[], on_delete text, is_deferrable boolean,
    validated boolean, has_index boolean, index_name text, triggers text[],
    cycle boolean, disposition text)
LANGUAGE sql STABLE
AS $$
SELECT e.depth, e.constraint_name, e.referencing, e.referencing_columns, e.referenced, e.referenced_columns,
       e.on_delete, e.is_deferrable, e.validated, e.has_index, e.index_name, e.triggers, e.cycle, e.disposition
  FROM jsonb_to_recordset(cleanup.dependency_evidence(p_max_depth, p_max_tables)->'edges') AS e(
       depth int, constraint_name text, referencing text, referencing_columns text[],
       referenced text, referenced_columns text[], on_delete text, is_deferrable boolean,
       validated boolean, has_index boolean, index_name text, triggers text[],
       cycle boolean, disposition text)
$$;
