-- 002_steps: what the bounded step engine records beyond 001_base.
--
-- job_steps.xact_id: the transaction that committed the step. A call of
--   cleanup.job_step() that returns a row written by another transaction
--   returned a recorded step (a replay, S8): the C side compares it with
--   pg_current_xact_id_if_assigned().
-- job_steps.checked: rows read by a final absence check (S6). They are not
--   "visited": visiting means being considered for a mutation, which is what
--   the 128-row budget (S1) bounds.
-- The mutation budget allows one exception: the single-transaction
--   comparison mode (kept for comparison), which reproduces the old unbounded
--   cascade on purpose and records its true count.

ALTER TABLE cleanup.job_steps
    ADD COLUMN xact_id xid8 DEFAULT pg_current_xact_id(),
    ADD COLUMN checked int NOT NULL DEFAULT 0 CHECK (checked >= 0);

ALTER TABLE cleanup.job_steps DROP CONSTRAINT job_steps_mutations_check;
ALTER TABLE cleanup.job_steps
    ADD CONSTRAINT job_steps_mutation_budget
    CHECK (mutations >= 0 AND (mutations <= 128 OR action = 'single-transaction'));

-- Visited counts add up (per step): every visited row is deleted, moved,
-- absent, retained or kept.
ALTER TABLE cleanup.job_steps
    ADD CONSTRAINT job_steps_visit_identity
    CHECK (visited = deleted + moved + absent + retained + kept);
