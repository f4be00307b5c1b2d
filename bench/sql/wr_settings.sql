-- bench_writers: the writer's session. synchronous_commit off by default
-- (the guards' CPU cost, not the disk's flush; --sync-commit keeps it on),
-- a bounded lock wait.
SELECT set_config('synchronous_commit', $1::text, false), set_config('lock_timeout', '10s', false)
