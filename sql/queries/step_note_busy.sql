-- Records a busy answer of job $1 (message $2) without waiting on its row.
SELECT cleanup.job_note_busy($1::bigint, $2) AS recorded
