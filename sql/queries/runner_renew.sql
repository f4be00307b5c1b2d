-- The heartbeat of a waiting runner: renews the lease of job $1 held with
-- token $2 (CU470 when it was lost).
SELECT cleanup.runner_renew($1::bigint, $2::bigint, NULL) IS NULL AS renewed
