SELECT count(*) FROM cleanup.manifest WHERE job_id = $1 AND NOT protected
