-- bench_shapes --floor: one step of the floor prototype's job $1; true
-- while the job goes on (bench/sql/floor_step.sql).
SELECT floor.step($1::bigint)
