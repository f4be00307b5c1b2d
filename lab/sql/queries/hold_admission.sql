-- busy-fence (cleanupctl demo busy-fence): a writer's transaction holds
-- library $1's admission row FOR SHARE and stays open (lab/src/hold.c).
SELECT 1 AS held FROM cleanup.library_admission WHERE library_id = $1::bigint FOR SHARE
