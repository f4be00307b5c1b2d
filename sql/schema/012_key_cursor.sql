-- 012_key_cursor: a prune's first pass in external-ID order
-- (docs/steps.md, "Pass 1 of a prune").
--
-- A prune's first pass walks the library's items in external-ID order,
-- merged with the job's manifest over the same key range (both are
-- ordered index ranges), instead of in id order with one manifest probe
-- per row: a probe cost 4-5 us, the merge about a third of that.
--
-- cleanup.jobs.key_cursor: the last external ID the first pass took (''
-- before its first step). NULL: the job walks its first pass in id order
-- (every removal, and a prune sealed before this migration: one already
-- draining in id order finishes that way).
-- cleanup.jobs.key_bound: the 1,024th manifest key after key_cursor when a
-- step computed it, NULL before that or once the cursor reached it. A step
-- reads items and manifest keys only up to it, so a manifest with many IDs
-- that match no item cannot make one step read more than 1,024 of them.
-- The manifest is sealed, so a bound computed by one step holds for the
-- next ones until the cursor passes it.
-- cleanup.jobs.key_bound_end: fewer than 1,024 manifest keys follow the
-- cursor (the manifest does not grow): key_bound is then the library's
-- last external ID, and the rest of the pass is one range
-- (sql/functions/060_step.sql, cleanup.step_mode_drain).

ALTER TABLE cleanup.jobs
    ADD COLUMN key_cursor text,
    ADD COLUMN key_bound text,
    ADD COLUMN key_bound_end boolean NOT NULL DEFAULT false;

-- Sealed prunes that have not run a step yet start in key order.
UPDATE cleanup.jobs SET key_cursor = ''
 WHERE kind = 'prune' AND mode = 'bounded' AND phase = 'draining' AND step_no = 0;
