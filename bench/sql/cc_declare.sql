-- bench_count_cache: the declared-lock protocol by hand: library $1's write
-- lock for this transaction (inventory.count_declare), before plain SQL.
SELECT inventory.count_declare(ARRAY[$1::bigint])
