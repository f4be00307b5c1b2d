-- Console: the event and audit log, newest first, at most $1 rows. Writers'
-- rejections are counted by mon_contention instead of flooding the log; the
-- scan is bounded to the 2000 newest events whatever their kinds.
SELECT x.origin, x.id, x.at_epoch, x.at_text, x.job_id, x.kind, x.source, x.message
  FROM ((SELECT 'event' AS origin, e.id, extract(epoch FROM e.at) AS at_epoch,
                to_char(e.at, 'HH24:MI:SS') AS at_text, e.job_id, e.kind, e.source, e.message
           FROM (SELECT * FROM cleanup.events ORDER BY id DESC LIMIT 2000) e
          WHERE e.kind <> 'rejected'
          ORDER BY e.id DESC LIMIT $1::int)
        UNION ALL
        (SELECT 'audit', a.id, extract(epoch FROM a.at), to_char(a.at, 'HH24:MI:SS'), a.job_id,
                a.action, a.application_name,
                format('%s by %s%s: %s', a.action, a.os_user,
                       CASE WHEN a.confirmation IS NOT NULL AND a.confirmation <> ''
                            THEN format(' (typed %L)', a.confirmation) ELSE '' END,
                       a.outcome)
           FROM cleanup.audit a ORDER BY a.id DESC LIMIT $1::int)) x
 ORDER BY x.at_epoch DESC, x.id DESC
 LIMIT $1::int
