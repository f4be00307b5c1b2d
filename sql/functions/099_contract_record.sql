-- 099_contract_record: the installer records the schema contract after
-- applying every definition (last file of the bundle, by name).
SELECT cleanup.contract_record();
