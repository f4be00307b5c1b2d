/* T6: drift never approves itself, across the whole
 * graph. For each kind of drift (a cascade or set-null anywhere in the
 * foreign-key graph reachable from the inventory, a disabled foreign-key
 * or guard trigger, a foreign trigger, an inheritance child, changed
 * settings of an engine function): a step after it refuses (CU403) and
 * deletes nothing, and `cleanupctl install` refuses too (CU460, exit 4,
 * the object named, the recorded contract unchanged), where before the
 * installer recorded it as the contract. Undone, the job runs on exactly.
 * And a step holds every table it may mutate, dependents included, from
 * before its contract check to its commit: DDL adding a cascade to a
 * dependent waits for the step (seen in pg_blocking_pids, not timed). */
#include "test_step_support.h"

PGTEST_DB_SETUP(ci, pgtest_fresh_db("drift"))

/* The recorded contract, whole (its row as text; NULL when none). */
static char *contract_row(PGconn *c)
{
	return pgtest_text(c, "SELECT md5(s::text) FROM cleanup.schema_contract s");
}

/* `cleanupctl install` refuses with exit 4 and CU460, naming OBJECT, and
 * records nothing: the contract row is the one recorded before. */
static void expect_install_refused(PGconn *c, const char *object)
{
	char *before = contract_row(c), *after, *out = NULL;

	assert_int_equal(ctl(&out, "install 2>&1"), 4);
	assert_non_null(strstr(out, "drift that no contract may record"));
	assert_non_null(strstr(out, object));
	free(out);
	expect_ctl(4, "\"sqlstate\": \"CU460\"", "--json install");
	after = contract_row(c);
	assert_non_null(before);
	assert_non_null(after);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

/* The next step of JOB refuses (exit 4, schema contract drift naming
 * COMPONENT) and changes nothing: no row deleted, no step recorded. */
static void expect_step_refused(PGconn *c, int64_t job, const char *component)
{
	int64_t retries = pgtest_int(c, "SELECT count(*) FROM inventory.item_retries");

	expect_step_drift(c, job, component, NULL);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.item_retries"), retries);
}

/* Both refusals: the next step of JOB (COMPONENT) and install (OBJECT). */
static void expect_refused(PGconn *c, int64_t job, const char *component, const char *object)
{
	expect_step_refused(c, job, component);
	expect_install_refused(c, object);
}

/* A prune of a new library NAME: 2000 items, every second one seen, each
 * with two retries (written before the job, so none is protected by it),
 * sealed. */
static int64_t sealed_prune_with_retries(PGconn *c, const char *name)
{
	int64_t lib = pgtest_new_library(c, pgtest_new_server(c, name), name, 2000);

	pgtest_exec(c,
	            "INSERT INTO inventory.item_retries (item_id, reason) "
	            "SELECT i.id, 'retry ' || g FROM inventory.items i, generate_series(1, 2) g "
	            "WHERE i.library_id = %lld ORDER BY i.id, g",
	            (long long)lib);
	return sealed_prune(c, lib, name, 2000, 2);
}

/* The same, its first step run. */
static int64_t started_prune(PGconn *c, const char *name)
{
	int64_t job = sealed_prune_with_retries(c, name);

	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	return job;
}

/* Undone, install has nothing left to refuse and the job completes
 * exactly: 1000 unseen items deleted with their retries, 1000 kept. */
static void expect_exact(PGconn *c, int64_t job)
{
	assert_int_equal(ctl(NULL, "install"), 0);
	run_to_completion(c, job);
	assert_job_counts(c, job, "deleted, kept, retries_deleted", "1000, 1000, 2000");
	assert_steps_consistent(c, job);
}

/* expect_exact(), then the test's session C and its DBA session closed. */
static void expect_exact_and_close(PGconn *c, PGconn *dba, int64_t job)
{
	expect_exact(c, job);
	pgtest_close_all(c, dba, NULL);
}

/* The attack T6 stops: a cascade into inventory.item_retries (a
 * dependent's dependent of the library), then one a level deeper, then a
 * SET NULL. Each stops the step and is refused by install, and by
 * contract_record called around the installer. */
static void test_T6_cascade_anywhere_in_the_graph_is_refused(void **state)
{
	PGconn *c = conn("cascade"), *dba = conn("dba");
	int64_t job = started_prune(c, "cascade");

	(void)state;
	pgtest_exec(dba, "CREATE TABLE public.retry_notes (id bigint PRIMARY KEY, "
	                 "retry_id bigint REFERENCES inventory.item_retries ON DELETE CASCADE)");
	pgtest_exec(dba, "INSERT INTO public.retry_notes SELECT r.id, r.id FROM inventory.item_retries r");
	expect_refused(c, job, "incoming_foreign_keys",
	               "foreign key public.retry_notes(retry_id) -> inventory.item_retries ON DELETE cascade "
	               "(constraint retry_notes_retry_id_fkey)");
	pgtest_fails(dba, "CU460", "public.retry_notes(retry_id)", "SELECT cleanup.contract_record()");
	expect_step_refused(c, job, "incoming_foreign_keys");

	/* Restricting, but with a cascade one level further down. */
	pgtest_exec(dba, "ALTER TABLE public.retry_notes DROP CONSTRAINT retry_notes_retry_id_fkey");
	pgtest_exec(dba, "DELETE FROM public.retry_notes");
	pgtest_exec(dba, "ALTER TABLE public.retry_notes ADD FOREIGN KEY (retry_id) REFERENCES inventory.item_retries");
	pgtest_exec(dba, "CREATE TABLE public.note_tags (note_id bigint REFERENCES public.retry_notes ON DELETE CASCADE)");
	expect_refused(c, job, "graph",
	               "foreign key public.note_tags(note_id) -> public.retry_notes ON DELETE cascade");
	pgtest_exec(dba, "DROP TABLE public.note_tags, public.retry_notes");

	pgtest_exec(dba, "CREATE TABLE public.retry_refs (retry_id bigint REFERENCES inventory.item_retries ON DELETE SET NULL)");
	expect_refused(
	    c, job, "incoming_foreign_keys",
	    "foreign key public.retry_refs(retry_id) -> inventory.item_retries ON DELETE set null");
	pgtest_exec(dba, "DROP TABLE public.retry_refs");
	expect_exact_and_close(c, dba, job);
}

/* A foreign key switched off by disabling its RI trigger (by name, or
 * replica-only) no longer holds: recorded, it would approve deletes the
 * engine relies on to fail. */
static void test_T6_disabled_foreign_key_trigger_is_refused(void **state)
{
	PGconn *c = conn("fk"), *dba = conn("dba");
	char *trig;
	int64_t job = started_prune(c, "fk");

	(void)state;
	trig = pgtest_text(dba, "SELECT tgname FROM pg_trigger WHERE tgrelid = 'inventory.item_retries'::regclass "
	                        "AND tgconstraint = (SELECT oid FROM pg_constraint WHERE conname = 'item_retries_item_id_fkey' "
	                        "AND conrelid = 'inventory.item_retries'::regclass) ORDER BY tgname LIMIT 1");
	pgtest_exec(dba, "ALTER TABLE inventory.item_retries DISABLE TRIGGER \"%s\"", trig);
	expect_refused(c, job, "incoming_foreign_keys",
	               "foreign key item_retries_item_id_fkey of inventory.item_retries is switched off");
	pgtest_exec(dba, "ALTER TABLE inventory.item_retries ENABLE REPLICA TRIGGER \"%s\"", trig);
	expect_install_refused(c, "is replica-only");
	pgtest_exec(dba, "ALTER TABLE inventory.item_retries ENABLE TRIGGER \"%s\"", trig);
	free(trig);
	expect_exact_and_close(c, dba, job);
}

/* A guard trigger disabled: install names it instead of re-creating it
 * behind the back of whoever disabled it (or recording it). */
static void test_T6_disabled_guard_trigger_is_refused(void **state)
{
	PGconn *c = conn("guard"), *dba = conn("dba");
	int64_t job = started_prune(c, "guard");

	(void)state;
	pgtest_exec(dba, "ALTER TABLE inventory.item_retries DISABLE TRIGGER item_retries_guard_delete");
	expect_refused(c, job, "triggers",
	               "guard trigger item_retries_guard_delete on inventory.item_retries is disabled");
	assert_text_equal(pgtest_text(c, "SELECT tgenabled FROM pg_trigger WHERE tgname = 'item_retries_guard_delete'"),
	                    "D");
	pgtest_exec(dba, "ALTER TABLE inventory.item_retries ENABLE TRIGGER item_retries_guard_delete");
	expect_exact_and_close(c, dba, job);
}

/* A trigger of someone else's on a dependent table runs inside steps. */
static void test_T6_foreign_trigger_is_refused(void **state)
{
	PGconn *c = conn("foreign"), *dba = conn("dba");
	int64_t job = started_prune(c, "foreign");

	(void)state;
	pgtest_exec(dba, "CREATE TABLE public.retry_log (id bigint)");
	pgtest_exec(dba, "CREATE FUNCTION public.log_retry() RETURNS trigger LANGUAGE plpgsql AS "
	                 "'BEGIN INSERT INTO public.retry_log VALUES (OLD.id); RETURN OLD; END'");
	pgtest_exec(dba, "CREATE TRIGGER log_retry AFTER DELETE ON inventory.item_retries FOR EACH ROW "
	                 "EXECUTE FUNCTION public.log_retry()");
	expect_refused(c, job, "triggers",
	               "foreign trigger log_retry on inventory.item_retries (function public.log_retry())");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM public.retry_log"), 0);
	pgtest_exec(dba, "DROP TRIGGER log_retry ON inventory.item_retries");
	expect_exact_and_close(c, dba, job);
}

/* A child table of an inventory table: a step's delete reaches it. */
static void test_T6_inheritance_child_is_refused(void **state)
{
	PGconn *c = conn("child"), *dba = conn("dba");
	int64_t job = started_prune(c, "child");

	(void)state;
	pgtest_exec(dba, "CREATE TABLE public.retries_archive () INHERITS (inventory.item_retries)");
	expect_refused(c, job, "inheritance",
	               "inheritance child public.retries_archive of inventory.item_retries");
	pgtest_exec(dba, "DROP TABLE public.retries_archive");
	expect_exact_and_close(c, dba, job);
}

/* ALTER FUNCTION ... RESET lock_timeout of the step's entry point was no
 * drift at all; now every step refuses and install names the function.
 * A changed SQL-standard body (BEGIN ATOMIC, empty prosrc) is drift too;
 * that one install repairs: the bundle's definition is applied again. */
static void test_T6_changed_function_settings_are_refused(void **state)
{
	PGconn *c = conn("settings"), *dba = conn("dba");
	int64_t job = started_prune(c, "settings");

	(void)state;
	pgtest_exec(dba, "ALTER FUNCTION cleanup.job_step(bigint, int, int, bigint) RESET lock_timeout");
	expect_refused(c, job, "functions",
	               "function cleanup.job_step(bigint,integer,integer,bigint): its settings changed");
	pgtest_exec(dba, "ALTER FUNCTION cleanup.job_step(bigint, int, int, bigint) SET lock_timeout = '5s'");

	pgtest_exec(dba, "CREATE OR REPLACE FUNCTION cleanup.failpoints_on() RETURNS boolean LANGUAGE sql STABLE "
	                 "BEGIN ATOMIC SELECT false; END");
	expect_step_refused(c, job, "functions");
	expect_ctl(0, "(functions) repaired", "install");
	expect_exact_and_close(c, dba, job);
}

/* A step holds every table it may mutate (dependents included) from
 * before its contract check to its commit: a foreign key with ON DELETE
 * CASCADE added to inventory.item_retries while a step runs waits for the
 * step (blocked by the step's backend, pg_blocking_pids), the step's
 * mutations stay within 128 and cascade nothing; the next step refuses. */
static void test_T6_ddl_waits_for_a_running_step(void **state)
{
	PGconn *c = conn("ddl"), *hold = conn("hold"), *run = conn("run"), *ddl = conn("ddl-session");
	int64_t job, notes, step, run_pid, ddl_pid;
	const char *st;

	(void)state;
	/* Its first step discovers candidates before it touches a dependent:
	 * until it deletes one, only the step's own LOCK TABLE holds
	 * inventory.item_retries. */
	job = sealed_prune_with_retries(c, "ddl");
	/* A table outside the graph (harmless DDL: no drift). */
	pgtest_exec(c, "CREATE TABLE public.retry_notes (id bigint PRIMARY KEY, retry_id bigint)");
	pgtest_exec(c, "INSERT INTO public.retry_notes SELECT r.id, r.id FROM inventory.item_retries r");
	notes = pgtest_int(c, "SELECT count(*) FROM public.retry_notes");
	step = job_int(c, job, "step_no");

	pgtest_exec(hold, "SELECT pg_advisory_lock(cleanup.failpoint_key('step_after_discovery'))");
	run_pid = pgtest_int(run, "SELECT pg_backend_pid()");
	pgtest_exec(run, "SET cleanup.failpoints = 'step_after_discovery'");
	pgtest_send(run, "SELECT mutations FROM cleanup.job_step(%lld, %lld)", (long long)job, (long long)step + 1);
	pgtest_wait_blocked(c, (int)run_pid, 30000);

	ddl_pid = pgtest_int(ddl, "SELECT pg_backend_pid()");
	pgtest_send(ddl, "ALTER TABLE public.retry_notes ADD FOREIGN KEY (retry_id) REFERENCES inventory.item_retries "
	                 "ON DELETE CASCADE NOT VALID");
	pgtest_wait_blocked(c, (int)ddl_pid, 30000);
	assert_int_equal(pgtest_int(c, "SELECT (%lld = ANY (pg_blocking_pids(%lld)))::int", (long long)run_pid,
	                            (long long)ddl_pid),
	                 1);

	pgtest_exec(hold, "SELECT pg_advisory_unlock(cleanup.failpoint_key('step_after_discovery'))");
	st = pgtest_finish(run);
	assert_string_equal(st, "");
	st = pgtest_finish(ddl);
	assert_string_equal(st, "");
	assert_int_equal(job_int(c, job, "step_no"), step + 1);
	assert_true(pgtest_int(c, "SELECT mutations FROM cleanup.job_steps WHERE job_id = %lld AND step_no = %lld",
	                       (long long)job, (long long)step + 1) <= 128);
	/* The cascade landed after the step: nothing of it ran in the step. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM public.retry_notes"), notes);
	expect_refused(c, job, "incoming_foreign_keys",
	               "public.retry_notes(retry_id) -> inventory.item_retries ON DELETE cascade");
	pgtest_exec(c, "DROP TABLE public.retry_notes");
	expect_exact(c, job);
	pgtest_close_all(c, hold, run, ddl, NULL);
}

PGTEST_MAIN(cmocka_unit_test(test_T6_cascade_anywhere_in_the_graph_is_refused),
            cmocka_unit_test(test_T6_disabled_foreign_key_trigger_is_refused),
            cmocka_unit_test(test_T6_disabled_guard_trigger_is_refused),
            cmocka_unit_test(test_T6_foreign_trigger_is_refused),
            cmocka_unit_test(test_T6_inheritance_child_is_refused),
            cmocka_unit_test(test_T6_changed_function_settings_are_refused),
            cmocka_unit_test(test_T6_ddl_waits_for_a_running_step))
