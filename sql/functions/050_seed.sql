-- 050_seed: the demo seeder is the lab's, not the engine's: it lives in
-- lab/sql/functions/010_seed_demo.sql as cleanup_lab.seed_demo, installed
-- only by the lab's own step (cleanup_lab_install: cleanupctl demo,
-- cleanupctl seed, the tests' fixtures). A database installed before it
-- moved carries cleanup.seed_demo in the engine's schema; the upgrade
-- drops it here (nothing of the engine calls it, and the contract is
-- recorded again after the definitions), so that no database keeps a demo
-- seeder among the engine's functions.
DROP FUNCTION IF EXISTS cleanup.seed_demo(int, int, bigint);
DROP FUNCTION IF EXISTS cleanup.seed_demo(int, int, bigint, int);
