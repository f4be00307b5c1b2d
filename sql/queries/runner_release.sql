-- Releases the runner lock of job $1 taken by runner_claim.sql on this
-- session (every hold of it: a session lock taken twice is held twice).
-- released is false when this session did not hold it.
SELECT pg_catalog.pg_advisory_unlock(1668050546, ($1::bigint % 2147483648)::int) AS released
