-- Console: the event and audit log, at most $1 audit rows, $1 lifecycle
-- events and the busy retries among the $3 newest events, newest first.
-- Writers' rejections are counted by mon_contention instead of flooding the
-- log, and they are left out BEFORE the limit (taking the
-- 2000 newest events first and dropping rejections afterwards lost
-- "created" and "completed" under a rejection storm).
--
-- Engine events are read incrementally: only those with an id above $2
-- (the newest id the monitor has seen, less a margin; 0 the first time),
-- walking the primary key down from the newest, so a refresh during a
-- storm of rejections reads the rows written since the last one, not the
-- whole storm. The monitor keeps the events it has read; the 'mark' row
-- carries the newest event id for the next $2.
SELECT x.origin, x.id, x.at_epoch, x.at_text, x.job_id, x.kind, x.source, x.message
  FROM ((SELECT 'event' AS origin, e.id, extract(epoch FROM e.at) AS at_epoch,
                to_char(e.at, 'HH24:MI:SS') AS at_text, e.job_id, e.kind, e.source, e.message
           FROM cleanup.events e
          WHERE e.id > $2::bigint AND e.kind NOT IN ('rejected', 'busy')
          ORDER BY e.id DESC LIMIT $1::int)
        UNION ALL
        -- Busy retries apart: a runner retrying a held
        -- lock logs one a few seconds, and they must never push the
        -- lifecycle events (created, sealed, completed, ...) out of the
        -- limit above, nor be pushed out by them; the console collapses
        -- them into one line per run, so it reads more of them: those
        -- among the $3 newest events. A walk of the key with a LIMIT, as
        -- above: filtering on kind = 'busy' inside it would read the whole
        -- table when there are few busy retries (no index on kind).
        SELECT 'event', b.id, extract(epoch FROM b.at), to_char(b.at, 'HH24:MI:SS'), b.job_id, b.kind, b.source,
               b.message
          FROM (SELECT e.id, e.at, e.job_id, e.kind, e.source, e.message
                  FROM cleanup.events e
                 WHERE e.id > $2::bigint AND e.kind <> 'rejected'
                 ORDER BY e.id DESC LIMIT $3::int) b
         WHERE b.kind = 'busy'
        UNION ALL
        (SELECT 'audit', a.id, extract(epoch FROM a.at), to_char(a.at, 'HH24:MI:SS'), a.job_id,
                a.action, a.application_name,
                format('%s by %s%s: %s', a.action, a.os_user,
                       CASE WHEN a.confirmation IS NOT NULL AND a.confirmation <> ''
                            THEN format(' (typed %L)', a.confirmation) ELSE '' END,
                       a.outcome)
           FROM cleanup.audit a ORDER BY a.id DESC LIMIT $1::int)
        UNION ALL
        SELECT 'mark', coalesce(max(m.id), 0), 0, '', NULL, '', '', '' FROM cleanup.events m) x
 ORDER BY x.at_epoch DESC, x.id DESC
