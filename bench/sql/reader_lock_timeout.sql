-- The parent-row reader's lock_timeout ('15ms'): a statement that waits
-- longer for a lock is cancelled (55P03) and counted; the time spent
-- waiting for the CPU does not count (bench_cleanup.c, reader_main).
SELECT set_config('lock_timeout', $1, false)
