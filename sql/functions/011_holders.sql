-- 011_holders: who holds what a cleanup transaction needs (T3: every busy
-- answer names its holder). One lookup, used by every busy message the
-- engine raises, by the busy notes of a job's runner (the job's
-- blocked_by, shown by status, jobs, job show and the console) and by
-- `cleanupctl locks`.
--
-- A holder is a backend other than this one: its pid, login role,
-- application, client, state and transaction age, and what it holds.
-- Row locks are found through the row's xmax: a transaction (or
-- subtransaction) holds an ExclusiveLock on its own id, which pg_locks
-- shows with its pid; rows share-locked by several transactions carry a
-- multixact, whose members are looked up. A table lock is found in
-- pg_locks directly, held or queued ahead (a queued ACCESS EXCLUSIVE
-- request blocks every later lock on the table as the held one would).
--
-- Run as cleanup_owner (the callers are SECURITY DEFINER), which the
-- installer makes a member of pg_read_all_stats when it can
-- (098_privileges.sql), so that other roles' sessions show their state and
-- client; without it those columns read as "?". Reads only; never waits.

-- The backends, other than this one, that own transaction X: a plain
-- transaction id, or the members of multixact X. Empty when none is alive.
CREATE OR REPLACE FUNCTION cleanup.xid_pids(x xid)
RETURNS int[] LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v  int[];
    ms xid[];
    m  xid;
BEGIN
    IF x IS NULL OR x = '0'::xid THEN
        RETURN '{}';
    END IF;
    v := cleanup.xid_own_pids(x);
    IF v IS NULL THEN
        -- A multixact (several share lockers). An id that is not one, or
        -- one truncated away, raises: then X is a plain id whose lock is
        -- gone, perhaps a subtransaction's.
        BEGIN
            SELECT array_agg(mm.xid) INTO ms FROM pg_catalog.pg_get_multixact_members(x) mm;
        EXCEPTION WHEN OTHERS THEN
            ms := NULL;
        END;
        IF ms IS NULL THEN
            v := cleanup.xid_subxact_pids(x);
        ELSE
            FOREACH m IN ARRAY ms LOOP
                v := coalesce(v, '{}') || coalesce(cleanup.xid_own_pids(m), cleanup.xid_subxact_pids(m), '{}');
            END LOOP;
            v := ARRAY(SELECT DISTINCT p FROM unnest(v) AS p ORDER BY p);
        END IF;
    END IF;
    RETURN coalesce(v, '{}');
END $$;

-- The backends other than this one holding the lock of transaction id X
-- (every running top-level transaction holds its own); NULL when none.
CREATE OR REPLACE FUNCTION cleanup.xid_own_pids(x xid)
RETURNS int[] LANGUAGE sql STABLE
AS $$
    SELECT array_agg(DISTINCT l.pid ORDER BY l.pid)
      FROM pg_catalog.pg_locks l
     WHERE l.locktype = 'transactionid' AND l.transactionid = x AND l.granted
       AND l.mode = 'ExclusiveLock' AND l.pid <> pg_catalog.pg_backend_pid()
$$;

-- The candidates for transaction id X when no backend holds its lock: X
-- is a subtransaction's id (a writer's SAVEPOINT ... RELEASE around a
-- write or a SELECT ... FOR UPDATE), whose lock ended with the
-- subtransaction while its top-level transaction still holds the row, and
-- PostgreSQL 15 shows no map from one to the other. When X is still in
-- progress, the candidates are the running transactions older than X
-- that hold row locks or row writes on some table: all of them are named,
-- over-naming rather than saying "a transaction that has ended since" of
-- a live one. NULL when X is not in progress.
CREATE OR REPLACE FUNCTION cleanup.xid_subxact_pids(x xid)
RETURNS int[] LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v int[];
BEGIN
    BEGIN
        IF pg_catalog.pg_xact_status(cleanup.xid_to_xid8(x)) = 'in progress' THEN
            SELECT array_agg(a.pid ORDER BY a.pid) INTO v
              FROM pg_catalog.pg_stat_activity a
             WHERE a.backend_xid IS NOT NULL AND a.pid <> pg_catalog.pg_backend_pid()
               AND pg_catalog.age(a.backend_xid) > pg_catalog.age(x)
               AND EXISTS (SELECT 1 FROM pg_catalog.pg_locks l
                            WHERE l.pid = a.pid AND l.locktype = 'relation' AND l.granted
                              AND l.mode IN ('RowShareLock', 'RowExclusiveLock'));
        END IF;
    EXCEPTION WHEN OTHERS THEN
        v := NULL;
    END;
    RETURN v;
END $$;

-- X as a full transaction id (xid8): the one nearest to the snapshot's
-- xmax (X is a running or recent transaction, at most 2^31 away; it may
-- be past the xmax, which is one past the latest completed one).
CREATE OR REPLACE FUNCTION cleanup.xid_to_xid8(x xid)
RETURNS xid8 LANGUAGE plpgsql STABLE
AS $$
DECLARE
    nx bigint := pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::text::bigint;
    d  bigint;
BEGIN
    d := ((x::text::bigint - (nx & 4294967295) + 2147483648) % 4294967296 + 4294967296) % 4294967296 - 2147483648;
    RETURN (nx + d)::text::xid8;
END $$;

-- The backends, other than this one, that hold a lock on relation P_REL
-- conflicting with ROW EXCLUSIVE (what a cleanup transaction takes on
-- every table it writes), or that queue for one ahead of us, each with
-- its lock mode.
CREATE OR REPLACE FUNCTION cleanup.relation_pids(p_rel regclass, OUT pid int, OUT mode text, OUT granted boolean)
RETURNS SETOF record LANGUAGE sql STABLE
AS $$
    SELECT l.pid, l.mode, l.granted
      FROM pg_catalog.pg_locks l
     WHERE l.locktype = 'relation' AND l.relation = p_rel
       AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
       AND l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
       AND l.pid <> pg_catalog.pg_backend_pid()
$$;

-- Holders P_PIDS as JSON objects {pid, role, application, client, state,
-- xact_age_s, holds: P_WHAT}, in pid order; '[]' when none is alive.
CREATE OR REPLACE FUNCTION cleanup.holders_json(p_pids int[], p_what text)
RETURNS jsonb LANGUAGE sql STABLE
AS $$
    SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'pid', a.pid,
               'role', coalesce(a.usename::text, '?'),
               'application', coalesce(a.application_name, ''),
               'client', CASE WHEN a.client_addr IS NULL AND a.client_port = -1 THEN 'local'
                              ELSE coalesce(a.client_hostname, pg_catalog.host(a.client_addr), '?') END,
               'state', coalesce(a.state, '?'),
               'xact_age_s', pg_catalog.round(EXTRACT(epoch FROM pg_catalog.clock_timestamp() - a.xact_start)::numeric, 1),
               'holds', left(p_what, 200))
             ORDER BY a.pid), '[]'::jsonb)
      FROM pg_catalog.pg_stat_activity a
     WHERE a.pid = ANY (p_pids)
$$;

-- One line for messages: "pid 4411 (role sync_movies, application psql,
-- client local, idle in transaction, transaction 91.2 s old) holds row lock
-- on ...", several joined with "; ". P_H: holders_json's array.
CREATE OR REPLACE FUNCTION cleanup.holders_text(p_h jsonb)
RETURNS text LANGUAGE sql IMMUTABLE
AS $$
    SELECT coalesce(pg_catalog.string_agg(pg_catalog.format('pid %s (role %s, application %s, client %s, %s, transaction %s) holds %s',
                                  h->>'pid', h->>'role', coalesce(nullif(h->>'application', ''), 'none'), h->>'client',
                                  h->>'state',
                                  CASE WHEN h->>'xact_age_s' IS NULL THEN 'age unknown'
                                       ELSE (h->>'xact_age_s') || ' s old' END,
                                  h->>'holds'), '; '),
                    'a transaction that has ended since')
      FROM pg_catalog.jsonb_array_elements(coalesce(p_h, '[]'::jsonb)) AS h
$$;

-- The holders of a row whose xmax is X, for a message: " (held by ...)".
CREATE OR REPLACE FUNCTION cleanup.row_holders_text(x xid, p_what text)
RETURNS text LANGUAGE sql STABLE
AS $$
    SELECT cleanup.holders_text(cleanup.holders_json(cleanup.xid_pids(x), p_what))
$$;

-- The holders of engine lock KEY, for a busy message (011_holders.sql).
CREATE OR REPLACE FUNCTION cleanup.engine_lock_holders(p_key bigint, p_what text)
RETURNS text LANGUAGE sql STABLE
AS $$
    SELECT cleanup.row_holders_text((SELECT l.xmax FROM cleanup.engine_locks l WHERE l.key = p_key), p_what)
$$;

-- The holders of conflicting locks on relation P_REL, for a message.
CREATE OR REPLACE FUNCTION cleanup.relation_holders_text(p_rel regclass)
RETURNS text LANGUAGE plpgsql STABLE
AS $$
DECLARE
    h jsonb := '[]';
    r record;
BEGIN
    FOR r IN SELECT * FROM cleanup.relation_pids(p_rel) ORDER BY pid LOOP
        h := h || cleanup.holders_json(ARRAY[r.pid],
                     pg_catalog.format('%s on %s%s', r.mode, p_rel::text, CASE WHEN r.granted THEN '' ELSE ' (queued)' END));
    END LOOP;
    RETURN cleanup.holders_text(h);
END $$;

-- Who holds a table of the inventory or of the engine in a mode that
-- makes a reader or a writer wait (any lock that conflicts with ROW
-- EXCLUSIVE, held or queued), as holders_json objects, one per lock, in
-- pid order. Reads pg_locks once; '[]' when none.
CREATE OR REPLACE FUNCTION cleanup.table_lock_holders()
RETURNS jsonb LANGUAGE plpgsql STABLE
AS $$
DECLARE
    acc jsonb := '[]'::jsonb;
    r   record;
BEGIN
    FOR r IN SELECT l.pid, l.mode, l.granted, l.relation::regclass::text AS rel
               FROM pg_catalog.pg_locks l
              WHERE l.locktype = 'relation'
                AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d
                                   WHERE d.datname = pg_catalog.current_database())
                AND l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
                AND l.pid <> pg_catalog.pg_backend_pid()
                AND l.relation IN (SELECT c.oid FROM pg_catalog.pg_class c
                                    WHERE c.relnamespace IN ('inventory'::regnamespace, 'cleanup'::regnamespace)
                                      AND c.relkind IN ('r', 'p'))
              ORDER BY l.pid LOOP
        acc := acc || cleanup.holders_json(ARRAY[r.pid], pg_catalog.format('%s on %s%s', r.mode, r.rel,
                                                                  CASE WHEN r.granted THEN '' ELSE ' (queued)' END));
    END LOOP;
    RETURN acc;
END $$;

-- Holders P_ACC (holders_json objects, one per thing held) as one object
-- per backend, what each holds joined, in pid order.
CREATE OR REPLACE FUNCTION cleanup.holders_by_pid(acc jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE
AS $$
    SELECT coalesce(pg_catalog.jsonb_agg(o ORDER BY (o->>'pid')::int), '[]'::jsonb)
      FROM (SELECT (pg_catalog.array_agg(h ORDER BY h->>'holds'))[1] - 'holds'
                   || pg_catalog.jsonb_build_object('holds',
                          left(pg_catalog.string_agg(DISTINCT h->>'holds', ', '), 600)) AS o
              FROM pg_catalog.jsonb_array_elements(acc) AS h
             GROUP BY h->>'pid') g
$$;

-- The table_lock_holders, one per backend: what a command that ended in a
-- lock timeout names (T3), when it cannot know which lock it waited for.
CREATE OR REPLACE FUNCTION cleanup.lock_blockers()
RETURNS jsonb LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN cleanup.holders_by_pid(cleanup.table_lock_holders());
END $$;

-- Everything that holds up job P_JOB now, as holders_json objects, one
-- per backend (what each holds joined): locks on the tables a cleanup
-- transaction writes; the job's row; its engine lock rows (coordinator,
-- library locks, the count cache's declared write locks); the admission,
-- parent and count rows of its libraries; the items it waits for (its
-- retained rows and its claims, the first 32 of each) and their
-- dependents; a removal's library dependents (collections, sync status,
-- history). '[]' when nothing holds it.
CREATE OR REPLACE FUNCTION cleanup.job_blockers(p_job bigint)
RETURNS jsonb LANGUAGE plpgsql STABLE
-- Never a waiter itself: the tables it reads may be what is held (a
-- writer's LOCK TABLE); then the rows are not looked at.
SET lock_timeout = '200ms'
AS $$
DECLARE
    j     cleanup.jobs;
    libs  bigint[];
    acc   jsonb := '[]';
    r     record;
BEGIN
    SELECT * INTO j FROM cleanup.jobs WHERE id = p_job;
    IF NOT FOUND THEN
        RETURN '[]';
    END IF;
    -- Tables: pg_locks once for all of them.
    acc := cleanup.table_lock_holders();
    -- Rows: the job's own, its engine locks, its libraries' and server's.
    BEGIN
    libs := CASE WHEN j.kind = 'remove-server'
                 THEN ARRAY(SELECT l.id FROM inventory.libraries l WHERE l.server_id = j.server_id ORDER BY l.id LIMIT 64)
                 ELSE ARRAY[j.library_id] END;
    FOR r IN SELECT x.what, x.xmax FROM (
                 SELECT pg_catalog.format('the row of job %s', j.id) AS what, c.xmax
                   FROM cleanup.jobs c WHERE c.id = j.id
                 UNION ALL
                 SELECT CASE l.key >> 40 WHEN 1 THEN 'the cleanup coordinator lock of server '
                                         WHEN 2 THEN 'the cleanup lock of library '
                                         ELSE 'the declared write lock (count cache) of library ' END
                        || (l.key & ((1::bigint << 40) - 1))::text, l.xmax
                   FROM cleanup.engine_locks l
                  WHERE l.key = cleanup.coordinator_key(j.server_id)
                     OR l.key IN (SELECT cleanup.library_key(x) FROM unnest(libs) x
                                  UNION ALL SELECT cleanup.write_key(x) FROM unnest(libs) x)
                 UNION ALL
                 -- The admission, parent and count rows of its libraries and
                 -- server: what each is, then its id.
                 SELECT pg_catalog.format('%s %s', o.what, o.id), o.xmax FROM (
                     SELECT 'the admission row of library' AS what, a.library_id AS id, a.xmax
                       FROM cleanup.library_admission a WHERE a.library_id = ANY (libs)
                     UNION ALL SELECT 'the admission row of server', a.server_id, a.xmax
                       FROM cleanup.server_admission a WHERE a.server_id = j.server_id
                     UNION ALL SELECT 'the row of library', l.id, l.xmax
                       FROM inventory.libraries l WHERE l.id = ANY (libs)
                     UNION ALL SELECT 'the row of server', s.id, s.xmax
                       FROM inventory.media_servers s WHERE s.id = j.server_id
                     UNION ALL SELECT 'the item count of library', st.library_id, st.xmax
                       FROM cleanup.library_stats st WHERE st.library_id = ANY (libs)) o
                 UNION ALL
                 SELECT pg_catalog.format('item %s of library %s (retained by the job)', i.id, i.library_id), i.xmax
                   FROM (SELECT rr.item_id FROM cleanup.job_retained rr WHERE rr.job_id = j.id
                          ORDER BY rr.item_id LIMIT 32) q
                   JOIN inventory.items i ON i.id = q.item_id
                 UNION ALL
                 SELECT pg_catalog.format('item %s of library %s (claimed by the job)', i.id, i.library_id), i.xmax
                   FROM (SELECT c.item_id FROM cleanup.job_claims c WHERE c.job_id = j.id
                          ORDER BY c.item_id LIMIT 32) q
                   JOIN inventory.items i ON i.id = q.item_id
                 UNION ALL
                 -- The dependents of those items that a transaction has
                 -- locked (a step skips them: cleanup.delete_item_dependents),
                 -- the first 4 of each table per item.
                 SELECT pg_catalog.format('%s %s of item %s (a dependent the job deletes)', d.kind, d.id, q.item_id),
                        d.xmax
                   FROM ((SELECT rr.item_id FROM cleanup.job_retained rr WHERE rr.job_id = j.id
                           ORDER BY rr.item_id LIMIT 32)
                         UNION
                         (SELECT c.item_id FROM cleanup.job_claims c WHERE c.job_id = j.id
                           ORDER BY c.item_id LIMIT 32)) q
                  CROSS JOIN LATERAL (
                        (SELECT 'item retry' AS kind, rt.id, rt.xmax FROM inventory.item_retries rt
                          WHERE rt.item_id = q.item_id AND rt.xmax <> '0'::xid LIMIT 4)
                        UNION ALL
                        (SELECT 'identity review preview', pv.id, pv.xmax FROM inventory.identity_review_previews pv
                          WHERE pv.item_id = q.item_id AND pv.xmax <> '0'::xid LIMIT 4)) d
                 UNION ALL
                 -- A removal's library dependents a transaction has locked
                 -- (cleanup.library_dependents_drain skips them), the first
                 -- 4 of each table among each library's first 2,000 rows.
                 SELECT pg_catalog.format('%s of library %s (a dependent the job deletes)', d.what, lb.x), d.xmax
                   FROM unnest(CASE WHEN j.kind <> 'prune' THEN libs END) AS lb(x)
                  CROSS JOIN LATERAL (
                        (SELECT 'collection ' || c.id AS what, c.xmax
                           FROM (SELECT c.id, c.xmax FROM inventory.library_collections c
                                  WHERE c.library_id = lb.x ORDER BY c.library_id, c.id LIMIT 2000) c
                          WHERE c.xmax <> '0'::xid LIMIT 4)
                        UNION ALL
                        (SELECT 'the sync status', st.xmax FROM inventory.library_sync_status st
                          WHERE st.library_id = lb.x AND st.xmax <> '0'::xid LIMIT 4)
                        UNION ALL
                        (SELECT 'history record ' || h.id, h.xmax
                           FROM (SELECT h.id, h.xmax FROM inventory.classification_history h
                                  WHERE h.library_id = lb.x ORDER BY h.library_id, h.id LIMIT 2000) h
                          WHERE h.xmax <> '0'::xid LIMIT 4)) d) x
              WHERE x.xmax <> '0'::xid LOOP
        acc := acc || cleanup.holders_json(cleanup.xid_pids(r.xmax), r.what);
    END LOOP;
    EXCEPTION WHEN lock_not_available THEN
        NULL;                   -- a table is held: its holder is named above
    END;
    RETURN cleanup.holders_by_pid(acc);
END $$;

-- Raises 55P03 for job P_JOB, which waits for the items P_IDS that other
-- transactions hold (T4), naming the holder of the first one still held:
-- the item itself, else a dependent of it (a retry or preview a writer
-- holds, which cleanup.delete_item_dependents skipped). Rows this
-- transaction locked carry its own id and name nobody.
CREATE OR REPLACE FUNCTION cleanup.raise_item_held(p_job bigint, p_ids bigint[])
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    r    record;
    v_me xid := pg_catalog.pg_current_xact_id_if_assigned()::xid;
BEGIN
    SELECT x.k, x.item_id, x.library_id, x.what, x.xmax INTO r
      FROM (SELECT 0 AS k, i.id AS item_id, i.id AS row_id, i.library_id,
                   pg_catalog.format('item %s of library %s', i.id, i.library_id) AS what, i.xmax
              FROM inventory.items i WHERE i.id = ANY (p_ids)
            UNION ALL
            SELECT 1, d.item_id, d.id, i.library_id,
                   pg_catalog.format('%s %s of item %s of library %s', d.kind, d.id, d.item_id, i.library_id), d.xmax
              FROM (SELECT 'item retry' AS kind, rr.id, rr.item_id, rr.xmax FROM inventory.item_retries rr
                     WHERE rr.item_id = ANY (p_ids) AND rr.xmax <> '0'::xid
                    UNION ALL
                    SELECT 'identity review preview', p.id, p.item_id, p.xmax FROM inventory.identity_review_previews p
                     WHERE p.item_id = ANY (p_ids) AND p.xmax <> '0'::xid) d
              JOIN inventory.items i ON i.id = d.item_id) x
     WHERE x.xmax <> '0'::xid AND x.xmax IS DISTINCT FROM v_me AND cardinality(cleanup.xid_pids(x.xmax)) > 0
     ORDER BY x.item_id, x.k, x.row_id LIMIT 1;
    IF NOT FOUND THEN
        -- Nobody alive holds them any more: the first item, unnamed.
        SELECT 0 AS k, i.id AS item_id, i.library_id, pg_catalog.format('item %s of library %s', i.id, i.library_id) AS what,
               i.xmax INTO r
          FROM inventory.items i WHERE i.id = ANY (p_ids) ORDER BY i.id LIMIT 1;
    END IF;
    PERFORM cleanup.raise_row_busy(
        pg_catalog.format('job %s waits for item %s of library %s, held by another transaction%s',
                          p_job, coalesce(r.item_id::text, '<NULL>'), coalesce(r.library_id::text, '<NULL>'),
                          CASE WHEN coalesce(r.k, 0) = 0 THEN ''
                               ELSE pg_catalog.format(' (its %s)', substring(r.what FROM '^(.*) of item ')) END),
        r.what, r.xmax,
        'busy: retry later; the job goes on once the holder commits or rolls back');
END $$;

-- Locks every stripe of the item counts of libraries P_LIBS FOR UPDATE
-- without waiting, in ascending order; 55P03 naming the holder when
-- another transaction holds one. For the deletes of a library's counts
-- (finalize). SKIP LOCKED, not NOWAIT: no subtransaction in a step.
CREATE OR REPLACE FUNCTION cleanup.lock_library_stats(p_libs bigint[])
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    n int;
    r record;
BEGIN
    SELECT count(*) INTO n FROM (SELECT 1 FROM cleanup.library_stats
                                  WHERE library_id = ANY (p_libs) ORDER BY library_id, stripe
                                    FOR UPDATE SKIP LOCKED) q;
    IF n < (SELECT count(*) FROM cleanup.library_stats WHERE library_id = ANY (p_libs)) THEN
        SELECT st.library_id, st.xmax INTO r FROM cleanup.library_stats st
         WHERE st.library_id = ANY (p_libs)
           AND cardinality(cleanup.xid_pids(st.xmax)) > 0
         ORDER BY st.library_id, st.stripe LIMIT 1;
        PERFORM cleanup.raise_row_busy(
            pg_catalog.format('the item count of library %s is locked by another transaction (a sync write in flight)',
                              coalesce(r.library_id::text, '?')),
            pg_catalog.format('the item count of library %s', r.library_id), r.xmax);
    END IF;
END $$;

-- Locks one stripe of the item count of each of libraries P_LIBS FOR
-- UPDATE for this transaction without waiting: the count trigger of a
-- step's DELETE then finds a stripe it can update at once (the first one
-- no other transaction holds, this one if no other; 020_admission.sql).
-- A library every stripe of which another transaction holds (writers
-- moving rows out, each holding one) gets a new stripe. One statement in
-- the usual case. 55P03 naming a holder only when two transactions add
-- the same new stripe at once.
CREATE OR REPLACE FUNCTION cleanup.lock_library_stripe(p_libs bigint[])
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    v_none bigint[];
    l      bigint;
    r      record;
BEGIN
    SELECT array_agg(u.l ORDER BY u.l) FILTER (WHERE s.stripe IS NULL) INTO v_none
      FROM unnest(p_libs) AS u(l)
      LEFT JOIN LATERAL (SELECT x.stripe FROM cleanup.library_stats x WHERE x.library_id = u.l
                          ORDER BY x.library_id, x.stripe LIMIT 1 FOR UPDATE SKIP LOCKED) s ON true;
    FOREACH l IN ARRAY coalesce(v_none, '{}'::bigint[]) LOOP
        INSERT INTO cleanup.library_stats (library_id, stripe, item_count)
        SELECT l, coalesce(max(x.stripe) + 1, 0), 0 FROM cleanup.library_stats x WHERE x.library_id = l
        ON CONFLICT (library_id, stripe) DO NOTHING;
        IF NOT FOUND THEN
            SELECT st.library_id, st.xmax INTO r FROM cleanup.library_stats st
             WHERE st.library_id = l AND cardinality(cleanup.xid_pids(st.xmax)) > 0
             ORDER BY st.stripe LIMIT 1;
            PERFORM cleanup.raise_row_busy(
                pg_catalog.format('the item count of library %s is locked by other transactions (sync writes in flight)', l),
                pg_catalog.format('the item count of library %s', l), r.xmax);
        END IF;
    END LOOP;
END $$;

-- Locks P_TABLES (a fixed list of the caller's: regclass names, never
-- input) IN ROW EXCLUSIVE MODE without waiting: a table someone holds
-- (a LOCK TABLE, DDL, or DDL queued behind a long reader) is busy, 55P03,
-- naming the holders, instead of a wait that ends in a lock timeout with
-- nobody named. For the job functions outside the step (create, seal);
-- the EXCEPTION block is a subtransaction.
CREATE OR REPLACE FUNCTION cleanup.lock_tables_nowait(p_what text, p_tables regclass[])
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    BEGIN
        EXECUTE 'LOCK TABLE ' || (SELECT pg_catalog.string_agg(t::text, ', ' ORDER BY o)
                                    FROM unnest(p_tables) WITH ORDINALITY AS u(t, o))
                || ' IN ROW EXCLUSIVE MODE NOWAIT';
    EXCEPTION WHEN lock_not_available THEN
        PERFORM cleanup.raise_busy(pg_catalog.format('%s is busy: a table it writes is locked', p_what),
            (SELECT pg_catalog.string_agg(cleanup.relation_holders_text(t), '; ')
               FROM unnest(p_tables) AS t WHERE EXISTS (SELECT 1 FROM cleanup.relation_pids(t))));
    END;
END $$;
