-- What the writer's role may do in the engine's schema (docs/roles.md): a
-- sync writer under the privilege model (cleanup_writer) has no USAGE on
-- schema cleanup, so it neither checks the schema version nor logs its
-- rejections to cleanup.events; the admission triggers guard it all the
-- same. present: schema cleanup exists; usage: this role may use it;
-- can_log: writer_log_rejection.sql would be allowed; gateway: this role
-- may write through the mutation gateway inventory.write_items (seed 002;
-- the definer wrapper of 077_gateway.sql, granted to cleanup_writer), which
-- the writer then uses for every write (writer_gateway_*.sql);
-- dependents: see below.
SELECT n.oid IS NOT NULL AS present,
       coalesce(has_schema_privilege(n.oid, 'USAGE'), false) AS usage,
       coalesce(has_schema_privilege(n.oid, 'USAGE')
                AND (SELECT bool_and(has_function_privilege(p.oid, 'EXECUTE'))
                       FROM pg_proc p WHERE p.pronamespace = n.oid AND p.proname = 'log_event')
                AND (SELECT has_table_privilege(c.oid, 'SELECT')
                       FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'library_admission'),
                false) AS can_log,
       coalesce(has_schema_privilege('inventory', 'USAGE')
                AND has_function_privilege(to_regprocedure('inventory.write_items(jsonb)'), 'EXECUTE'),
                false) AS gateway,
       -- dependents: the dependent tables of seed 001 exist and this role
       -- may write them (writer_dependents_*.sql).
       coalesce((SELECT bool_and(coalesce(has_table_privilege(to_regclass(t)::oid, 'INSERT')
                                          AND has_table_privilege(to_regclass(t)::oid, 'UPDATE'), false))
                   FROM unnest(ARRAY['inventory.item_retries', 'inventory.identity_review_previews',
                                     'inventory.library_collections', 'inventory.library_sync_status',
                                     'inventory.classification_history']) AS t),
                false) AS dependents
  FROM (SELECT 1) AS one
  LEFT JOIN pg_namespace n ON n.nspname = 'cleanup'
