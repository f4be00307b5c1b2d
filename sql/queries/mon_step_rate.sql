-- Console: the step records of job $1 after step $2 (in step order), for the
-- detail panel's step-rate sparkline (it counted only the
-- 60 listed steps). The monitor reads each record once, keeping per-second
-- counts itself; the first read ($2 = -1) starts at most 20000 steps back.
SELECT s.step_no, extract(epoch FROM s.started_at) AS started_epoch
  FROM cleanup.job_steps s
 WHERE s.job_id = $1::bigint
   AND s.step_no > greatest($2::bigint,
                            (SELECT coalesce(max(x.step_no), 0) FROM cleanup.job_steps x WHERE x.job_id = $1::bigint) - 20000)
 ORDER BY s.step_no
 LIMIT 20000
