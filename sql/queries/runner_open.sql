-- Opens the runner lease of job $1 (cleanup.runner_open, 062_runner.sql):
-- token $2, host $3, OS pid $4, application $5, direct connection $6,
-- ttl $7 seconds, take over the lease with token $8 (NULL: only one that
-- expired or whose backend is gone), resume $9 (after a reconnect: only
-- the lease still held with $2).
SELECT o.claimed, o.taken_over, o.holder_host, o.holder_os_pid, o.holder_app, o.holder_backend_pid,
       o.holder_client, o.holder_direct, o.holder_started, o.holder_last_step, o.holder_renewed,
       o.holder_expires_s, o.holder_token
  FROM cleanup.runner_open($1::bigint, $2::bigint, $3::text, $4::int, $5::text, $6::boolean, $7::int, $8::bigint,
                           $9::boolean) AS o
