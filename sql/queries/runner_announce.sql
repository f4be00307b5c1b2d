-- A run's first committed step: records "runner started" for the lease of
-- job $1 held with token $2 (cleanup.runner_announce, 062_runner.sql).
SELECT cleanup.runner_announce($1::bigint, $2::bigint) AS announced
