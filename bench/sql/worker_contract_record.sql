-- bench_workers, A/B only: records the schema contract again after
-- worker_notify_off.sql, as the installer does, so that the steps do not
-- refuse the disabled trigger as drift (the copy is the benchmark's own).
SELECT cleanup.contract_record()
