-- One append call of a pipelined run (cleanup_job_append_many): the counts
-- only. The job's JSON document (job_append.sql) is built for single calls;
-- a run of calls reports totals.
SELECT r.added, r.duplicates, (r.job).manifest_count AS manifest_count
  FROM cleanup.job_append($1::bigint, $2::text[]) AS r
