-- After a repair: the components whose newly recorded value differs from
-- the one recorded before ($1, jsonb; NULL when there was none), that is,
-- the drift that re-applying the definitions did not undo and that is now
-- part of the contract.
SELECT string_agg(k, ', ' ORDER BY k) AS kept
  FROM (SELECT components FROM cleanup.schema_contract) c,
       jsonb_object_keys(c.components || coalesce($1::jsonb, '{}'::jsonb)) AS k
 WHERE c.components -> k IS DISTINCT FROM $1::jsonb -> k
   -- function_settings details 'functions' (095_contract.sql).
   AND k <> 'function_settings'
