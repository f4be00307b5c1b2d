-- 009_count_cache: the per-library item-count cache of seed 002
-- (docs/count-cache.md), a structure beside cleanup.library_stats.
--
-- Fixed capacity, preallocated here once: 32 registry slots (one per
-- watched library) and 128 summary slots (one per cached page). A slot is
-- free when its owner column is NULL; allocation takes only free slots,
-- FOR UPDATE SKIP LOCKED. Nothing else of the cache grows: a write changes
-- counters and dirty marks in these rows, never adds rows.
--
-- A page covers the ids (lo, hi] of one library; the first page starts at
-- the smallest bigint, the last ends at the largest, so pages tile the
-- whole id line once the build is complete (built_through = the largest
-- bigint). A range inside the built coverage without a summary is a
-- released empty page (a gap): a write there forces a rebuild.

CREATE SEQUENCE cleanup.count_epoch_seq;

CREATE TABLE cleanup.count_registry (
    slot             int PRIMARY KEY CHECK (slot BETWEEN 1 AND 32),
    library_id       bigint UNIQUE,                  -- NULL: free
    epoch            bigint NOT NULL DEFAULT 0,      -- a fresh value at every allocation and rebuild
    revision         bigint NOT NULL DEFAULT 0,      -- source revision: bumped by every write to the library
    applied_revision bigint NOT NULL DEFAULT 0,      -- the revision whose invalidation the cache received
    built_through    bigint,                         -- pages cover (min, built_through]; NULL: not started
    restart_reason   text,                           -- sticky until a rebuild starts
    last_restart     text,                           -- why the current epoch began
    allocated_at     timestamptz,
    last_visit_at    timestamptz,
    published_count  bigint,
    published_revision bigint,
    published_epoch  bigint,
    published_at     timestamptz,
    CHECK ((library_id IS NULL) = (allocated_at IS NULL))
);
INSERT INTO cleanup.count_registry (slot) SELECT generate_series(1, 32);

CREATE TABLE cleanup.count_summaries (
    slot          int PRIMARY KEY CHECK (slot BETWEEN 1 AND 128),
    registry_slot int REFERENCES cleanup.count_registry (slot),  -- NULL: free
    epoch         bigint,
    lo            bigint,          -- exclusive
    hi            bigint,          -- inclusive
    item_count    int CHECK (item_count BETWEEN 0 AND 20000),
    dirty         boolean NOT NULL DEFAULT false,
    dirty_since   timestamptz,
    verified_at   timestamptz,     -- when its rows were last counted
    CHECK (registry_slot IS NULL OR (lo < hi AND epoch IS NOT NULL))
);
INSERT INTO cleanup.count_summaries (slot) SELECT generate_series(1, 128);
CREATE INDEX count_summaries_owner_idx ON cleanup.count_summaries (registry_slot, lo);

-- Each library's write lock (namespace 3 of cleanup.engine_locks, see
-- sql/functions/075_count_cache.sql): a row per library, created with the
-- library (trigger libraries_count_cache_insert) and here for those that
-- exist, so that taking it never inserts (an insert would wait for another
-- transaction's uncommitted insert of the same key, even when asked not
-- to wait).
INSERT INTO cleanup.engine_locks (key)
SELECT (3::bigint << 40) | id FROM inventory.libraries
ON CONFLICT DO NOTHING;
