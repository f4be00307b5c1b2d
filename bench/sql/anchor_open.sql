-- The one DELETE's library as a sync finds it today: open. The copy holds
-- the sealed prune job $1 whose manifest the DELETE reads. Cancelled here,
-- before its first deletion (C8), the job keeps its manifest and the
-- library admits writes again, so the DELETE pays what a writer's DELETE
-- pays with the engine installed (admission, the count), not the
-- departures that a fenced library records for its job (T7): inserting
-- every deleted row into cleanup.job_departures was 29% of the DELETE
-- (bench/step_profile.sh, 5 December 2026), which flattered every ratio
-- against it.
SELECT (cleanup.job_transition($1::bigint, 'cancel')).phase
