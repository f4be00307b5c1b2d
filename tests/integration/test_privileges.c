/* The privilege model (docs/roles.md): the sync writer,
 * the cleanup runner and the console run as login roles in cleanup_writer,
 * cleanup_runner and cleanup_console, and each is shown what it can and
 * cannot do. Before the fix a writer that had been granted UPDATE on the
 * admission tables (the triggers needed it) reopened a fenced library and
 * had its write deleted by the removal; now the guards are SECURITY
 * DEFINER functions of cleanup_owner and a writer has no access to schema
 * cleanup at all. Also: `console --readonly`'s connections refuse writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/install.h"
#include "pgtest.h"

#define WRITER "t_priv_writer"
#define RUNNER "t_priv_runner"
#define CONSOLE "t_priv_console"

static char *conninfo;      /* as postgres (superuser) */
static char *as_writer;     /* the same database as t_priv_writer */
static char *as_runner;
static char *as_console;

static int setup(void **state)
{
	(void)state;
	/* 3 servers x 2 libraries x 10 items: server 1 = libraries 1, 2;
	 * server 2 = 3, 4; server 3 = 5, 6. */
	conninfo = pgtest_seeded_db("privileges", 3, 2, 10);
	as_writer = pgtest_login_as(conninfo, WRITER, CLEANUP_ROLE_WRITER);
	as_runner = pgtest_login_as(conninfo, RUNNER, CLEANUP_ROLE_RUNNER);
	as_console = pgtest_login_as(conninfo, CONSOLE, CLEANUP_ROLE_CONSOLE);
	return 0;
}

PGTEST_DB_TEARDOWN(conninfo, as_writer, as_runner, as_console)

/* Each statement of SQL (NULL-terminated) is refused to C for lack of
 * privilege (SQLSTATE 42501). */
static void expect_denied(PGconn *c, const char *const *sql)
{
	for (; *sql; sql++) {
		const char *state = pgtest_fail(c, NULL, 0, "%s", *sql);

		if (strcmp(state, "42501") != 0)
			fail_msg("%s: SQLSTATE %s, not 42501", *sql, state);
	}
}

/* The installer created the four roles without LOGIN, gave every object
 * of cleanup and inventory to cleanup_owner, and left nothing executable
 * or readable by PUBLIC. */
static void test_install_creates_roles_and_hands_objects_to_the_owner(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "check");

	(void)state;
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_roles WHERE rolname IN ('cleanup_owner', "
	                               "'cleanup_runner', 'cleanup_writer', 'cleanup_console') AND NOT rolcanlogin"),
	                 4);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_namespace WHERE nspname IN ('cleanup', 'inventory') "
	                               "AND nspowner <> 'cleanup_owner'::regrole"),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_class WHERE relnamespace IN "
	                               "('cleanup'::regnamespace, 'inventory'::regnamespace) "
	                               "AND relowner <> 'cleanup_owner'::regrole"),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_proc WHERE pronamespace = 'cleanup'::regnamespace "
	                               "AND proowner <> 'cleanup_owner'::regrole"),
	                 0);
	/* No function of the engine is executable by PUBLIC. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_proc p, aclexplode(coalesce(p.proacl, "
	                               "acldefault('f', p.proowner))) a "
	                               "WHERE p.pronamespace = 'cleanup'::regnamespace AND a.grantee = 0"),
	                 0);
	/* A second install with the same bundle changes nothing and fails nothing. */
	{
		cleanup_engine *e = pgtest_engine(conninfo);
		cleanup_install_result r;
		cleanup_error err;

		assert_int_equal(cleanup_install(&r, e, &err), CLEANUP_OK);
		cleanup_engine_close(e);
	}
	PQfinish(c);
}

/* Every trigger function on the inventory tables (the admission and
 * parent guards) is SECURITY DEFINER with search_path fixed to
 * pg_catalog, pg_temp: it does the cleanup.* work for a writer that has
 * no privilege there, and the caller's search_path cannot redirect it. */
static void test_guards_are_security_definer_with_fixed_search_path(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "check");
	char *bad;

	(void)state;
	bad = pgtest_text(c, "SELECT string_agg(DISTINCT p.proname, ', ') FROM pg_trigger t "
	                     "JOIN pg_proc p ON p.oid = t.tgfoid "
	                     "WHERE t.tgrelid IN ('inventory.items'::regclass, 'inventory.libraries'::regclass, "
	                     "'inventory.media_servers'::regclass) AND NOT t.tgisinternal "
	                     "AND NOT (p.prosecdef AND 'search_path=pg_catalog, pg_temp' = ANY (p.proconfig))");
	if (bad)
		fprintf(stderr, "guards without SECURITY DEFINER / search_path: %s\n", bad);
	assert_null(bad);
	/* The job API too. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_proc WHERE pronamespace = 'cleanup'::regnamespace "
	                               "AND proname IN ('job_create', 'job_append', 'job_seal', 'job_transition', "
	                               "'job_step', 'job_step_preview', 'job_note_busy', 'job_step_replay', "
	                               "'status_json', 'jobs_json', 'job_show_json', 'audit_record', 'contract_watch') "
	                               "AND prosecdef AND 'search_path=pg_catalog, pg_temp' = ANY (proconfig)"),
	                 13);
	PQfinish(c);
}

/* Defect 4, the exploit: a writer tried to reopen a library fenced by a
 * removal (UPDATE cleanup.library_admission SET state = 'open') and then
 * to write into it. Now the UPDATE is refused (no access to schema
 * cleanup), the library stays fenced, the write stays rejected (CUA01),
 * and the removal completes with nothing of the writer's lost. */
static void test_A1_writer_cannot_reopen_fenced_library(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	PGconn *w = pgtest_connect(as_writer, "sync-writer");
	int64_t job;

	(void)state;
	job = pgtest_job_create(o, "remove-library", 2);
	pgtest_fails(w, "CUA01", NULL, "INSERT INTO inventory.items (library_id, external_id) VALUES (2, 'late-1')");
	pgtest_fails(w, "42501", NULL,
	             "UPDATE cleanup.library_admission SET state = 'open', job_id = NULL "
	             "WHERE library_id = 2");
	pgtest_fails(w, "42501", NULL, "UPDATE cleanup.server_admission SET state = 'open'");
	assert_text_equal(pgtest_text(o, "SELECT state FROM cleanup.library_admission WHERE library_id = 2"),
	                    "draining");
	pgtest_fails(w, "CUA01", NULL, "INSERT INTO inventory.items (library_id, external_id) VALUES (2, 'late-2')");
	/* Moving an item into the fenced library is refused as before. */
	pgtest_fails(w, "CUA01", NULL, "UPDATE inventory.items SET library_id = 2 WHERE external_id = 'ext-1-1'");

	pgtest_cli_expect(0, as_runner, "job run %lld", (long long)job);
	assert_text_equal(pgtest_text(o, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                    "completed");
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE external_id LIKE 'late-%%'"), 0);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM inventory.libraries WHERE id = 2"), 0);
	/* The item the writer tried to move in is still in library 1. */
	assert_int_equal(pgtest_int(o, "SELECT library_id FROM inventory.items WHERE external_id = 'ext-1-1'"), 1);
	pgtest_close_all(w, o, NULL);
}

/* The writer's ordinary work passes through the guards, which do the
 * cleanup.* bookkeeping (admission locks, counts, admission rows) as
 * cleanup_owner: inserts, updates and moves in open libraries, new
 * servers and libraries. It may not delete or truncate inventory. */
static void test_writer_writes_inventory_through_the_guards(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	PGconn *w = pgtest_connect(as_writer, "sync-writer");
	int64_t before3, before4, lib, srv;

	(void)state;
	before3 = pgtest_int(o, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = 3");
	before4 = pgtest_int(o, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = 4");
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id, title) VALUES (3, 'w-new', 'New')");
	pgtest_exec(w, "UPDATE inventory.items SET title = 'Retitled' WHERE library_id = 3 AND external_id = 'w-new'");
	pgtest_exec(w, "UPDATE inventory.items SET library_id = 4 WHERE library_id = 3 AND external_id = 'ext-3-1'");
	assert_int_equal(pgtest_int(o, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = 3"), before3);
	assert_int_equal(pgtest_int(o, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = 4"),
	                 before4 + 1);
	srv = pgtest_int(w, "INSERT INTO inventory.media_servers (name) VALUES ('writer-server') RETURNING id");
	lib = pgtest_int(w, "INSERT INTO inventory.libraries (server_id, name) VALUES (%lld, 'Writer') RETURNING id",
	                 (long long)srv);
	assert_text_equal(pgtest_text(o, "SELECT state FROM cleanup.library_admission WHERE library_id = %lld",
	                                (long long)lib),
	                    "open");
	assert_text_equal(pgtest_text(o, "SELECT state FROM cleanup.server_admission WHERE server_id = %lld",
	                                (long long)srv),
	                    "open");
	/* The immutability guard still answers with its own SQLSTATE. */
	pgtest_fails(w, "CUA04", NULL, "UPDATE inventory.items SET external_id = 'x' WHERE external_id = 'w-new'");
	/* Removal is a cleanup job's: no DELETE, no TRUNCATE for a writer. */
	pgtest_fails(w, "42501", NULL, "DELETE FROM inventory.items WHERE external_id = 'w-new'");
	pgtest_fails(w, "42501", NULL, "TRUNCATE inventory.items");
	pgtest_fails(w, "42501", NULL, "DELETE FROM inventory.libraries WHERE id = %lld", (long long)lib);
	/* DDL of any role fires the contract's DDL watch, which must not need
	 * the caller's access to schema cleanup. */
	pgtest_exec(w, "CREATE TEMP TABLE writer_scratch (a int)");
	pgtest_close_all(w, o, NULL);
}

/* A writer has no access at all to schema cleanup: not its tables, not
 * its functions, not even USAGE. */
static void test_writer_has_no_access_to_cleanup(void **state)
{
	static const char *const denied[] = {
	    "SELECT * FROM cleanup.jobs",
	    "SELECT * FROM cleanup.library_admission",
	    "SELECT cleanup.job_create('prune', 5)",
	    "SELECT cleanup.log_event(NULL, 'x', 'y')",
	    "SELECT cleanup.admit_libraries(ARRAY[5]::bigint[])",
	    NULL,
	};
	PGconn *w = pgtest_connect(as_writer, "sync-writer");

	(void)state;
	assert_int_equal(pgtest_int(w, "SELECT has_schema_privilege('cleanup', 'USAGE')::int"), 0);
	expect_denied(w, denied);
	PQfinish(w);
}

/* Visits library LIB as the owner until its count is fresh; returns it. */
static int64_t settle_count(PGconn *o, int64_t lib)
{
	int i;

	for (i = 0; i < 10; i++) {
		char *state = pgtest_text(o, "SELECT cleanup.count_visit(%lld) ->> 'state'", (long long)lib);
		bool fresh = state && strcmp(state, "fresh") == 0;

		free(state);
		if (fresh)
			return pgtest_int(o, "SELECT (cleanup.count_visit(%lld) ->> 'count')::bigint", (long long)lib);
	}
	fail_msg("library %lld: no fresh count after 10 visits", (long long)lib);
	return -1;
}

/* Runs SQL on C, which must fail; returns its SQLSTATE and copies the
 * primary message and the hint (empty when none) to MSG and HINT. */
static const char *fail_with_hint(PGconn *c, char *msg, char *hint, size_t len, const char *sql)
{
	static char state[6];
	PGresult *r = PQexec(c, sql);
	const char *s = PQresultErrorField(r, PG_DIAG_SQLSTATE), *m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY),
	           *h = PQresultErrorField(r, PG_DIAG_MESSAGE_HINT);

	if (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
		fail_msg("SQL succeeded but should have failed: %s", sql);
	snprintf(state, sizeof state, "%s", s ? s : "");
	snprintf(msg, len, "%s", m ? m : "");
	snprintf(hint, len, "%s", h ? h : "");
	PQclear(r);
	return state;
}

/* K3 for a writer login: a login in cleanup_writer,
 * with no access to schema cleanup, writes to libraries the count cache
 * watches through the gateway wrappers of schema inventory
 * (inventory.write_items, and inventory.count_declare before plain SQL in
 * the same transaction: the locks a definer function takes are the
 * caller's transaction's). Its undeclared plain write is refused with
 * CU410 and a hint naming the gateway; a bad batch is refused naming the
 * value and the rule, with nothing written; the counts stay exact. Only
 * the owner and cleanup_writer may execute the wrappers. */
static void test_K3_writer_login_writes_watched_library_through_gateway(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	PGconn *w = pgtest_connect(as_writer, "sync-writer");
	PGconn *r = pgtest_connect(as_runner, "runner");
	char msg[512], hint[512], sql[16384];
	int64_t srv, a, b, item, before_a, before_b;
	size_t n;
	int i;

	(void)state;
	srv = pgtest_int(o, "INSERT INTO inventory.media_servers (name) VALUES ('gateway-server') RETURNING id");
	a = pgtest_int(o, "INSERT INTO inventory.libraries (server_id, name) VALUES (%lld, 'GA') RETURNING id",
	               (long long)srv);
	b = pgtest_int(o, "INSERT INTO inventory.libraries (server_id, name) VALUES (%lld, 'GB') RETURNING id",
	               (long long)srv);
	pgtest_exec(o, "INSERT INTO inventory.items (library_id, external_id) SELECT %lld, 'ga-' || g "
	               "FROM generate_series(1, 30) g",
	            (long long)a);
	pgtest_exec(o, "INSERT INTO inventory.items (library_id, external_id) SELECT %lld, 'gb-' || g "
	               "FROM generate_series(1, 20) g",
	            (long long)b);
	assert_int_equal(settle_count(o, a), 30);
	assert_int_equal(settle_count(o, b), 20);

	/* Still no access to schema cleanup, its gateway included. */
	assert_int_equal(pgtest_int(w, "SELECT has_schema_privilege('cleanup', 'USAGE')::int"), 0);
	pgtest_fails(w, "42501", NULL, "SELECT cleanup.write_items('[]')");
	pgtest_fails(w, "42501", NULL, "SELECT cleanup.count_declare(ARRAY[1]::bigint[])");

	/* Through the gateway: an insert and a move. */
	item = pgtest_int(w, "SELECT (inventory.write_items(jsonb_build_array(jsonb_build_object('op', 'insert', "
	                     "'library_id', %lld, 'external_id', 'gw-1', 'title', 'Gateway'))) -> 'inserted' -> 0 "
	                     "->> 'id')::bigint",
	                  (long long)a);
	assert_true(item > 0);
	pgtest_exec(w, "SELECT inventory.write_items(jsonb_build_array(jsonb_build_object('op', 'replace', "
	               "'item_id', %lld, 'expected_library_id', %lld, 'library_id', %lld, 'title', 'Moved', "
	               "'media_type', 'movie')))",
	            (long long)item, (long long)a, (long long)b);
	assert_int_equal(pgtest_int(o, "SELECT library_id FROM inventory.items WHERE id = %lld", (long long)item), b);

	/* Declared locks, then plain SQL, in one transaction. */
	pgtest_begin(w, "SELECT inventory.count_declare(ARRAY[%lld]::bigint[])", (long long)a);
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'gw-declared')",
	            (long long)a);
	pgtest_exec(w, "COMMIT");

	/* Plain SQL without the locks: CU410, the hint names the gateway;
	 * nothing written. A lock declared in another transaction does not
	 * count. */
	before_a = pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)a);
	before_b = pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)b);
	pgtest_exec(w, "SELECT inventory.count_declare(ARRAY[%lld]::bigint[])", (long long)a);
	snprintf(sql, sizeof sql, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'gw-plain')",
	         (long long)a);
	assert_string_equal(fail_with_hint(w, msg, hint, sizeof msg, sql), "CU410");
	assert_non_null(strstr(msg, "watched by the count cache"));
	assert_non_null(strstr(hint, "inventory.write_items(jsonb)"));
	assert_non_null(strstr(hint, "inventory.count_declare"));
	/* A move with only one side declared. */
	pgtest_begin(w, "SELECT inventory.count_declare(ARRAY[%lld]::bigint[])", (long long)a);
	snprintf(sql, sizeof sql, "UPDATE inventory.items SET library_id = %lld WHERE external_id = 'ga-1'",
	         (long long)b);
	assert_string_equal(fail_with_hint(w, msg, hint, sizeof msg, sql), "CU410");
	pgtest_exec(w, "ROLLBACK");

	/* Bad batches: refused naming the value and the rule, nothing written,
	 * even the good operations before the bad one. */
	n = (size_t)snprintf(sql, sizeof sql, "SELECT inventory.write_items('[");
	for (i = 0; i < 129; i++)
		n += (size_t)snprintf(sql + n, sizeof sql - n, "%s{\"op\": \"insert\", \"library_id\": %lld, "
		                      "\"external_id\": \"big-%d\"}", i ? ", " : "", (long long)a, i);
	snprintf(sql + n, sizeof sql - n, "]')");
	assert_string_equal(fail_with_hint(w, msg, hint, sizeof msg, sql), "CU110");
	assert_non_null(strstr(msg, "129 operations"));
	assert_non_null(strstr(msg, "1 to 128"));
	snprintf(sql, sizeof sql, "SELECT inventory.write_items('[{\"op\": \"insert\", \"library_id\": %lld, "
	         "\"external_id\": \"ok-1\"}, {\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"ok-2\", "
	         "\"updated_at\": \"1999-12-31T00:00:00Z\"}]')",
	         (long long)a, (long long)a);
	assert_string_equal(fail_with_hint(w, msg, hint, sizeof msg, sql), "CU110");
	assert_non_null(strstr(msg, "1999-12-31T00:00:00Z"));
	assert_non_null(strstr(msg, "2000-01-01"));
	snprintf(sql, sizeof sql, "SELECT inventory.write_items('[{\"op\": \"insert\", \"library_id\": 987654, "
	         "\"external_id\": \"nolib\"}]')");
	assert_string_equal(fail_with_hint(w, msg, hint, sizeof msg, sql), "CU111");
	assert_non_null(strstr(msg, "987654"));
	/* Expected membership wrong: the whole batch is refused. */
	snprintf(sql, sizeof sql, "SELECT inventory.write_items('[{\"op\": \"insert\", \"library_id\": %lld, "
	         "\"external_id\": \"mm-1\"}, {\"op\": \"replace\", \"item_id\": %lld, \"expected_library_id\": %lld, "
	         "\"library_id\": %lld, \"title\": \"x\", \"media_type\": \"movie\"}]')",
	         (long long)a, (long long)item, (long long)a, (long long)a);
	assert_string_equal(fail_with_hint(w, msg, hint, sizeof msg, sql), "CU411");
	/* A writer may not delete, through the gateway either. */
	snprintf(sql, sizeof sql, "SELECT inventory.write_items('[{\"op\": \"delete\", \"item_id\": %lld, "
	         "\"expected_library_id\": %lld}]')",
	         (long long)item, (long long)b);
	assert_string_equal(fail_with_hint(w, msg, hint, sizeof msg, sql), "CU412");
	/* Declarations: libraries must exist, a bounded list. */
	assert_string_equal(pgtest_fail(w, msg, sizeof msg, "SELECT inventory.count_declare(ARRAY[987654]::bigint[])"),
	                    "CU111");
	assert_non_null(strstr(msg, "987654"));
	pgtest_fails(w, "CU112", "257 libraries",
	             "SELECT inventory.count_declare(array_agg(g)) "
	             "FROM generate_series(1, 257) g");
	pgtest_fails(w, "CU112", NULL,
	             "SELECT inventory.count_declare(ARRAY[%lld, %lld]::bigint[])",
	             (long long)b, (long long)a);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)a),
	                 before_a);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)b),
	                 before_b);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.engine_locks WHERE key = cleanup.write_key(987654)"),
	                 0);

	/* The counts followed every accepted write. */
	assert_int_equal(settle_count(o, a), before_a);
	assert_int_equal(before_a, 31);
	assert_int_equal(settle_count(o, b), before_b);
	assert_int_equal(before_b, 21);

	/* The wrappers: definer, fixed search_path, owned by cleanup_owner,
	 * executable by cleanup_writer and the owner only. */
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM pg_proc WHERE pronamespace = 'inventory'::regnamespace "
	                               "AND proname IN ('write_items', 'count_declare') AND prosecdef "
	                               "AND 'search_path=pg_catalog, pg_temp' = ANY (proconfig) "
	                               "AND proowner = 'cleanup_owner'::regrole"),
	                 2);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM pg_proc p, aclexplode(coalesce(p.proacl, "
	                               "acldefault('f', p.proowner))) x "
	                               "WHERE p.pronamespace = 'inventory'::regnamespace AND x.privilege_type = 'EXECUTE' "
	                               "AND x.grantee NOT IN ('cleanup_owner'::regrole, 'cleanup_writer'::regrole)"),
	                 0);
	pgtest_fails(r, "42501", NULL, "SELECT inventory.write_items('[]')");
	pgtest_fails(r, "42501", NULL, "SELECT inventory.count_declare(ARRAY[%lld]::bigint[])", (long long)a);

	pgtest_exec(o, "SELECT cleanup.count_release(slot) FROM cleanup.count_registry WHERE library_id IN (%lld, %lld)",
	            (long long)a, (long long)b);
	pgtest_close_all(r, w, o, NULL);
}

/* The runner creates, appends to, seals and runs a prune job end to end
 * through cleanupctl, and the job records the login role that created it
 * (session_user, not the definer). */
static void test_runner_runs_prune_end_to_end(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	char *out = NULL, *id;
	int rc;

	(void)state;
	pgtest_cli_expect(0, as_runner, "--json job create prune --library 5");
	id = pgtest_text(o, "SELECT max(id)::text FROM cleanup.jobs WHERE library_id = 5");
	assert_non_null(id);
	assert_text_equal(pgtest_text(o, "SELECT created_by FROM cleanup.jobs WHERE id = %s", id), RUNNER);
	rc = pgtest_sh(&out, "printf 'ext-5-%%s\\n' 1 2 3 4 5 6 7 | '%s' --db \"%s\" job append %s 2>&1",
	               pgtest_cleanupctl(), as_runner, id);
	assert_int_equal(rc, 0);
	free(out);
	pgtest_cli_expect(0, as_runner, "job seal %s --expected 7", id);
	pgtest_cli_expect(0, as_runner, "job step %s --preview", id);
	pgtest_cli_expect(0, as_runner, "job run %s", id);
	assert_text_equal(pgtest_text(o, "SELECT phase FROM cleanup.jobs WHERE id = %s", id), "completed");
	assert_int_equal(pgtest_int(o, "SELECT deleted FROM cleanup.jobs WHERE id = %s", id), 3);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = 5"), 7);
	assert_text_equal(pgtest_text(o, "SELECT state FROM cleanup.library_admission WHERE library_id = 5"), "open");
	rc = pgtest_cli(&out, as_runner, "--json job show %s", id);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"completed\""));
	free(out);
	free(id);
	PQfinish(o);
}

/* The runner changes nothing except through the job API: no direct
 * writes to cleanup.* or inventory.*, no engine internals, no reading of
 * the items or the manifest. */
static void test_runner_cannot_write_directly(void **state)
{
	static const char *const denied[] = {
	    "UPDATE cleanup.jobs SET phase = 'completed'",
	    "UPDATE cleanup.library_admission SET state = 'open'",
	    "INSERT INTO cleanup.manifest VALUES (1, 'x')",
	    "DELETE FROM cleanup.events",
	    "DELETE FROM inventory.items WHERE library_id = 6",
	    "INSERT INTO inventory.items (library_id, external_id) VALUES (6, 'r')",
	    "SELECT count(*) FROM inventory.items",
	    "SELECT cleanup.step_exec(1, 1, 0, false)",
	    "SELECT cleanup.take_admission('library', 6, 1)",
	    "SELECT cleanup_lab.seed_demo(1, 1, 1)",
	    "SELECT cleanup.contract_record()",
	    NULL,
	};
	PGconn *r = pgtest_connect(as_runner, "runner");

	(void)state;
	expect_denied(r, denied);
	/* What the reports read, it reads. */
	assert_true(pgtest_int(r, "SELECT count(*) FROM cleanup.jobs") >= 0);
	PQfinish(r);
}

/* The console role reads status, jobs and a job's steps, listens, and
 * cannot create, step or change any job. */
static void test_console_reads_but_cannot_act(void **state)
{
	static const char *const denied[] = {
	    "SELECT cleanup.job_create('prune', 6)",
	    "SELECT cleanup.job_transition(1, 'pause')",
	    "SELECT cleanup.job_step(1, 1)",
	    "SELECT cleanup.audit_record('u', 'step', 1, '', 'x')",
	    "UPDATE cleanup.jobs SET phase = 'cancelled'",
	    NULL,
	};
	PGconn *c = pgtest_connect(as_console, "console");
	char *out = NULL;
	int rc;

	(void)state;
	rc = pgtest_cli(&out, as_console, "--json status");
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "\"servers\""));
	free(out);
	pgtest_cli_expect(0, as_console, "--json jobs");
	pgtest_cli_expect(0, as_console, "--json job show 1");
	pgtest_cli_expect(0, as_console, "locks");
	rc = pgtest_cli(&out, as_console, "job create prune --library 6");
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "permission denied"));
	free(out);
	pgtest_exec(c, "LISTEN cleanup_jobs");
	expect_denied(c, denied);
	PQfinish(c);
}

/* console --readonly: the connection string it uses makes every
 * transaction read-only at the server, even for a superuser, whatever
 * options the given conninfo carries, which it keeps. */
static void test_readonly_console_connection_refuses_writes(void **state)
{
	cleanup_error err;
	char *ro = NULL, *given;
	PGconn *c;

	(void)state;
	assert_int_equal(cleanup_conninfo_readonly(&ro, conninfo, &err), CLEANUP_OK);
	c = pgtest_connect(ro, "console-readonly");
	assert_text_equal(pgtest_text(c, "SHOW default_transaction_read_only"), "on");
	assert_text_equal(pgtest_text(c, "SELECT current_user"), "postgres");
	pgtest_fails(c, "25006", NULL, "INSERT INTO inventory.items (library_id, external_id) VALUES (6, 'ro')");
	pgtest_fails(c, "25006", NULL, "SELECT cleanup.job_create('prune', 6)");
	pgtest_exec(c, "LISTEN cleanup_jobs");
	PQfinish(c);
	free(ro);

	/* Options of the given conninfo are kept; ours come last and win. */
	given = malloc(strlen(conninfo) + 128);
	assert_non_null(given);
	sprintf(given, "%s options='-c cleanup.failpoints=seal -c default_transaction_read_only=off'", conninfo);
	assert_int_equal(cleanup_conninfo_readonly(&ro, given, &err), CLEANUP_OK);
	c = pgtest_connect(ro, "console-readonly");
	assert_text_equal(pgtest_text(c, "SHOW default_transaction_read_only"), "on");
	assert_text_equal(pgtest_text(c, "SHOW cleanup.failpoints"), "seal");
	PQfinish(c);
	free(ro);
	free(given);

	/* A conninfo libpq cannot parse is bad input, named. */
	assert_int_equal(cleanup_conninfo_readonly(&ro, "host='unterminated", &err), CLEANUP_EINVAL);
	assert_null(ro);
	assert_non_null(strstr(err.message, "unterminated"));
	/* A bare word is a database name. */
	assert_int_equal(cleanup_conninfo_readonly(&ro, "cleanup_lab_x", &err), CLEANUP_OK);
	assert_non_null(strstr(ro, "dbname='cleanup_lab_x'"));
	free(ro);
}

/* A grant made by hand on schema cleanup (the set-up defect 4 was
 * exploited with: UPDATE on the admission rows for a writer) is drift: a
 * second install with the same bundle names it and revokes it. */
static void test_install_revokes_hand_made_grants_on_cleanup(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	PGconn *w;
	cleanup_engine *e;
	cleanup_install_result r;
	cleanup_error err;

	(void)state;
	pgtest_exec(o, "GRANT USAGE ON SCHEMA cleanup TO %s", WRITER);
	pgtest_exec(o, "GRANT SELECT, UPDATE ON cleanup.library_admission TO %s", WRITER);
	w = pgtest_connect(as_writer, "sync-writer");
	pgtest_exec(w, "UPDATE cleanup.library_admission SET changed_at = now() WHERE library_id = 6");
	PQfinish(w);

	e = pgtest_engine(conninfo);
	assert_int_equal(cleanup_install(&r, e, &err), CLEANUP_OK);
	cleanup_engine_close(e);
	assert_true(r.contract_repaired);
	assert_non_null(strstr(r.drift, "privileges"));

	w = pgtest_connect(as_writer, "sync-writer");
	pgtest_fails(w, "42501", NULL, "UPDATE cleanup.library_admission SET state = 'open' WHERE library_id = 6");
	PQfinish(w);
	assert_int_equal(pgtest_int(o, "SELECT has_schema_privilege('%s', 'cleanup', 'USAGE')::int", WRITER), 0);
	/* And the next install finds nothing to repair. */
	e = pgtest_engine(conninfo);
	assert_int_equal(cleanup_install(&r, e, &err), CLEANUP_OK);
	cleanup_engine_close(e);
	assert_false(r.contract_repaired);
	PQfinish(o);
}

PGTEST_MAIN(cmocka_unit_test(test_install_creates_roles_and_hands_objects_to_the_owner),
            cmocka_unit_test(test_guards_are_security_definer_with_fixed_search_path),
            cmocka_unit_test(test_A1_writer_cannot_reopen_fenced_library),
            cmocka_unit_test(test_writer_writes_inventory_through_the_guards),
            cmocka_unit_test(test_writer_has_no_access_to_cleanup),
            cmocka_unit_test(test_K3_writer_login_writes_watched_library_through_gateway),
            cmocka_unit_test(test_runner_runs_prune_end_to_end),
            cmocka_unit_test(test_runner_cannot_write_directly),
            cmocka_unit_test(test_console_reads_but_cannot_act),
            cmocka_unit_test(test_readonly_console_connection_refuses_writes),
            cmocka_unit_test(test_install_revokes_hand_made_grants_on_cleanup))
