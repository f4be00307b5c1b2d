-- 019_library_stats_stripes: the per-library item counter as stripes
-- (docs/benchmarks.md, "Sync writers"; docs/data-model.md).
--
-- Every writer statement updated its library's one row of
-- cleanup.library_stats and held it to its commit, so two writers into
-- one library ran one after the other (writer 2 waited for writer 1's
-- commit in 5 of 5 rounds of bench_writers), and a step of a job whose
-- library a writer was moving rows out of was busy on the same row. A
-- library's count is now the sum of its stripes: a writer or a step adds
-- to the first stripe no other transaction holds (FOR UPDATE SKIP
-- LOCKED), and adds a stripe when every one is held
-- (cleanup.bump_counts); readers sum them. A library has as many stripes
-- as writers ever wrote to it at once. Written to apply again over its
-- own result.
ALTER TABLE cleanup.library_stats ADD COLUMN IF NOT EXISTS stripe int NOT NULL DEFAULT 0;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint c
                    WHERE c.conrelid = 'cleanup.library_stats'::regclass AND c.contype = 'p'
                      AND cardinality(c.conkey) = 2) THEN
        ALTER TABLE cleanup.library_stats DROP CONSTRAINT library_stats_pkey;
        ALTER TABLE cleanup.library_stats ADD CONSTRAINT library_stats_pkey PRIMARY KEY (library_id, stripe);
    END IF;
END $$;
