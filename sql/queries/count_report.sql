-- Every library with its count-cache state (cleanup.count_report) at $1
-- (NULL: the clock). count is given only when the state is fresh.
SELECT r.library_id, r.server_id, r.name, r.slot, r.state, coalesce(r.reason, '') AS reason, r.count,
       r.published_count, r.revision, r.applied_revision, r.epoch, r.pages, r.dirty_pages,
       extract(epoch FROM coalesce($1::timestamptz, clock_timestamp()) - r.last_visit_at)::float8 AS visit_age_s,
       coalesce(r.last_restart, '') AS last_restart
  FROM cleanup.count_report($1::timestamptz) AS r
