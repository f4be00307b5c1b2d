-- Records an operator action (console or CLI): $1 os_user, $2 action,
-- $3 job id (NULL when none), $4 confirmation text, $5 outcome.
SELECT cleanup.audit_record($1, $2, $3::bigint, $4, $5) AS id
