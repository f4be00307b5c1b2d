-- bench_dependents: the traversal's appends of prune job $1, 128 IDs a call
-- (not what is measured): item ext-<library>-<n> of library $2 is seen when
-- n is even.
SELECT count(cleanup.job_append($1::bigint, ids)) FROM (
  SELECT array_agg(x ORDER BY x) AS ids FROM (
    SELECT x, row_number() OVER (ORDER BY x) AS rn FROM (
      SELECT i.external_id AS x FROM inventory.items i
       WHERE i.library_id = $2 AND split_part(i.external_id, '-', 3)::bigint % 2 = 0) s) t
   GROUP BY (rn - 1) / 128) q
