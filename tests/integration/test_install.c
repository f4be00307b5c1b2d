/* The installer (B2): idempotent (a second run changes no
 * catalog row), an upgrade re-applies definitions, one transaction (a
 * failure leaves nothing behind), repairs drift from the recorded schema
 * contract, refuses non-allowlisted databases and
 * newer schemas with exit 4 and no change, works from any directory, and
 * concurrent installers serialize. Through the real binary and the API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/install.h"
#include "pgtest.h"

/* Creates an empty database NAME (no schema); returns its conninfo. */
static char *empty_db(const char *name)
{
	char *admin = pgtest_conninfo("postgres");
	PGconn *c = pgtest_connect(admin, "test_install-admin");

	pgtest_exec(c, "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
	pgtest_exec(c, "CREATE DATABASE %s", name);
	PQfinish(c);
	free(admin);
	return pgtest_conninfo(name);
}

static void drop_db(const char *name)
{
	char *admin = pgtest_conninfo("postgres");
	PGconn *c = pgtest_connect(admin, "test_install-admin");

	pgtest_exec(c, "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
	PQfinish(c);
	free(admin);
}

/* Every catalog row the installer could touch, with its xmin: any
 * CREATE OR REPLACE, ALTER or UPDATE changes it. */
static char *catalog_snapshot(PGconn *c)
{
	return pgtest_text(
		c, "WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname IN ('cleanup', 'inventory'))"
		   " SELECT md5(concat_ws('|',"
		   "  (SELECT string_agg(p.oid || ':' || p.xmin, ',' ORDER BY p.oid) FROM pg_proc p"
		   "    WHERE p.pronamespace IN (SELECT oid FROM ns)),"
		   "  (SELECT string_agg(t.oid || ':' || t.xmin, ',' ORDER BY t.oid) FROM pg_trigger t"
		   "    JOIN pg_class r ON r.oid = t.tgrelid WHERE r.relnamespace IN (SELECT oid FROM ns)),"
		   "  (SELECT string_agg(r.oid || ':' || r.xmin, ',' ORDER BY r.oid) FROM pg_class r"
		   "    WHERE r.relnamespace IN (SELECT oid FROM ns)),"
		   "  (SELECT string_agg(n.oid || ':' || n.xmin, ',' ORDER BY n.oid) FROM pg_namespace n"
		   "    WHERE n.oid IN (SELECT oid FROM ns)),"
		   "  (SELECT xmin || ':' || version || ':' || bundle_sha256 || ':' || upgraded_at FROM cleanup.schema_info)))");
}

/* The catalog_snapshot() of C is still BEFORE (taken earlier); frees
 * BEFORE. */
static void catalog_unchanged(PGconn *c, char *before)
{
	char *after = catalog_snapshot(c);

	assert_string_equal(before, after);
	free(before);
	free(after);
}

/* A second install changes nothing: not a function, trigger, relation or
 * the version row. */
static void test_install_twice_changes_nothing(void **state)
{
	char *conninfo = pgtest_fresh_db("install_twice");
	PGconn *c = pgtest_connect(conninfo, "observer");
	char *before, *out = NULL;

	(void)state;
	before = catalog_snapshot(c);
	assert_int_equal(pgtest_cli(&out, conninfo, "install"), 0);
	assert_non_null(strstr(out, "is already installed in cleanup_lab_t_install_twice; nothing changed"));
	free(out);
	assert_int_equal(pgtest_cli(&out, conninfo, "--json install"), 0);
	assert_non_null(strstr(out, "\"changed\": false"));
	assert_non_null(strstr(out, "\"migrations_applied\": 0"));
	free(out);
	catalog_unchanged(c, before);
	assert_int_equal(pgtest_int(c, "SELECT version FROM cleanup.schema_info"), cleanup_schema_version());
	PQfinish(c);
	free(conninfo);
}

/* The engine's per-row tables written only by a step or an append under
 * its job's row lock (cleanup.manifest, job_retained, job_claims) carry no
 * foreign key to cleanup.jobs (migrations 005 and 021): jobs are never
 * deleted, and each key cost PostgreSQL's check of every inserted row
 * (docs/data-model.md, "Engine state"). The step record keeps its key. */
static void test_engine_rows_carry_no_per_row_key(void **state)
{
	char *conninfo = pgtest_fresh_db("install_keys");
	PGconn *c = pgtest_connect(conninfo, "observer");

	(void)state;
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid IN "
	                               "('cleanup.manifest'::regclass, 'cleanup.job_retained'::regclass, "
	                               "'cleanup.job_claims'::regclass)"),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_constraint WHERE contype = 'f' "
	                               "AND conrelid = 'cleanup.job_steps'::regclass "
	                               "AND confrelid = 'cleanup.jobs'::regclass"),
	                 1);
	PQfinish(c);
	free(conninfo);
}

/* The job and step rows keep every bound and identity (D2's 128 mutations
 * and 1,024 items examined a step, S7's counters adding up) in one CHECK a
 * table (migration 022: PostgreSQL prepares a table's CHECK expressions
 * once per statement, 24 of them cost a step 790k instructions). Each rule
 * still refuses a row that breaks it with check_violation, named. */
static void test_D2_S7_step_rows_keep_every_rule_in_one_check(void **state)
{
	char *conninfo = pgtest_fresh_db("install_rules");
	PGconn *c = pgtest_connect(conninfo, "observer");
	int64_t lib = pgtest_new_library(c, pgtest_new_server(c, "rules"), "rules", 3);
	int64_t job = pgtest_job_create(c, "prune", lib);
	static const struct {
		const char *set, *rule;
	} jobs[] = {
		{"phase = 'bogus'", "jobs_phase_check"},
		{"kind = 'bogus'", "jobs_kind_check"},
		{"mode = 'bogus'", "jobs_mode_check"},
		{"library_id = NULL", "jobs_check:"},
		{"mode = 'single-transaction'", "jobs_check1"},
		{"kept = kept + 1", "jobs_examine_identity"},
		{"deleted = deleted + 1", "jobs_visit_identity"},
	};
	/* A step row: VALUES of examined, visited, kept, deleted, claimed,
	 * mutations, runner_app, action. */
	static const struct {
		const char *values, *rule;
	} steps[] = {
		{"0, 0, 0, 0, 0, 129, 'x', 'drain'", "job_steps_mutation_budget"},
		{"0, 0, 0, 0, 0, -1, 'x', 'drain'", "job_steps_mutation_budget"},
		{"1025, 1, 1024, 1, 0, 1, 'x', 'drain'", "job_steps_row_budget"},
		{"129, 129, 0, 129, 0, 128, 'x', 'drain'", "job_steps_row_budget"},
		{"5, 1, 1, 1, 0, 1, 'x', 'drain'", "job_steps_examine_identity"},
		{"1, 1, 0, 1, 0, 2, 'x', 'drain'", "job_steps_mutation_identity"},
		{"0, 0, 0, 0, 0, 0, repeat('x', 65), 'drain'", "job_steps_runner_app_length"},
		{"1, 1, 0, 0, 0, 0, 'x', 'drain'", "job_steps_visit_identity"},
		{"0, 0, 0, 1, -1, 1, 'x', 'drain'", "a count below zero"},
	};
	const char *ins = "INSERT INTO cleanup.job_steps (job_id, step_no, pass_no, phase_after, started_at, "
	                  "examined, visited, kept, deleted, claimed, mutations, runner_app, action) "
	                  "VALUES (%lld, %d, 1, 'draining', now(), %s)";
	size_t i;

	(void)state;
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_constraint WHERE contype = 'c' "
	                               "AND conrelid = 'cleanup.jobs'::regclass"),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_constraint WHERE contype = 'c' "
	                               "AND conrelid = 'cleanup.job_steps'::regclass"),
	                 1);
	for (i = 0; i < sizeof jobs / sizeof *jobs; i++)
		pgtest_fails(c, "23514", jobs[i].rule, "UPDATE cleanup.jobs SET %s WHERE id = %lld", jobs[i].set,
		             (long long)job);
	for (i = 0; i < sizeof steps / sizeof *steps; i++)
		pgtest_fails(c, "23514", steps[i].rule, ins, (long long)job, (int)(100 + i), steps[i].values);
	/* What keeps the rules passes: a step of 128, and the single
	 * transaction beyond the budget. */
	pgtest_exec(c, ins, (long long)job, 1, "1024, 128, 896, 128, 0, 128, 'x', 'drain'");
	pgtest_exec(c, ins, (long long)job, 2, "5000, 5000, 0, 5000, 0, 9000, 'x', 'single-transaction'");
	pgtest_exec(c, "UPDATE cleanup.jobs SET phase = 'draining' WHERE id = %lld", (long long)job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld", (long long)job),
	                 2);
	PQfinish(c);
	free(conninfo);
}

/* A database carrying older definitions (another bundle) is upgraded: the
 * definitions are applied again, the version row records this bundle, and
 * the commands that refused the drift work again. */
static void test_upgrade_reapplies_definitions(void **state)
{
	char *conninfo = pgtest_fresh_db("install_upgrade");
	PGconn *c = pgtest_connect(conninfo, "observer");
	char *out = NULL, *src;

	(void)state;
	pgtest_exec(c, "CREATE OR REPLACE FUNCTION cleanup.job_label(j cleanup.jobs) RETURNS text "
	               "LANGUAGE sql STABLE AS $$ SELECT 'sabotaged' $$");
	pgtest_exec(c, "UPDATE cleanup.schema_info SET bundle_sha256 = 'older-bundle'");
	/* Commands refuse a database whose definitions are not theirs. */
	assert_int_equal(pgtest_cli(&out, conninfo, "status"), 4);
	assert_non_null(strstr(out, "bundle older-bundl"));
	assert_non_null(strstr(out, "run: cleanupctl install"));
	free(out);
	assert_int_equal(pgtest_cli(&out, conninfo, "--json install"), 0);
	assert_non_null(strstr(out, "\"functions_applied\": true"));
	assert_non_null(strstr(out, "\"migrations_applied\": 0"));
	free(out);
	src = pgtest_text(c, "SELECT prosrc FROM pg_proc WHERE oid = 'cleanup.job_label(cleanup.jobs)'::regprocedure");
	assert_null(strstr(src, "sabotaged"));
	free(src);
	assert_int_equal(pgtest_cli(&out, conninfo, "--json install"), 0);
	assert_non_null(strstr(out, "\"changed\": false"));
	free(out);
	assert_int_equal(pgtest_cli(&out, conninfo, "status"), 0);
	free(out);
	PQfinish(c);
	free(conninfo);
}

/* Same bundle, drifted schema (seed 001): install compares the recorded
 * contract with the live schema, applies the definitions again (the
 * replaced engine function restored), records the contract again and says
 * so; what the definitions cannot undo (a new column) is named as
 * recorded. A disabled guard is refused, named (T6: neither recorded nor
 * silently re-created). Without drift a second run changes nothing, also
 * after harmless DDL. Through the binary and the API. */
static void test_install_repairs_contract_drift(void **state)
{
	char *conninfo = pgtest_fresh_db("install_drift");
	PGconn *c = pgtest_connect(conninfo, "observer");
	cleanup_engine *e = pgtest_engine(conninfo);
	cleanup_install_result r;
	cleanup_error err;
	char *before, *after, *out = NULL, *src;

	(void)state;
	pgtest_exec(c, "ALTER TABLE inventory.items DISABLE TRIGGER items_admit_insert");
	pgtest_exec(c, "CREATE OR REPLACE FUNCTION cleanup.job_label(j cleanup.jobs) RETURNS text "
	               "LANGUAGE sql STABLE AS $$ SELECT 'sabotaged' $$");
	assert_int_equal(pgtest_cli(&out, conninfo, "install 2>&1"), 4);
	assert_non_null(strstr(out, "guard trigger items_admit_insert on inventory.items is disabled"));
	free(out);
	assert_text_equal(pgtest_text(c, "SELECT tgenabled FROM pg_trigger WHERE tgname = 'items_admit_insert'"), "D");
	pgtest_exec(c, "ALTER TABLE inventory.items ENABLE TRIGGER items_admit_insert");
	assert_int_equal(pgtest_cli(&out, conninfo, "install"), 0);
	assert_non_null(strstr(out, "schema contract drift in cleanup_lab_t_install_drift (functions) repaired"));
	free(out);
	assert_text_equal(pgtest_text(c, "SELECT tgenabled FROM pg_trigger WHERE tgname = 'items_admit_insert'"), "O");
	src = pgtest_text(c, "SELECT prosrc FROM pg_proc WHERE oid = 'cleanup.job_label(cleanup.jobs)'::regprocedure");
	assert_null(strstr(src, "sabotaged"));
	free(src);
	assert_int_equal(pgtest_int(c, "SELECT dirty::int FROM cleanup.schema_contract"), 0);

	/* D1, T6: drift that adds a cascading reference into the
	 * inventory is never recorded: install refuses, exit 4, naming the
	 * constraint, and nothing of it is committed. */
	pgtest_exec(c, "CREATE TABLE public.claims (item_id bigint REFERENCES inventory.items ON DELETE CASCADE)");
	before = pgtest_text(c, "SELECT fingerprint || recorded_at::text FROM cleanup.schema_contract");
	assert_int_equal(cleanup_install(&r, e, &err), CLEANUP_EREFUSED);
	assert_string_equal(err.sqlstate, "CU460");
	assert_non_null(strstr(err.message, "public.claims(item_id) -> inventory.items ON DELETE cascade"));
	assert_int_equal(pgtest_cli(&out, conninfo, "install"), 4);
	assert_non_null(strstr(out, "claims_item_id_fkey"));
	free(out);
	after = pgtest_text(c, "SELECT fingerprint || recorded_at::text FROM cleanup.schema_contract");
	assert_string_equal(before, after);
	free(before);
	free(after);
	pgtest_exec(c, "DROP TABLE public.claims");

	/* Drift the definitions do not undo: recorded, and named. */
	pgtest_exec(c, "ALTER TABLE inventory.items ADD COLUMN note text");
	assert_int_equal(cleanup_install(&r, e, &err), CLEANUP_OK);
	assert_true(r.contract_repaired);
	assert_true(r.functions_applied);
	assert_int_equal(r.migrations_applied, 0);
	assert_string_equal(r.drift, "columns");
	assert_string_equal(r.kept, "columns");

	/* No drift: nothing changes, harmless DDL included. */
	pgtest_exec(c, "CREATE TABLE public.unrelated (id int)");
	before = catalog_snapshot(c);
	assert_int_equal(pgtest_cli(&out, conninfo, "--json install"), 0);
	assert_non_null(strstr(out, "\"changed\": false"));
	assert_non_null(strstr(out, "\"contract_repaired\": false"));
	assert_non_null(strstr(out, "\"contract_drift\": null"));
	free(out);
	assert_int_equal(pgtest_cli(&out, conninfo, "install"), 0);
	assert_non_null(strstr(out, "nothing changed"));
	free(out);
	catalog_unchanged(c, before);
	cleanup_engine_close(e);
	PQfinish(c);
	free(conninfo);
}

/* A database with a newer schema than the binary is refused, exit 4,
 * nothing changed. */
static void test_newer_schema_is_refused(void **state)
{
	char *conninfo = pgtest_fresh_db("install_newer");
	PGconn *c = pgtest_connect(conninfo, "observer");
	char *before, *out = NULL;

	(void)state;
	pgtest_exec(c, "UPDATE cleanup.schema_info SET version = 999, bundle_sha256 = 'future'");
	before = catalog_snapshot(c);
	assert_int_equal(pgtest_cli(&out, conninfo, "install"), 4);
	assert_non_null(strstr(out, "carries schema version 999, newer than this binary's"));
	assert_non_null(strstr(out, "nothing was changed"));
	free(out);
	catalog_unchanged(c, before);
	PQfinish(c);
	free(conninfo);
}

/* B2: a database outside the allowlist is refused with exit 4, a message
 * naming it and the rule, and nothing created. */
static void test_B2_install_refuses_non_allowlisted(void **state)
{
	char *conninfo = empty_db("cleanupctl_t_not_allowed");
	PGconn *c = pgtest_connect(conninfo, "observer");
	cleanup_engine *e = pgtest_engine(conninfo);
	cleanup_install_result r;
	cleanup_error err;
	char *out = NULL;

	(void)state;
	assert_int_equal(pgtest_cli(&out, conninfo, "install"), 4);
	assert_non_null(strstr(out, "database \"cleanupctl_t_not_allowed\" is not on the allowlist"));
	assert_non_null(strstr(out, "cleanup_lab or cleanup_lab_<suffix>"));
	assert_non_null(strstr(out, "nothing was changed"));
	free(out);
	assert_int_equal(cleanup_install(&r, e, &err), CLEANUP_EREFUSED);
	assert_int_equal(cleanup_exit_code(err.status), 4);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_namespace WHERE nspname IN ('cleanup', 'inventory')"), 0);
	cleanup_engine_close(e);
	PQfinish(c);
	free(conninfo);
	drop_db("cleanupctl_t_not_allowed");
}

/* One transaction: a migration that fails (a conflicting table already
 * there) leaves no schema, no table and no version row behind. */
static void test_failed_install_leaves_nothing(void **state)
{
	char *conninfo = empty_db("cleanup_lab_t_install_conflict");
	PGconn *c = pgtest_connect(conninfo, "observer");
	char *out = NULL;

	(void)state;
	pgtest_exec(c, "CREATE SCHEMA inventory");
	pgtest_exec(c, "CREATE TABLE inventory.items (x int)");
	assert_int_equal(pgtest_cli(&out, conninfo, "install"), 1);
	assert_non_null(strstr(out, "\"items\" already exists"));
	free(out);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_namespace WHERE nspname = 'cleanup'"), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_class WHERE relnamespace = 'inventory'::regnamespace"), 1);
	PQfinish(c);
	free(conninfo);
}

/* The SQL is embedded: install works from any directory; a database
 * without the schema makes other commands say how to install it. */
static void test_install_from_any_directory(void **state)
{
	char *conninfo = empty_db("cleanup_lab_t_install_cwd");
	PGconn *c = pgtest_connect(conninfo, "observer");
	char *out = NULL;

	(void)state;
	assert_int_equal(pgtest_cli(&out, conninfo, "status"), 4);
	assert_non_null(strstr(out, "has no cleanup schema"));
	assert_non_null(strstr(out, "run: cleanupctl install"));
	free(out);
	assert_int_equal(pgtest_sh(&out, "cd / && '%s' --db \"%s\" install 2>&1", pgtest_cleanupctl(), conninfo), 0);
	assert_non_null(strstr(out, "installed schema version"));
	free(out);
	assert_int_equal(pgtest_int(c, "SELECT version FROM cleanup.schema_info"), cleanup_schema_version());
	assert_int_equal(pgtest_cli(&out, conninfo, "status"), 0);
	free(out);
	PQfinish(c);
	free(conninfo);
}

/* Two installers at once: the advisory lock serializes them; both
 * succeed and exactly one of them changed anything. */
static void test_concurrent_installers(void **state)
{
	char *conninfo = empty_db("cleanup_lab_t_install_race");
	char *o1 = NULL, *o2 = NULL;
	int p1, p2;

	(void)state;
	p1 = pgtest_spawn("'%s' --json --db \"%s\" install", pgtest_cleanupctl(), conninfo);
	p2 = pgtest_spawn("'%s' --json --db \"%s\" install", pgtest_cleanupctl(), conninfo);
	assert_int_equal(pgtest_wait(p1, &o1), 0);
	assert_int_equal(pgtest_wait(p2, &o2), 0);
	assert_true((strstr(o1, "\"changed\": true") != NULL) + (strstr(o2, "\"changed\": true") != NULL) == 1);
	free(o1);
	free(o2);
	free(conninfo);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_install_twice_changes_nothing),
          cmocka_unit_test(test_engine_rows_carry_no_per_row_key),
          cmocka_unit_test(test_D2_S7_step_rows_keep_every_rule_in_one_check),
          cmocka_unit_test(test_upgrade_reapplies_definitions),
          cmocka_unit_test(test_install_repairs_contract_drift),
          cmocka_unit_test(test_newer_schema_is_refused),
          cmocka_unit_test(test_B2_install_refuses_non_allowlisted),
          cmocka_unit_test(test_failed_install_leaves_nothing),
          cmocka_unit_test(test_install_from_any_directory), cmocka_unit_test(test_concurrent_installers))
