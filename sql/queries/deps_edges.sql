SELECT e->>'depth' AS depth, e->>'constraint_name' AS constraint_name, e->>'referencing' AS referencing,
       (SELECT string_agg(x, ', ') FROM jsonb_array_elements_text(e->'referencing_columns') x) AS referencing_columns,
       e->>'referenced' AS referenced,
       (SELECT string_agg(x, ', ') FROM jsonb_array_elements_text(e->'referenced_columns') x) AS referenced_columns,
       e->>'on_delete' AS on_delete, e->>'is_deferrable' AS is_deferrable, e->>'validated' AS validated,
       e->>'enforced' AS enforced, e->>'has_index' AS has_index, e->>'index_status' AS index_status,
       e->>'index_name' AS index_name,
       (SELECT string_agg(x, ', ') FROM jsonb_array_elements_text(e->'triggers') x) AS triggers,
       (SELECT string_agg(x, ', ') FROM jsonb_array_elements_text(e->'ri_triggers') x) AS ri_triggers,
       e->>'row_security' AS row_security, e->>'force_row_security' AS force_row_security,
       e->>'cycle' AS cycle, e->>'disposition' AS disposition
  FROM jsonb_array_elements(($1::jsonb)->'edges') WITH ORDINALITY AS a(e, n)
 ORDER BY a.n
