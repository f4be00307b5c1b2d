SELECT count(*) FROM bench_copy
