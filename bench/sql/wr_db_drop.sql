-- bench_writers: drops one of its databases.
DROP DATABASE IF EXISTS {{db}} WITH (FORCE)
