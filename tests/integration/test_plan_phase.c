/* Seed 004's plan phase and rollout switch (seed 004): `job create`
 * takes the parent row lock without waiting and releases it at once (a
 * holder makes it busy, named), runs the RESTRICT checks and the
 * validators the installer recorded (a reason refuses the job, CU461,
 * exit 4, naming the validator and the reason; nothing changes), and uses
 * the install-time default mode when --mode is absent. Validator names are
 * resolved in pg_proc, never spliced into SQL. */
#include "test_step_support.h"

PGTEST_DB_SETUP(ci, pgtest_fresh_db("plan_phase"))

/* A validator that refuses libraries named "vip-...", and a server of two
 * libraries, "vip-NAME" and "NAME", 10 items each. Returns the server id. */
static int64_t vip_fixture(PGconn *c, const char *name, int64_t *vip, int64_t *plain)
{
	int64_t server = pgtest_new_server(c, name);
	char vipname[64];

	snprintf(vipname, sizeof vipname, "vip-%s", name);
	*vip = pgtest_new_library(c, server, vipname, 10);
	*plain = pgtest_new_library(c, server, name, 10);
	pgtest_exec(c, "CREATE SCHEMA IF NOT EXISTS ops");
	pgtest_exec(c, "CREATE OR REPLACE FUNCTION ops.keep_vip(kind text, target_id bigint) RETURNS text "
	               "LANGUAGE sql STABLE AS $$ SELECT CASE WHEN kind <> 'remove-server' AND (SELECT name FROM "
	               "inventory.libraries WHERE id = target_id) LIKE 'vip-%%' THEN 'library is kept for VIPs' END $$");
	return server;
}

/* `job create KIND --library LIB OPTS` succeeds and the job it creates
 * (the newest) shows MODE in `job show --json`. Returns its id. */
static int64_t create_in_mode(PGconn *c, const char *kind, int64_t lib, const char *opts, const char *mode)
{
	char *out = NULL, want[64];
	int64_t job;

	assert_int_equal(ctl(NULL, "job create %s --library %lld%s", kind, (long long)lib, opts), 0);
	job = pgtest_int(c, "SELECT max(id) FROM cleanup.jobs");
	assert_int_equal(ctl(&out, "--json job show %lld", (long long)job), 0);
	snprintf(want, sizeof want, "\"mode\": \"%s\"", mode);
	assert_non_null(strstr(out, want));
	free(out);
	return job;
}

/* A recorded validator refuses the job it names, CU461 and exit 4, and
 * nothing changes; jobs it lets through are created; removed, it is no
 * longer asked. */
static void test_plan_validator_refuses_job_create(void **state)
{
	PGconn *c = conn("validator");
	int64_t vip, plain, job;
	char *before, *out = NULL;

	(void)state;
	vip_fixture(c, "val", &vip, &plain);
	assert_int_equal(ctl(&out, "install --validator ops.keep_vip"), 0);
	assert_non_null(strstr(out, "validators: ops.keep_vip(text,bigint)"));
	free(out);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.plan_validators"), 1);

	before = pgtest_fingerprint(c);
	assert_int_equal(ctl(&out, "job create remove-library --library %lld 2>&1", (long long)vip), 4);
	assert_non_null(strstr(out, "refused by validator ops.keep_vip(text,bigint): library is kept for VIPs"));
	free(out);
	assert_int_equal(ctl(&out, "--json job create prune --library %lld", (long long)vip), 4);
	assert_non_null(strstr(out, "\"sqlstate\": \"CU461\""));
	free(out);
	pgtest_unchanged(c, before);

	/* Another library of the same server passes. */
	assert_int_equal(ctl(NULL, "job create remove-library --library %lld", (long long)plain), 0);
	job = pgtest_int(c, "SELECT max(id) FROM cleanup.jobs");
	assert_int_equal(ctl(NULL, "job run %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "completed");

	/* A validator that fails (here: its function was dropped) refuses:
	 * it was recorded to be asked. */
	pgtest_exec(c, "DROP FUNCTION ops.keep_vip(text, bigint)");
	assert_int_equal(ctl(&out, "job create prune --library %lld 2>&1", (long long)vip), 4);
	assert_non_null(strstr(out, "it no longer exists"));
	free(out);
	assert_int_equal(ctl(NULL, "install --remove-validator ops.keep_vip"), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.plan_validators"), 0);
	assert_int_equal(ctl(NULL, "job create prune --library %lld", (long long)vip), 0);
	job = pgtest_int(c, "SELECT max(id) FROM cleanup.jobs");
	assert_int_equal(ctl(NULL, "job cancel %lld", (long long)job), 0);
	PQfinish(c);
}

/* B1: a validator is a function in pg_proc, SCHEMA.FUNC(text, bigint)
 * returning text, owned by cleanup_owner or a superuser; anything else
 * (SQL in the name, no such function, another signature or owner) is a
 * usage error naming it, and the install records nothing. */
static void test_plan_validator_names_are_checked(void **state)
{
	/* Each name install refuses (exit 2) and, when not NULL, what it says. */
	static const struct {
		const char *name, *says;
	} bad[] = {
		{"'ops.keep_vip(text,bigint); DROP TABLE public.canary'", "write it as schema.function"},
		{"'ops.keep_vip; DROP TABLE public.canary'", NULL},
		{"keep_vip", NULL},
		{"ops.nothing", "no function ops.nothing(text, bigint)"},
		{"ops.one_arg", NULL},
		{"ops.wrong_type", "must return one text"},
		{"ops.strangers", "owned by plan_phase_stranger"},
	};
	PGconn *c = conn("names");
	char *out = NULL;
	int64_t vip, plain;
	size_t i;

	(void)state;
	vip_fixture(c, "names", &vip, &plain);
	pgtest_exec(c, "CREATE TABLE public.canary (id int)");
	pgtest_exec(c, "CREATE OR REPLACE FUNCTION ops.one_arg(kind text) RETURNS text LANGUAGE sql AS $$ SELECT NULL $$");
	pgtest_exec(c, "CREATE OR REPLACE FUNCTION ops.wrong_type(kind text, target_id bigint) RETURNS int "
	               "LANGUAGE sql AS $$ SELECT 1 $$");
	pgtest_exec(c, "DO $$ BEGIN CREATE ROLE plan_phase_stranger NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$");
	pgtest_exec(c, "CREATE OR REPLACE FUNCTION ops.strangers(kind text, target_id bigint) RETURNS text "
	               "LANGUAGE sql AS $$ SELECT NULL $$");
	pgtest_exec(c, "ALTER FUNCTION ops.strangers(text, bigint) OWNER TO plan_phase_stranger");

	for (i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(ctl(&out, "install --validator %s 2>&1", bad[i].name), 2);
		if (bad[i].says)
			assert_non_null(strstr(out, bad[i].says));
		free(out);
	}
	expect_ctl(2, "no validator ops.keep_vip is recorded", "install --remove-validator ops.keep_vip 2>&1");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.plan_validators"), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_class WHERE oid = to_regclass('public.canary')"), 1);

	/* A quoted identifier is a name like any other. */
	pgtest_exec(c, "CREATE OR REPLACE FUNCTION ops.\"Mixed Case\"(kind text, target_id bigint) RETURNS text "
	               "LANGUAGE sql AS $$ SELECT NULL $$");
	assert_int_equal(ctl(&out, "install --validator 'ops.\"Mixed Case\"'"), 0);
	assert_non_null(strstr(out, "ops.\"Mixed Case\"(text,bigint)"));
	free(out);
	assert_int_equal(ctl(NULL, "job create prune --library %lld", (long long)plain), 0);
	assert_int_equal(ctl(NULL, "job cancel %lld", (long long)pgtest_int(c, "SELECT max(id) FROM cleanup.jobs")), 0);
	assert_int_equal(ctl(NULL, "install --remove-validator 'ops.\"Mixed Case\"'"), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.plan_validators"), 0);
	PQfinish(c);
}

/* The parent row lock: a transaction holding the library row makes
 * `job create` busy (exit 3) naming it, nothing changed; the lock is
 * released at once, not held by the creating transaction while it goes
 * on (seen from another session while that transaction is still open). */
static void test_plan_parent_row_lock_is_nowait_and_released(void **state)
{
	PGconn *c = conn("parent"), *holder = conn("row-holder"), *creator = conn("creator");
	int64_t vip, plain, holder_pid;
	char *before, *out = NULL, want[64];

	(void)state;
	vip_fixture(c, "parent", &vip, &plain);
	holder_pid = pgtest_int(holder, "SELECT pg_backend_pid()");
	pgtest_begin(holder, "SELECT 1 FROM inventory.libraries WHERE id = %lld FOR NO KEY UPDATE", (long long)plain);
	before = pgtest_fingerprint(c);
	assert_int_equal(ctl(&out, "job create remove-library --library %lld 2>&1", (long long)plain), 3);
	assert_non_null(strstr(out, "library row"));
	snprintf(want, sizeof want, "pid %lld", (long long)holder_pid);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "row-holder"));
	free(out);
	pgtest_unchanged(c, before);
	pgtest_exec(holder, "ROLLBACK");

	/* Created in an open transaction: the library row is free again. */
	pgtest_begin(creator, "SELECT cleanup.job_create('prune', %lld)", (long long)plain);
	pgtest_begin(holder, "SELECT 1 FROM inventory.libraries WHERE id = %lld FOR UPDATE NOWAIT", (long long)plain);
	pgtest_exec(holder, "ROLLBACK");
	pgtest_exec(creator, "ROLLBACK");
	pgtest_close_all(c, holder, creator, NULL);
}

/* The RESTRICT checks run before the parent row is locked too (and
 * again under the lock): a library with a reference nobody recorded is
 * refused, CU404, even while a writer holds its row, where locking first
 * answered busy (55P03), a refusal no retry could fix. The same run before
 * the lock keeps the first call's compile and catalog planning, ~10-20 ms
 * in a new session (every `cleanupctl job create`), out of the parent row
 * lock that every writer's foreign-key check on that row waits for
 * (bench_cleanup, "lock waits over 15 ms"). Nothing changes; the holder's
 * lock is untouched. */
static void test_plan_unknown_reference_refused_before_the_parent_row_lock(void **state)
{
	PGconn *c = conn("unknown-ref"), *holder = conn("row-holder"), *creator = conn("creator");
	int64_t vip, plain;
	char *before;

	(void)state;
	vip_fixture(c, "unknownref", &vip, &plain);
	pgtest_exec(c, "CREATE TABLE public.pp_notes (library_id bigint REFERENCES inventory.libraries (id) "
	               "ON DELETE RESTRICT)");
	pgtest_begin(holder, "SELECT 1 FROM inventory.libraries WHERE id = %lld FOR NO KEY UPDATE", (long long)plain);
	before = pgtest_fingerprint(c);
	pgtest_fails(creator, "CU404", "public.pp_notes(library_id) -> inventory.libraries",
	             "SELECT cleanup.job_create('remove-library', %lld)", (long long)plain);
	pgtest_unchanged(c, before);
	/* The writer's transaction goes on: its row is still its own. */
	assert_int_equal(pgtest_int(holder, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)plain),
	                 1);
	pgtest_exec(holder, "ROLLBACK");
	pgtest_exec(c, "DROP TABLE public.pp_notes");
	pgtest_close_all(c, holder, creator, NULL);
}

/* The rollout switch (seed 004, section 5): install --default-mode
 * records what job create uses without --mode; --mode still wins; the
 * mode used shows in job show --json, the default in status --json.
 * single-transaction applies to remove-library only: a prune stays
 * bounded. */
static void test_plan_default_mode_rollout_switch(void **state)
{
	PGconn *c = conn("mode");
	int64_t vip, plain, server, job;
	char *out = NULL;

	(void)state;
	server = vip_fixture(c, "mode", &vip, &plain);
	(void)server;
	assert_int_equal(ctl(&out, "--json status"), 0);
	assert_non_null(strstr(out, "\"default_mode\": \"bounded\""));
	free(out);
	assert_int_equal(ctl(&out, "--json install --default-mode single-transaction"), 0);
	assert_non_null(strstr(out, "\"default_mode\": \"single-transaction\""));
	assert_non_null(strstr(out, "\"plan_changed\": true"));
	free(out);
	assert_text_equal(pgtest_text(c, "SELECT default_mode FROM cleanup.plan_settings"), "single-transaction");
	assert_int_equal(ctl(&out, "install --default-mode sometimes 2>&1"), 2);
	free(out);
	assert_int_equal(ctl(&out, "--json status"), 0);
	assert_non_null(strstr(out, "\"default_mode\": \"single-transaction\""));
	free(out);

	job = create_in_mode(c, "prune", vip, "", "bounded");
	assert_int_equal(ctl(NULL, "job cancel %lld", (long long)job), 0);

	job = create_in_mode(c, "remove-library", plain, "", "single-transaction");
	assert_int_equal(ctl(NULL, "job run %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "completed");

	job = create_in_mode(c, "remove-library", vip, " --mode bounded", "bounded");
	assert_int_equal(ctl(NULL, "job run %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "completed");

	/* Back to the default; an install without the option keeps it. */
	assert_int_equal(ctl(NULL, "install --default-mode bounded"), 0);
	assert_int_equal(ctl(NULL, "install"), 0);
	assert_text_equal(pgtest_text(c, "SELECT default_mode FROM cleanup.plan_settings"), "bounded");
	PQfinish(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_validator_refuses_job_create),
		cmocka_unit_test(test_plan_validator_names_are_checked),
		cmocka_unit_test(test_plan_parent_row_lock_is_nowait_and_released),
		cmocka_unit_test(test_plan_unknown_reference_refused_before_the_parent_row_lock),
		cmocka_unit_test(test_plan_default_mode_rollout_switch),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
