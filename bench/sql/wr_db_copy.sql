-- bench_writers: the copy whose inventory.items runs without the engine.
CREATE DATABASE {{db}} TEMPLATE {{template}} STRATEGY FILE_COPY
