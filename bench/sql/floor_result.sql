-- bench_shapes --floor: the rows the floor prototype's job $1 deleted, -1
-- unless it completed.
SELECT CASE WHEN phase = 'completed' THEN deleted ELSE -1 END FROM floor.jobs WHERE id = $1::bigint
