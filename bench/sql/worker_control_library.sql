-- bench_workers, control: the session setting that names the library the
-- next worker_control_drain.sql empties ($1), with asynchronous commit as
-- the runners' steps have it.
SELECT set_config('bench.control_library', $1, false), set_config('synchronous_commit', 'off', false)
