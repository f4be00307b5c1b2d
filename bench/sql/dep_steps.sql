-- bench_dependents: the recorded steps of job $1 (cleanup.job_steps): how
-- many, step duration inside the server p50/p99/max (ms), the largest
-- step's mutations, mutations by kind, claims, the parent lock hold of the
-- delete-library step (-1: none), and the steps by action.
SELECT count(*) AS steps,
       coalesce(percentile_disc(0.5) WITHIN GROUP (ORDER BY duration_ms), 0) AS dur_p50,
       coalesce(percentile_disc(0.99) WITHIN GROUP (ORDER BY duration_ms), 0) AS dur_p99,
       coalesce(max(duration_ms), 0) AS dur_max,
       coalesce(max(mutations), 0) AS max_mutations,
       coalesce(sum(mutations), 0) AS mutations,
       coalesce(sum(deleted), 0) AS items,
       coalesce(sum(retries_deleted), 0) AS retries,
       coalesce(sum(previews_deleted), 0) AS previews,
       coalesce(sum(collections_deleted), 0) AS collections,
       coalesce(sum(sync_status_deleted), 0) AS sync_status,
       coalesce(sum(history_detached), 0) AS history,
       coalesce(sum(libraries_deleted), 0) AS libraries,
       coalesce(sum(claimed), 0) AS claimed,
       coalesce(max(claims_in_flight), 0) AS max_claims_in_flight,
       coalesce(max(parent_lock_ms), -1) AS parent_lock_ms,
       (SELECT coalesce(string_agg(x.action || ' ' || x.n, ', ' ORDER BY x.action), '')
          FROM (SELECT action, count(*) AS n FROM cleanup.job_steps WHERE job_id = $1 GROUP BY action) x) AS by_action,
       (SELECT coalesce(max(duration_ms), 0) FROM cleanup.job_steps
         WHERE job_id = $1 AND mutations = (SELECT max(mutations) FROM cleanup.job_steps WHERE job_id = $1)) AS dur_of_largest
  FROM cleanup.job_steps s
 WHERE s.job_id = $1
