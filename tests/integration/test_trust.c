/* T1-T8, "no accepted write is ever lost", against the real PostgreSQL:
 * writes accepted while a prune collects are protected (C9), the inventory
 * and the manifest accept the same external IDs (C10), and the engine's
 * locks are rows no other role can take or forge (L1, S12). Each test
 * failed before its fix. */
#include "test_step_support.h"

PGTEST_DB_SETUP(ci, pgtest_fresh_db("trust"))

/* A prune job of LIB whose manifest holds every item of LIB now (the
 * "complete traversal"), appended but not sealed; returns the job id. */
static int64_t collected_prune(PGconn *c, int64_t lib)
{
	int64_t job = pgtest_job_create(c, "prune", lib);

	pgtest_exec(c,
	            "SELECT cleanup.job_append(%lld, ids) FROM ("
	            " SELECT array_agg(external_id) AS ids FROM ("
	            "  SELECT external_id, (row_number() OVER (ORDER BY id) - 1) / 128 AS b"
	            "    FROM inventory.items WHERE library_id = %lld) x GROUP BY b) y",
	            (long long)job, (long long)lib);
	return job;
}

/* C9, the reproduction: create a prune, append every ID, insert
 * one item with plain SQL (accepted), seal with the old count, run: the
 * new item survives and is counted as protected. Before the fix it was
 * deleted. */
static void test_C9_insert_while_collecting_survives(void **state)
{
	PGconn *c = conn("c9-insert");
	int64_t srv, lib, job, n;

	(void)state;
	lib = new_server_library(c, "c9-insert", 300, &srv);
	job = collected_prune(c, lib);
	n = job_int(c, job, "manifest_count");
	assert_int_equal(n, 300);
	pgtest_exec(c, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'late-insert')",
	            (long long)lib);
	assert_int_equal(ctl(NULL, "job seal %lld --expected %lld", (long long)job, (long long)n), 0);
	assert_int_equal(ctl(NULL, "--quiet job run %lld", (long long)job), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE external_id = 'late-insert'"), 1);
	assert_int_equal(job_int(c, job, "protected"), 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib),
	                 301);
	assert_int_equal(job_int(c, job, "deleted"), 0);
	assert_text_equal(pgtest_text(c, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                    "completed");
	PQfinish(c);
}

/* C9: an update of an unseen row and a move into the library while the job
 * collects protect those rows; an unseen row nobody wrote is pruned; a
 * move out is not protected anywhere. */
static void test_C9_update_and_move_in_while_collecting_survive(void **state)
{
	PGconn *c = conn("c9-update");
	int64_t srv, lib, other, job, n;

	(void)state;
	lib = new_server_library(c, "c9-update", 200, &srv);
	other = pgtest_new_library(c, srv, "c9-other", 10);
	job = pgtest_job_create(c, "prune", lib);
	/* The traversal saw items 1..100 only: 101..200 are unseen. */
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY(SELECT 'c9-update-' || g FROM generate_series(1, 100) g))",
	            (long long)job);
	pgtest_exec(c, "UPDATE inventory.items SET title = 'touched' WHERE external_id = 'c9-update-150'");
	pgtest_exec(c, "UPDATE inventory.items SET library_id = %lld WHERE external_id = 'c9-other-3'", (long long)lib);
	pgtest_exec(c, "UPDATE inventory.items SET library_id = %lld WHERE external_id = 'c9-update-160'",
	            (long long)other);
	n = job_int(c, job, "manifest_count");
	assert_int_equal(n, 100);
	assert_int_equal(ctl(NULL, "job seal %lld --expected 100", (long long)job), 0);
	assert_int_equal(ctl(NULL, "--quiet job run %lld", (long long)job), 0);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM inventory.items WHERE external_id IN "
	                            "('c9-update-150', 'c9-other-3', 'c9-update-160')"),
	                 3);
	assert_int_equal(job_int(c, job, "protected"), 2);
	/* 101..200 less the updated one and the one moved out: 98 deleted. */
	assert_int_equal(job_int(c, job, "deleted"), 98);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib),
	                 102);
	PQfinish(c);
}

/* C9, C3: a protected ID the traversal then reports becomes seen; the
 * expected count is the traversal's, protected IDs are counted apart. */
static void test_C9_protected_then_appended_is_seen(void **state)
{
	PGconn *c = conn("c9-seen");
	int64_t srv, lib, job;

	(void)state;
	lib = new_server_library(c, "c9-seen", 5, &srv);
	job = collected_prune(c, lib);
	pgtest_exec(c, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'x-new'), (%lld, 'y-new')",
	            (long long)lib, (long long)lib);
	assert_int_equal(pgtest_int(c, "SELECT manifest_count FROM cleanup.jobs WHERE id = %lld", (long long)job), 5);
	assert_int_equal(pgtest_int(c, "SELECT added FROM cleanup.job_append(%lld, ARRAY['x-new', 'x-new'])",
	                            (long long)job),
	                 1);
	pgtest_fails(c, "CU402", NULL, "SELECT cleanup.job_seal(%lld, 7)", (long long)job);
	assert_int_equal(ctl(NULL, "job seal %lld --expected 6", (long long)job), 0);
	assert_job_counts(c, job, "protected, manifest_count", "1, 6");
	PQfinish(c);
}

/* C9: a sync write admitted before collecting begins and still in flight
 * would commit unprotected, so job create is busy (exit 3, nothing
 * changed) until it commits; afterwards the job is created. */
static void test_C9_write_in_flight_makes_create_busy(void **state)
{
	PGconn *c = conn("c9-busy"), *w = conn("c9-writer");
	int64_t srv, lib, jobs_before;

	(void)state;
	lib = new_server_library(c, "c9-busy", 3, &srv);
	pgtest_begin(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'in-flight')",
	             (long long)lib);
	jobs_before = pgtest_int(c, "SELECT count(*) FROM cleanup.jobs");
	assert_int_equal(ctl(NULL, "job create prune --library %lld", (long long)lib), 3);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.jobs"), jobs_before);
	pgtest_exec(w, "COMMIT");
	assert_int_equal(ctl(NULL, "job create prune --library %lld", (long long)lib), 0);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.library_admission WHERE library_id = %lld "
	                            "AND collecting_job IS NOT NULL",
	                            (long long)lib),
	                 1);
	pgtest_close_all(w, c, NULL);
}

/* C8, C9: a cancelled job protects nothing more; neither does a sealed one
 * (its library is fenced: writes are refused, not protected). */
static void test_C9_cancel_and_seal_end_protection(void **state)
{
	PGconn *c = conn("c9-cancel");
	int64_t srv, lib, job;

	(void)state;
	lib = new_server_library(c, "c9-cancel", 3, &srv);
	job = collected_prune(c, lib);
	assert_int_equal(ctl(NULL, "job cancel %lld", (long long)job), 0);
	pgtest_exec(c, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'after-cancel')",
	            (long long)lib);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.manifest WHERE job_id = %lld AND protected",
	                            (long long)job),
	                 0);
	job = collected_prune(c, lib);
	assert_int_equal(ctl(NULL, "job seal %lld --expected 4", (long long)job), 0);
	pgtest_fails(c, "CUA01", NULL,
	             "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'fenced')",
	             (long long)lib);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.manifest WHERE job_id = %lld AND protected",
	                            (long long)job),
	                 0);
	PQfinish(c);
}

/* C10: the inventory refuses exactly what the manifest refuses (tabs, BEL,
 * 200 two-byte characters = 400 bytes), with the same rule, and accepts a
 * 256-byte ID both sides accept. */
static void test_C10_inventory_and_manifest_accept_the_same_ids(void **state)
{
	static const char *bad[] = {"E'tab\\there'", "E'bell\\x07'", "repeat('é', 200)", "E'c1\\u0085'", "''"};
	PGconn *c = conn("c10");
	int64_t srv, lib, job;
	char msg[512];
	size_t i;

	(void)state;
	lib = new_server_library(c, "c10", 1, &srv);
	job = pgtest_job_create(c, "prune", lib);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_string_equal(pgtest_fail(c, msg, sizeof msg,
		                                "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, %s)",
		                                (long long)lib, bad[i]),
		                    "23514");
		assert_non_null(strstr(msg, "items_external_id_rule"));
		pgtest_fails(c, "CU101", NULL, "SELECT cleanup.job_append(%lld, ARRAY[%s])", (long long)job, bad[i]);
	}
	pgtest_exec(c, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, repeat('é', 128))",
	            (long long)lib);
	assert_int_equal(pgtest_int(c, "SELECT added FROM cleanup.job_append(%lld, ARRAY[repeat('é', 128)])",
	                            (long long)job),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib),
	                 2);
	PQfinish(c);
}

/* L1: advisory locks on the old coordinator and
 * library keys, which any login role can take, no longer block cleanup. */
static void test_L1_public_advisory_keys_do_not_block_cleanup(void **state)
{
	PGconn *c = conn("l1-adv"), *o = conn("l1-squatter");
	int64_t srv, lib, job;

	(void)state;
	job = new_sealed_prune(c, "l1-adv", 400, 2, &lib, &srv);
	pgtest_exec(o, "SELECT pg_advisory_lock(cleanup.coordinator_key(%lld)), pg_advisory_lock(cleanup.library_key(%lld))",
	            (long long)srv, (long long)lib);
	assert_int_equal(ctl(NULL, "--quiet job run %lld --max-busy 2", (long long)job), 0);
	assert_text_equal(pgtest_text(c, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                    "completed");
	assert_int_equal(job_int(c, job, "deleted"), 200);
	pgtest_close_all(o, c, NULL);
}

/* S12: a session that takes the advisory locks itself
 * no longer passes the parent guard of a finalizing removal; only the
 * engine's row locks, taken in the same transaction, do. */
static void test_S12_self_taken_locks_do_not_pass_parent_guard(void **state)
{
	PGconn *c = conn("s12-forge"), *o = conn("s12-forger");
	int64_t srv, lib, job;

	(void)state;
	job = new_removal(c, "s12-forge", 0, &lib, &srv);
	assert_int_equal(ctl(NULL, "--quiet job step %lld", (long long)job), 0);
	assert_text_equal(pgtest_text(c, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                    "finalizing");
	pgtest_begin(o, "SELECT pg_advisory_xact_lock(cleanup.coordinator_key(%lld)), "
	                "pg_advisory_xact_lock(cleanup.library_key(%lld))",
	             (long long)srv, (long long)lib);
	pgtest_fails(o, "CUA05", NULL, "DELETE FROM inventory.libraries WHERE id = %lld", (long long)lib);
	pgtest_exec(o, "ROLLBACK");
	/* A lock row taken by another transaction is not this one's either. */
	pgtest_begin(c, "SELECT cleanup.lock_coordinator(%lld), cleanup.lock_libraries(ARRAY[%lld]::bigint[])",
	             (long long)srv, (long long)lib);
	assert_int_equal(pgtest_int(o, "SELECT cleanup.holds_lock(cleanup.coordinator_key(%lld))::int", (long long)srv), 0);
	assert_int_equal(pgtest_int(c, "SELECT cleanup.holds_lock(cleanup.coordinator_key(%lld))::int", (long long)srv), 1);
	pgtest_exec(c, "ROLLBACK");
	assert_int_equal(ctl(NULL, "--quiet job step %lld", (long long)job), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.engine_locks WHERE key = cleanup.library_key(%lld)",
	                            (long long)lib),
	                 0);
	pgtest_close_all(o, c, NULL);
}

/* B1: a direct SQL call of a step, from a session that
 * sets no timeout at all, does not wait without bound: a relation lock
 * queued behind DDL ends with 55P03 after the step's own lock_timeout, and
 * nothing changed. */
static void test_B1_direct_step_call_is_bounded(void **state)
{
	PGconn *c = conn("b1"), *o = conn("b1-ddl");
	int64_t srv, lib, job;

	(void)state;
	job = new_sealed_prune(c, "b1", 50, 2, &lib, &srv);
	pgtest_begin(o, "LOCK TABLE cleanup.manifest IN ACCESS EXCLUSIVE MODE");
	pgtest_exec(c, "SET statement_timeout = 0");
	pgtest_exec(c, "SET lock_timeout = 0");
	pgtest_fails(c, "55P03", NULL, "SELECT cleanup.job_step(%lld, 1)", (long long)job);
	pgtest_exec(o, "ROLLBACK");
	assert_int_equal(job_int(c, job, "step_no"), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib), 50);
	pgtest_close_all(o, c, NULL);
}

PGTEST_MAIN(cmocka_unit_test(test_C9_insert_while_collecting_survives),
            cmocka_unit_test(test_C9_update_and_move_in_while_collecting_survive),
            cmocka_unit_test(test_C9_protected_then_appended_is_seen),
            cmocka_unit_test(test_C9_write_in_flight_makes_create_busy),
            cmocka_unit_test(test_C9_cancel_and_seal_end_protection),
            cmocka_unit_test(test_C10_inventory_and_manifest_accept_the_same_ids),
            cmocka_unit_test(test_L1_public_advisory_keys_do_not_block_cleanup),
            cmocka_unit_test(test_S12_self_taken_locks_do_not_pass_parent_guard),
            cmocka_unit_test(test_B1_direct_step_call_is_bounded))
