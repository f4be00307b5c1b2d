-- bench_append: the comparison's keyed table, shaped like the manifest's key.
CREATE TABLE bench_copy (job_id bigint NOT NULL, external_id text NOT NULL, PRIMARY KEY (job_id, external_id))
