-- bench_shapes --floor: the floor prototype's job for cleanup job $1
-- (sealed, then cancelled: its library open), after bench/sql/floor_step.sql
-- made the schema floor; and the schema contract recorded again after that
-- DDL, as the installer would, so that the prototype's steps compare it
-- as the engine's do.
SELECT floor.start($1::bigint), cleanup.contract_record()
