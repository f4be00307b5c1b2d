-- Whether the installer can compare the recorded schema contract with the
-- live schema (cleanup.contract_drift exists), and the recorded components.
SELECT to_regprocedure('cleanup.contract_drift()') IS NOT NULL AS can_compare,
       (SELECT components::text FROM cleanup.schema_contract) AS recorded
