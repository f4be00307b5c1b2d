-- Job $1 with its JSON document, who runs it now and how it goes, and who
-- holds it up (cleanup.job_text_columns, as columns for the text output).
SELECT j.*, c.*
  FROM cleanup.jobs AS j
 CROSS JOIN LATERAL cleanup.job_text_columns(j) c
 WHERE j.id = $1::bigint
