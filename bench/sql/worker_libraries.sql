-- bench_workers: the libraries of the template, one per server and job.
SELECT id FROM inventory.libraries ORDER BY id
