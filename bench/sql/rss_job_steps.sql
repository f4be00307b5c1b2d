-- bench_rss: the committed steps of job $1 (the job run measured ran).
SELECT step_no FROM cleanup.jobs WHERE id = $1::bigint
