COPY bench_copy (job_id, external_id) FROM STDIN
