-- 004_contract: the recorded schema contract (seed 001). The installer
-- records a fingerprint of the guarded schema; steps compare it before any
-- domain mutation and refuse on drift. An event trigger marks the contract
-- dirty on DDL so that the comparison is paid only after a change.
CREATE TABLE cleanup.schema_contract (
    singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    fingerprint  text NOT NULL,
    components   jsonb NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    dirty        boolean NOT NULL DEFAULT false,
    dirty_since  timestamptz,
    dirty_reason text
);
