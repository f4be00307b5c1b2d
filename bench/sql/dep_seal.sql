-- bench_dependents: seals job $1 with the manifest's own count (the
-- traversal was complete); returns the high-water id.
SELECT (cleanup.job_seal($1::bigint, (SELECT count(*) FROM cleanup.manifest WHERE job_id = $1 AND NOT protected))).high_water_id
