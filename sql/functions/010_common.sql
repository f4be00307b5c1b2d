-- 010_common: lock keys, nonblocking lock helpers and the error vocabulary
-- shared by the admission guards and the engine functions.
--
-- SQLSTATEs raised by cleanupctl (the C side maps them to exit codes in one
-- place, core/src/error.c):
--   55P03  lock_not_available: busy, retry later                    exit 3
--   CU001  not found (job, library, server, step)                     exit 1
--   CU101  invalid input (external ID rules, batch size, counts)      exit 2
--   CU400  refused by the job's phase                                 exit 4
--   CU401  refused: the server already has an unfinished job          exit 4
--   CU402  refused: seal count differs from the manifest              exit 4
--   CU403  refused: schema contract drift                             exit 4
--   CU404  refused: an unknown foreign key references what a job deletes  exit 4
--   CUA01  admission: target library or server is draining            exit 4
--   CUA02  admission: parent library or server does not exist         exit 4
--   CUA03  admission: parent mismatch (server identity would change)  exit 4
--   CUA04  admission: immutable column changed (id, external_id, server)
--   CUA05  parent guard: delete outside the cleanup protocol          exit 4
--   CUA10  a write to a claimed item or its dependents (D4)           exit 4
--   CUA11  a dependent write into a draining library or server (D5)  exit 4
--   CUA12  a write that sets, changes or clears a claim (T1)          exit 4
--   CU102  a disposition, validator or default mode that cannot be recorded  exit 2
--   CU420  install: the inventory holds ids outside the key space     exit 4
--   CU460  install: drift that no contract may record (T6, 096_drift.sql)  exit 4
--   CU461  job create: a recorded validator refused the job (032_plan.sql)  exit 4
--
-- Every busy answer (55P03) the engine raises names who holds what it
-- needed (T3; 011_holders.sql): the message ends "held by pid N (role,
-- application, client, state, transaction age) holds WHAT".

-- Engine lock keys: namespace in the high bits, the object id in the low
-- 40 bits. Since schema 006 the keys name rows of cleanup.engine_locks,
-- locked FOR UPDATE (not advisory locks, which any login role could take
-- and so block cleanup, or forge for a parent guard: T1-T8).
CREATE OR REPLACE FUNCTION cleanup.lock_key(ns int, obj bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT ((ns::bigint) << 40) | obj;
END;

-- Namespace 1: per-server cleanup coordinator lock. Namespace 2: library lock.
CREATE OR REPLACE FUNCTION cleanup.coordinator_key(server bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT cleanup.lock_key(1, server);
END;

CREATE OR REPLACE FUNCTION cleanup.library_key(library bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT cleanup.lock_key(2, library);
END;

-- Takes engine lock KEY for this transaction without waiting (its row of
-- cleanup.engine_locks FOR UPDATE SKIP LOCKED: no subtransaction, no
-- wait). Returns false when another transaction holds it. A missing row
-- (an object created before its trigger existed) is created first.
CREATE OR REPLACE FUNCTION cleanup.try_engine_lock(p_key bigint)
RETURNS boolean LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM 1 FROM cleanup.engine_locks WHERE key = p_key FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
        RETURN true;
    END IF;
    PERFORM 1 FROM cleanup.engine_locks WHERE key = p_key;
    IF FOUND THEN
        RETURN false;                       -- held by another transaction
    END IF;
    INSERT INTO cleanup.engine_locks (key) VALUES (p_key) ON CONFLICT DO NOTHING;
    PERFORM 1 FROM cleanup.engine_locks WHERE key = p_key FOR UPDATE SKIP LOCKED;
    RETURN FOUND;
END $$;

-- The engine's busy answer (T3), one home for all: raises 55P03 with
-- P_MESSAGE, naming in the detail the holders P_HOLDERS (a holders_text
-- line, 011_holders.sql; NULL when the holder has ended since) and hinting
-- P_HINT. Never returns.
CREATE OR REPLACE FUNCTION cleanup.raise_busy(p_message text, p_holders text,
                                              p_hint text DEFAULT 'busy: retry later')
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION '%', p_message
        USING ERRCODE = '55P03',
              DETAIL = 'held by ' || coalesce(p_holders, 'a transaction that has ended since'),
              HINT = p_hint;
END $$;

-- The busy answer of a row another transaction holds: raise_busy naming
-- the holders of the row whose xmax is P_XMAX as holding P_WHAT.
CREATE OR REPLACE FUNCTION cleanup.raise_row_busy(p_message text, p_what text, p_xmax xid,
                                                  p_hint text DEFAULT 'busy: retry later')
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM cleanup.raise_busy(p_message, cleanup.row_holders_text(p_xmax, p_what), p_hint);
END $$;

-- Takes engine lock P_KEY for this transaction without waiting; raises
-- 55P03 when another cleanup transaction holds it: P_MESSAGE as the
-- message, its holder named in the detail as holding P_WHAT. The one busy
-- answer of every engine lock (T3).
CREATE OR REPLACE FUNCTION cleanup.take_engine_lock(p_key bigint, p_message text, p_what text)
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    IF NOT cleanup.try_engine_lock(p_key) THEN
        PERFORM cleanup.raise_busy(p_message, cleanup.engine_lock_holders(p_key, p_what));
    END IF;
END $$;

-- Takes the server's coordinator lock for this transaction without waiting;
-- raises 55P03 when another cleanup transaction holds it, naming it.
CREATE OR REPLACE FUNCTION cleanup.lock_coordinator(server bigint)
RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM cleanup.take_engine_lock(cleanup.coordinator_key(server),
        pg_catalog.format('cleanup coordinator lock for server %s is held by another cleanup transaction', server),
        pg_catalog.format('the cleanup coordinator lock of server %s', server));
END $$;

-- Takes library locks in ascending id order without waiting (L1).
CREATE OR REPLACE FUNCTION cleanup.lock_libraries(libs bigint[])
RETURNS void LANGUAGE plpgsql
-- A sort of a few ids, whatever the caller disabled (enable_sort = off in
-- a drain step priced it at 1e10, which also made it a JIT candidate).
SET enable_sort = on
AS $$
DECLARE
    l bigint;
BEGIN
    FOR l IN SELECT DISTINCT x FROM unnest(libs) AS x ORDER BY x LOOP
        PERFORM cleanup.take_engine_lock(cleanup.library_key(l),
            pg_catalog.format('library lock for library %s is held by another cleanup transaction', l),
            pg_catalog.format('the cleanup lock of library %s', l));
    END LOOP;
END $$;

-- True when this transaction holds engine lock KEY: its row's xmax is this
-- transaction's id, or the id of one of its subtransactions (a savepoint
-- released or still open: T5, "writers as they really write": ORMs
-- declare their locks inside savepoints). Only a lock taken (or a change
-- made) by this transaction can put either there; a role without access
-- to cleanup.engine_locks cannot arrange it.
-- A subtransaction's id is newer than its top-level transaction's
-- (age() < 0), and PostgreSQL exposes no test of "one of mine": so the row
-- is locked again, SKIP LOCKED. A lock this transaction already holds is
-- granted without change (xmax stays); another live transaction's is
-- skipped; a lock left by a finished one is taken anew, which writes this
-- transaction's id: a changed xmax answers false. Only rows whose xmax is
-- newer than this transaction pay that (rare: the guards' usual answers
-- come from the first two tests). VOLATILE: it may lock.
CREATE OR REPLACE FUNCTION cleanup.holds_lock(key bigint)
RETURNS boolean LANGUAGE plpgsql
AS $$
DECLARE
    v_top xid8 := pg_catalog.pg_current_xact_id_if_assigned();
    x0    xid;
    x1    xid;
BEGIN
    IF v_top IS NULL THEN
        RETURN false;               -- no transaction id: no row lock either
    END IF;
    SELECT l.xmax INTO x0 FROM cleanup.engine_locks l WHERE l.key = holds_lock.key;
    IF NOT FOUND OR x0 = '0'::xid THEN
        RETURN false;
    ELSIF x0 = v_top::xid THEN
        RETURN true;
    ELSIF pg_catalog.age(x0) >= 0 THEN
        RETURN false;               -- older than this transaction: not a subtransaction of it
    END IF;
    PERFORM 1 FROM cleanup.engine_locks l WHERE l.key = holds_lock.key FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    SELECT l.xmax INTO x1 FROM cleanup.engine_locks l WHERE l.key = holds_lock.key;
    RETURN x1 = x0;
END $$;

-- The job row, locked FOR UPDATE without waiting; CU001 when it does not
-- exist, 55P03 naming the holder when another transaction holds it.
-- SKIP LOCKED, not NOWAIT in an EXCEPTION block: no subtransaction.
CREATE OR REPLACE FUNCTION cleanup.lock_job(p_job bigint)
RETURNS cleanup.jobs LANGUAGE plpgsql
AS $$
DECLARE
    j cleanup.jobs;
BEGIN
    SELECT * INTO j FROM cleanup.jobs WHERE id = p_job FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        PERFORM cleanup.raise_job_busy(p_job);
    END IF;
    RETURN j;
END $$;

-- Raises for job P_JOB whose row SKIP LOCKED did not return: CU001 when
-- the job does not exist, else 55P03 naming who holds its row.
CREATE OR REPLACE FUNCTION cleanup.raise_job_busy(p_job bigint)
RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    x xid;
BEGIN
    SELECT c.xmax INTO x FROM cleanup.jobs c WHERE c.id = p_job;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'job % does not exist', p_job USING ERRCODE = 'CU001';
    END IF;
    PERFORM cleanup.raise_row_busy(pg_catalog.format('job %s is locked by another transaction', p_job),
                                   pg_catalog.format('the row of job %s', p_job), x);
END $$;

-- A short description of a job for messages: "job 12 (prune of library 5 "Movies")".
CREATE OR REPLACE FUNCTION cleanup.job_label(j cleanup.jobs)
RETURNS text LANGUAGE sql STABLE
-- A string body, not BEGIN ATOMIC: an SQL-standard body that reads a
-- table would pin its columns and refuse later migrations (ALTER TABLE
-- ... DROP COLUMN). search_path is pinned by 098.
AS $$
    SELECT format('job %s (%s of %s %s %L, phase %s)', j.id, j.kind,
                  CASE WHEN j.kind = 'remove-server' THEN 'server' ELSE 'library' END,
                  coalesce(j.library_id, j.server_id), j.target_name, j.phase);
$$;

-- Appends a row to the event log; bounded message size.
CREATE OR REPLACE FUNCTION cleanup.log_event(p_job bigint, p_kind text, p_message text)
RETURNS void LANGUAGE sql
-- A string body, not BEGIN ATOMIC: an SQL-standard body that reads a
-- table would pin its columns and refuse later migrations (ALTER TABLE
-- ... DROP COLUMN). search_path is pinned by 098.
AS $$
    INSERT INTO cleanup.events (job_id, kind, message)
    VALUES (p_job, left(p_kind, 40), left(p_message, 2000));
    SELECT pg_notify('cleanup_events', coalesce(p_job::text, ''));
$$;
