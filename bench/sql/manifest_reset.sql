-- bench_append: every round starts from an empty manifest (the bench's own
-- database; earlier rounds' jobs are cancelled first).
TRUNCATE cleanup.manifest
