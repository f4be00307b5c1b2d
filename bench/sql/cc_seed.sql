-- bench_count_cache: $1 servers of $2 libraries of $3 items each
-- (cleanup_lab.seed_demo, one INSERT a table); the new libraries' ids follow.
SELECT cleanup_lab.seed_demo($1::int, $2::int, $3::bigint)::text
