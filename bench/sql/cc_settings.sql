-- bench_count_cache: the writers' session: asynchronous commit (the CPU
-- cost of the protocol, not the disk's fsync), a bounded lock wait.
SELECT set_config('synchronous_commit', 'off', false), set_config('lock_timeout', '10s', false)
