-- 014_plan: seed 004's plan phase and rollout switch (seed 004;
-- 032_plan.sql has the functions, docs/operator-guide.md the how-to).
--
-- 1. Validators: named functions the installer records (cleanupctl install
--    --validator SCHEMA.FUNC, --remove-validator SCHEMA.FUNC), each
--    SCHEMA.FUNC(kind text, target_id bigint) RETURNS text: a refusal
--    reason, or NULL. Every `job create` runs them in its plan phase,
--    under the parent row lock; a reason refuses the job (CU461). Kept by
--    name, as regprocedure prints it (a reg* column would stop pg_upgrade);
--    looked up again, in pg_proc, at every call.
-- 2. The rollout switch (seed 004, section 5): the mode `job create` uses
--    when --mode is absent, recorded by cleanupctl install --default-mode
--    (bounded, the default, or single-transaction: the old one-transaction
--    cascade, which applies to remove-library only).
-- Written to apply again over its own result.
CREATE TABLE IF NOT EXISTS cleanup.plan_validators (
    name        text PRIMARY KEY,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    recorded_by text NOT NULL DEFAULT session_user
);

CREATE TABLE IF NOT EXISTS cleanup.plan_settings (
    singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    default_mode text NOT NULL DEFAULT 'bounded' CHECK (default_mode IN ('bounded', 'single-transaction')),
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    recorded_by  text NOT NULL DEFAULT session_user
);
INSERT INTO cleanup.plan_settings (singleton) VALUES (true) ON CONFLICT (singleton) DO NOTHING;
