-- bench_writers: a fresh database for the engine side.
CREATE DATABASE {{db}}
