SELECT g->>'kind' AS kind, g->>'summary' AS summary
  FROM jsonb_array_elements(($1::jsonb)->'gaps') WITH ORDINALITY AS a(g, n)
 ORDER BY a.n
