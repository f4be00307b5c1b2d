-- The installer's first look (T6), before it applies anything: drift that
-- no contract may record, as found, against the recorded contract's
-- function settings. Raises CU460 naming it; nothing is changed.
SELECT cleanup.assert_no_drift((SELECT components FROM cleanup.schema_contract))
