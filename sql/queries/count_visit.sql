-- One scheduled visit of the count cache (cleanup.count_visit, one
-- transaction, at most one page) of library $1; $2: the injected time
-- (NULL: the clock). One row: the library's state after the visit.
SELECT v ->> 'state' AS state, coalesce(v ->> 'reason', '') AS reason, v ->> 'action' AS action,
       (v ->> 'ids_read')::bigint AS ids_read, (v ->> 'count')::bigint AS count,
       (v ->> 'published_count')::bigint AS published_count, (v ->> 'revision')::bigint AS revision,
       (v ->> 'epoch')::bigint AS epoch, (v ->> 'pages')::bigint AS pages,
       (v ->> 'dirty_pages')::bigint AS dirty_pages, (v ->> 'slot')::int AS slot
  FROM cleanup.count_visit($1::bigint, $2::timestamptz) AS v
