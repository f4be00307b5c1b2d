-- 099_contract_record: the installer records the schema contract after
-- applying every definition (last file of the bundle, by name).
-- First the dispositions of the known references; a reference without
-- one refuses the install (CU404) before a contract is recorded.
SELECT cleanup.record_dispositions();
SELECT cleanup.assert_install_references();
SELECT cleanup.contract_record();
