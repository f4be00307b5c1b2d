/* The schema contract in every step (seed 001, "Bounded dependent work"):
 * a step compares the recorded contract under its locks and before any
 * domain mutation, and refuses on drift (CU403, exit 4) with nothing
 * changed; `cleanupctl install` repairs the drift (applies the definitions
 * again and records the contract again) and the job runs on, exactly.
 * Drift here: a disabled admission trigger (also when disabled under
 * session_replication_role = replica: install names it and records
 * nothing, T6), a new ON DELETE CASCADE foreign key
 * to inventory.items (refused by install as well, and by every step even
 * when a contract with it was written: D1). Without a working DDL watch (disabled, or none at
 * all) every step compares the contract in full: steps run, and drift that
 * no event trigger marked stops them all the same. */
#include "test_step_support.h"

PGTEST_DB_SETUP(ci, pgtest_fresh_db("step_contract"))

/* `job run --json` of JOB is refused with exit 4 and SQLSTATE, and
 * changes nothing: the data and the job's step number (STEP) stay. */
static void expect_run_refused(PGconn *c, int64_t job, const char *sqlstate, int64_t step)
{
	char *out = NULL, want[64];

	ctl_changes_nothing(c, &out, 4, "--json job run %lld", (long long)job);
	snprintf(want, sizeof want, "\"sqlstate\": \"%s\"", sqlstate);
	assert_non_null(strstr(out, want));
	free(out);
	assert_int_equal(job_int(c, job, "step_no"), step);
}

/* `job step` and `job run` of JOB are refused with exit 4, naming the
 * drifted COMPONENT, and change nothing. */
static void expect_refused(PGconn *c, int64_t job, const char *component)
{
	int64_t step = job_int(c, job, "step_no");
	char *out = NULL;

	expect_step_drift(c, job, component, &out);
	assert_non_null(strstr(out, "cleanupctl install"));
	free(out);
	expect_run_refused(c, job, "CU403", step);
}

/* A prune job of a new library NAME (2000 items, every second one seen),
 * sealed, with its first step run. */
static int64_t started_prune(PGconn *c, const char *name)
{
	int64_t lib = pgtest_new_library(c, pgtest_new_server(c, name), name, 2000);
	int64_t job = sealed_prune(c, lib, name, 2000, 2);

	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	return job;
}

/* The job completed exactly: 1000 unseen items deleted, 1000 seen kept. */
static void expect_exact(PGconn *c, int64_t job)
{
	run_to_completion(c, job);
	assert_job_counts(c, job, "deleted, kept", "1000, 1000");
	assert_steps_consistent(c, job);
}

/* A disabled admission guard stops every step. Install names it and
 * records nothing (T6: it neither records it nor re-creates it behind the
 * back of whoever disabled it); enabled again, the steps run. Disabled
 * under session_replication_role = replica, it is caught as well: the DDL
 * watch fires ALWAYS. */
static void test_contract_disabled_guard_refuses_until_install(void **state)
{
	PGconn *c = conn("guard"), *dba = conn("dba");
	int64_t job = started_prune(c, "guard");

	(void)state;
	pgtest_exec(dba, "ALTER TABLE inventory.items DISABLE TRIGGER items_admit_insert");
	expect_refused(c, job, "triggers");

	expect_ctl(4, "guard trigger items_admit_insert on inventory.items is disabled", "install 2>&1");
	assert_text_equal(pgtest_text(c, "SELECT tgenabled FROM pg_trigger WHERE tgname = 'items_admit_insert'"), "D");
	expect_refused(c, job, "triggers");
	pgtest_exec(dba, "ALTER TABLE inventory.items ENABLE TRIGGER items_admit_insert");
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);

	/* The same DDL from a session that fires only replica triggers. */
	pgtest_exec(dba, "SET session_replication_role = replica");
	pgtest_exec(dba, "ALTER TABLE inventory.items DISABLE TRIGGER items_admit_insert");
	pgtest_exec(dba, "RESET session_replication_role");
	expect_refused(c, job, "triggers");
	expect_ctl(4, "\"sqlstate\": \"CU460\"", "--json install");
	pgtest_exec(dba, "ALTER TABLE inventory.items ENABLE TRIGGER items_admit_insert");
	expect_ctl(0, "\"contract_repaired\": false", "--json install");
	expect_exact(c, job);
	pgtest_close_all(c, dba, NULL);
}

/* D1: an unknown incoming cascade would do uncounted
 * work. Refused before any mutation: first as drift (CU403); install then
 * refuses to record it (exit 4, naming the constraint: drift never approves
 * itself); and a contract recorded with it anyway (bypassing the
 * installer) still leaves every step refusing (CU404), because each step
 * checks the references' dispositions itself. Dropped again, install
 * repairs and the job runs on, exactly. */
static void test_D1_new_cascade_refuses_with_and_without_install(void **state)
{
	PGconn *c = conn("cascade"), *dba = conn("dba");
	int64_t job = started_prune(c, "cascade"), step;
	char *out = NULL;

	(void)state;
	pgtest_exec(dba, "CREATE TABLE public.retries (id int, item_id bigint REFERENCES inventory.items ON DELETE CASCADE)");
	pgtest_exec(dba, "INSERT INTO public.retries SELECT g, i.id FROM inventory.items i, generate_series(1, 3) g");
	expect_refused(c, job, "incoming_foreign_keys");

	expect_ctl(
	    4,
	    "public.retries(item_id) -> inventory.items ON DELETE cascade (constraint retries_item_id_fkey)",
	    "install 2>&1");
	expect_refused(c, job, "incoming_foreign_keys");

	/* contract_record itself refuses it (T6, CU460). And the contract
	 * alone is not enough: written behind the installer's back, the step
	 * still refuses, CU404, nothing changed. */
	pgtest_fails(dba, "CU460", NULL, "SELECT cleanup.contract_record()");
	pgtest_exec(
	    dba, "UPDATE cleanup.schema_contract SET components = cleanup.contract_components(), "
	         "fingerprint = cleanup.contract_fingerprint(cleanup.contract_components()), dirty = false");
	step = job_int(c, job, "step_no");
	ctl_changes_nothing(c, &out, 4, "job step %lld 2>&1", (long long)job);
	assert_non_null(strstr(out, "public.retries(item_id) -> inventory.items ON DELETE cascade"));
	free(out);
	expect_run_refused(c, job, "CU404", step);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM public.retries"),
	                 3 * pgtest_int(c, "SELECT count(*) FROM inventory.items"));

	/* Dropped: drift again, repaired by install; the job runs on. */
	pgtest_exec(dba, "DROP TABLE public.retries");
	expect_ctl(0, "\"contract_repaired\": true", "--json install");
	assert_int_equal(ctl(&out, "--json install"), 0);
	assert_non_null(strstr(out, "\"changed\": false"));
	assert_non_null(strstr(out, "\"contract_repaired\": false"));
	free(out);
	expect_exact(c, job);
	pgtest_close_all(c, dba, NULL);
}

/* Without a working DDL watch the dirty mark proves nothing: a disabled
 * event trigger (event triggers do not fire for DDL on event triggers, so
 * each step looks the watch up itself) or none at all (as after an install
 * by a non-superuser) makes every step compare the contract in full. Steps
 * run; drift that nothing marked stops them all the same; install (as a
 * superuser) creates the watch again. */
static void test_contract_without_ddl_watch_compares_in_full(void **state)
{
	PGconn *c = conn("watch"), *dba = conn("dba");
	int64_t job = started_prune(c, "watch");

	(void)state;
	pgtest_exec(dba, "ALTER EVENT TRIGGER cleanup_contract_watch DISABLE");
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	/* Not marked dirty (the watch is off); the full comparison finds it. */
	pgtest_exec(dba, "ALTER TABLE inventory.items DISABLE TRIGGER items_admit_insert");
	assert_int_equal(pgtest_int(c, "SELECT dirty::int FROM cleanup.schema_contract"), 0);
	expect_refused(c, job, "triggers");
	/* A disabled guard is named, not re-created (T6); enabled again, the
	 * install repairs the watch. */
	assert_int_equal(ctl(NULL, "install"), 4);
	pgtest_exec(dba, "ALTER TABLE inventory.items ENABLE TRIGGER items_admit_insert");
	expect_ctl(0, "(watch) repaired", "install");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'cleanup_contract_watch%%' "
	                               "AND evtenabled = 'A'"),
	                 2);
	/* The fast path's inline look-up agrees with the recorded watch. */
	assert_int_equal(pgtest_int(c, "SELECT (watch_state = cleanup.contract_watch_state())::int FROM cleanup.schema_contract"),
	                 1);
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);

	/* Disabled and enabled again: DDL in between went unmarked, so the
	 * watch counts as changed and the steps compare in full. */
	pgtest_exec(dba, "ALTER EVENT TRIGGER cleanup_contract_watch DISABLE");
	pgtest_exec(dba, "ALTER TABLE inventory.items DISABLE TRIGGER items_admit_update");
	pgtest_exec(dba, "ALTER EVENT TRIGGER cleanup_contract_watch ENABLE ALWAYS");
	assert_int_equal(pgtest_int(c, "SELECT dirty::int FROM cleanup.schema_contract"), 0);
	expect_refused(c, job, "triggers");
	pgtest_exec(dba, "ALTER TABLE inventory.items ENABLE TRIGGER items_admit_update");
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_int_equal(ctl(NULL, "install"), 0);

	/* No watch at all, recorded as such. */
	pgtest_exec(dba, "DROP EVENT TRIGGER cleanup_contract_watch");
	pgtest_exec(dba, "DROP EVENT TRIGGER cleanup_contract_watch_drop");
	pgtest_exec(dba, "SELECT cleanup.contract_record()");
	assert_null(pgtest_text(c, "SELECT watch_state FROM cleanup.schema_contract"));
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	pgtest_exec(dba, "CREATE TABLE public.retries (id int, item_id bigint REFERENCES inventory.items ON DELETE CASCADE)");
	assert_int_equal(pgtest_int(c, "SELECT dirty::int FROM cleanup.schema_contract"), 0);
	expect_refused(c, job, "incoming_foreign_keys");
	pgtest_exec(dba, "DROP TABLE public.retries");

	/* Install brings the watch back and the job finishes. */
	expect_ctl(0, "(watch) repaired", "install");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'cleanup_contract_watch%%' "
	                               "AND evtenabled = 'A'"),
	                 2);
	expect_exact(c, job);
	pgtest_close_all(c, dba, NULL);
}

/* Harmless DDL marks the contract dirty; the next step compares in full,
 * finds no drift, runs, and clears the mark; install has nothing to do. */
static void test_contract_harmless_ddl_is_not_drift(void **state)
{
	PGconn *c = conn("harmless");
	int64_t job = started_prune(c, "harmless");

	(void)state;
	pgtest_exec(c, "CREATE TABLE public.unrelated (id int)");
	assert_int_equal(pgtest_int(c, "SELECT dirty::int FROM cleanup.schema_contract"), 1);
	expect_ctl(0, "\"changed\": false", "--json install");
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_int_equal(pgtest_int(c, "SELECT dirty::int FROM cleanup.schema_contract"), 0);
	expect_exact(c, job);
	PQfinish(c);
}

PGTEST_MAIN(cmocka_unit_test(test_contract_disabled_guard_refuses_until_install),
            cmocka_unit_test(test_D1_new_cascade_refuses_with_and_without_install),
            cmocka_unit_test(test_contract_without_ddl_watch_compares_in_full),
            cmocka_unit_test(test_contract_harmless_ddl_is_not_drift))
