-- bench_dependents: one server, $1 libraries of $2 items each, about $3
-- dependents per item (cleanup_lab.seed_demo: with its spread, plus collections,
-- sync status and history per library); deterministic for the same sizes.
SELECT cleanup_lab.seed_demo(1, $1::int, $2::bigint, $3::int)
