-- The components of the recorded schema contract that differ from the live
-- schema, comma-separated; NULL when there is no drift.
SELECT cleanup.contract_drift() AS drift
