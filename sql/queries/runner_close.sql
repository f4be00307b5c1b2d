-- Ends the runner lease of job $1 held with token $2; $3 announces it
-- ("runner ended", reason $4). closed is false when it was lost meanwhile.
SELECT cleanup.runner_close($1::bigint, $2::bigint, $3::boolean, $4::text) AS closed
