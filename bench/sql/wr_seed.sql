-- bench_writers: one server with $1 libraries of $2 items each
-- (cleanup_lab.seed_demo); the writers use the first two.
SELECT cleanup_lab.seed_demo(1, $1::int, $2::bigint)::text
