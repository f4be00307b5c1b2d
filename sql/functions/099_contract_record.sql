-- 099_contract_record: the installer records the schema contract after
-- applying every definition (last file of the bundle, by name).
-- First the dispositions of the known references; a reference without
-- one refuses the install (CU404) before a contract is recorded. Then
-- drift that no contract may record (a cascade anywhere in the graph, a
-- disabled foreign key or guard, a foreign trigger, a child table:
-- 096_drift.sql) refuses it (CU460); contract_record checks that itself.
SELECT cleanup.record_dispositions();
SELECT cleanup.assert_install_references();
SELECT cleanup.assert_no_drift(NULL);
SELECT cleanup.contract_record();
