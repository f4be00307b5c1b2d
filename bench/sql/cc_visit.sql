-- bench_count_cache: one count-cache visit of library $1: its state after,
-- what it did, the ids it read, the count when fresh (-1 otherwise).
SELECT v ->> 'state', v ->> 'action', coalesce((v ->> 'ids_read')::bigint, 0), coalesce((v ->> 'count')::bigint, -1)
  FROM cleanup.count_visit($1::bigint) AS v
