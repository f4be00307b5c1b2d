/* Jobs up to sealing against the real PostgreSQL (C1-C8): the server
 * functions called as any client would, and the engine API the CLI and the
 * console use. Every refusal is checked for its SQLSTATE or status, for a
 * message naming the value and the rule, and for leaving the data as it was
 * (pgtest_fingerprint before and after).
 *
 * Data: cleanup_lab.seed_demo(2, 2, 10): server 1 holds libraries 1 and 2,
 * server 2 holds libraries 3 and 4; each library has ext-<lib>-1..10. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/job.h"
#include "pgtest.h"

static char *conninfo;
static PGconn *db;

static int setup(void **state)
{
	(void)state;
	conninfo = pgtest_fresh_db("jobs");
	db = pgtest_connect(conninfo, "test_jobs");
	pgtest_exec(db, "SELECT cleanup_lab.seed_demo(2, 2, 10)");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	PQfinish(db);
	free(conninfo);
	return 0;
}

/* Each test starts without unfinished jobs (C7 would refuse a new one). */
static int reset(void **state)
{
	(void)state;
	pgtest_exec(db, "UPDATE cleanup.library_admission SET state = 'open', job_id = NULL");
	pgtest_exec(db, "UPDATE cleanup.server_admission SET state = 'open', job_id = NULL");
	pgtest_exec(db, "UPDATE cleanup.jobs SET phase = 'cancelled' WHERE phase NOT IN ('completed', 'cancelled')");
	return 0;
}

/* FMT formatted (printf-style) into a static buffer: the SQL of one
 * pgtest_refused() call. */
static __attribute__((format(printf, 1, 2))) const char *sqlf(const char *fmt, ...)
{
	static char sql[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof sql, fmt, ap);
	va_end(ap);
	return sql;
}

static int64_t create(const char *kind, int target)
{
	return pgtest_int(db, "SELECT id FROM cleanup.job_create('%s', %d)", kind, target);
}

/* C1: at most 128 IDs a call, in the server function itself. */
static void test_C1_129_ids_refused_by_the_function(void **state)
{
	int64_t job = create("prune", 1);

	(void)state;
	pgtest_refused(db, "CU101",
	               sqlf("SELECT cleanup.job_append(%lld, ARRAY(SELECT 'x-' || g FROM generate_series(1, 129) g))",
	                    (long long)job),
	               "129", "the limit is 128", NULL);
	assert_int_equal(pgtest_int(db, "SELECT added FROM cleanup.job_append(%lld, "
	                                "ARRAY(SELECT 'x-' || g FROM generate_series(1, 128) g))",
	                            (long long)job),
	                 128);
	assert_int_equal(pgtest_int(db, "SELECT manifest_count FROM cleanup.jobs WHERE id = %lld", (long long)job), 128);
}

/* C1: the engine refuses 129 IDs in one call before sending anything; the
 * many-call API splits them into calls of 128. */
static void test_C1_129_ids_through_the_engine(void **state)
{
	const char *ids[129];
	char bufs[129][16];
	cleanup_engine *e = pgtest_engine(conninfo);
	cleanup_append_result r;
	cleanup_append_totals t = {0, 0, 0, -1};
	cleanup_error err;
	char *before, *after;
	int64_t job;
	int i;

	(void)state;
	job = create("prune", 1);
	for (i = 0; i < 129; i++) {
		snprintf(bufs[i], sizeof bufs[i], "e-%d", i);
		ids[i] = bufs[i];
	}
	before = pgtest_fingerprint(db);
	assert_int_equal(cleanup_job_append(&r, e, job, ids, 129, &err), CLEANUP_EINVAL);
	assert_non_null(strstr(err.message, "129"));
	assert_non_null(strstr(err.message, "limit is 128"));
	after = pgtest_fingerprint(db);
	assert_string_equal(before, after);
	assert_int_equal(cleanup_job_append_many(&t, e, job, ids, 129, &err), CLEANUP_OK);
	assert_int_equal(t.calls, 2);
	assert_int_equal(t.added, 129);
	assert_int_equal(t.manifest_count, 129);
	free(before);
	free(after);
	cleanup_engine_close(e);
}

/* C1: empty, over-long, control-character and NULL IDs; one bad ID fails
 * the whole call. */
static void test_C1_bad_ids_change_nothing(void **state)
{
	int64_t job = create("prune", 1);

	(void)state;
	pgtest_refused(db, "CU101", sqlf("SELECT cleanup.job_append(%lld, ARRAY['good', ''])", (long long)job),
	               "#2", "must not be empty", NULL);
	pgtest_refused(db, "CU101", sqlf("SELECT cleanup.job_append(%lld, ARRAY['good', repeat('x', 257)])", (long long)job),
	               "#2", "257 bytes", "limit is 256", NULL);
	/* 129 two-byte characters: within 256 characters, over 256 bytes. */
	pgtest_refused(db, "CU101", sqlf("SELECT cleanup.job_append(%lld, ARRAY[repeat(U&'\\00E9', 129)])", (long long)job),
	               "#1", "258 bytes", NULL);
	pgtest_refused(db, "CU101", sqlf("SELECT cleanup.job_append(%lld, ARRAY['good', E'tab\\there'])", (long long)job),
	               "#2", "control character", NULL);
	pgtest_refused(db, "CU101", sqlf("SELECT cleanup.job_append(%lld, ARRAY['good', E'del\\x7f'])", (long long)job),
	               "control character", NULL);
	pgtest_refused(db, "CU101", sqlf("SELECT cleanup.job_append(%lld, ARRAY['good', U&'nel\\0085'])", (long long)job),
	               "control character", NULL);
	pgtest_refused(db, "CU101", sqlf("SELECT cleanup.job_append(%lld, ARRAY['good', NULL])", (long long)job),
	               "#2", "must not be null", NULL);
	/* 256 bytes exactly is fine. */
	assert_int_equal(pgtest_int(db, "SELECT added FROM cleanup.job_append(%lld, ARRAY[repeat('x', 256)])",
	                            (long long)job),
	                 1);
}

/* C1: invalid UTF-8 never reaches the manifest: the engine refuses it
 * before sending, and the server's encoding check refuses raw bytes (22021,
 * which the engine maps to invalid input). */
static void test_C1_invalid_utf8(void **state)
{
	const char *bad[] = {"ok", "bad-\xff-byte"};
	const char *params[2];
	cleanup_engine *e = pgtest_engine(conninfo);
	cleanup_append_result r;
	cleanup_error err;
	char jbuf[24], *before;
	PGresult *res;
	int64_t job = create("prune", 1);

	(void)state;
	before = pgtest_fingerprint(db);
	assert_int_equal(cleanup_job_append(&r, e, job, bad, 2, &err), CLEANUP_EINVAL);
	assert_non_null(strstr(err.message, "#2"));
	assert_non_null(strstr(err.message, "not valid UTF-8"));
	snprintf(jbuf, sizeof jbuf, "%lld", (long long)job);
	params[0] = jbuf;
	params[1] = "{\"bad-\xff-byte\"}";
	res = PQexecParams(db, "SELECT cleanup.job_append($1::bigint, $2::text[])", 2, NULL, params, NULL, NULL, 0);
	assert_int_equal(PQresultStatus(res), PGRES_FATAL_ERROR);
	assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "22021");
	assert_int_equal(cleanup_status_from_sqlstate("22021"), CLEANUP_EINVAL);
	PQclear(res);
	pgtest_unchanged(db, before);
	cleanup_engine_close(e);
}

/* C2: the manifest is a set; each call reports new vs duplicate IDs, also
 * for duplicates inside one call. */
static void test_C2_duplicates_are_idempotent(void **state)
{
	int64_t job = create("prune", 1);

	(void)state;
	assert_text_equal(pgtest_text(db, "SELECT added || '/' || duplicates FROM cleanup.job_append(%lld, "
	                                    "ARRAY['a', 'b', 'a'])", (long long)job),
	                    "2/1");
	assert_text_equal(pgtest_text(db, "SELECT added || '/' || duplicates FROM cleanup.job_append(%lld, "
	                                    "ARRAY['b', 'c'])", (long long)job),
	                    "1/1");
	assert_text_equal(pgtest_text(db, "SELECT added || '/' || duplicates FROM cleanup.job_append(%lld, "
	                                    "ARRAY['a', 'b', 'c'])", (long long)job),
	                    "0/3");
	assert_int_equal(pgtest_int(db, "SELECT manifest_count FROM cleanup.jobs WHERE id = %lld", (long long)job), 3);
	assert_int_equal(pgtest_int(db, "SELECT count(*) FROM cleanup.manifest WHERE job_id = %lld", (long long)job), 3);
}

/* IDs with characters that mean something in an array literal or to a
 * shell arrive in the manifest exactly as given. */
static void test_C2_ids_round_trip_exactly(void **state)
{
	const char *ids[] = {"has \"quotes\"", "back\\slash", "{brace}", "comma,sep", "inner  spaces",
	                     "NULL", "caf\xc3\xa9 \xe2\x98\x83", "'single'", "$dollar$"};
	size_t n = sizeof ids / sizeof ids[0], i;
	cleanup_engine *e = pgtest_engine(conninfo);
	cleanup_append_totals t = {0, 0, 0, -1};
	cleanup_error err;
	int64_t job = create("prune", 1);

	(void)state;
	assert_int_equal(cleanup_job_append_many(&t, e, job, ids, n, &err), CLEANUP_OK);
	assert_int_equal(t.added, (int64_t)n);
	for (i = 0; i < n; i++) {
		const char *params[2];
		char jbuf[24];
		PGresult *res;

		snprintf(jbuf, sizeof jbuf, "%lld", (long long)job);
		params[0] = jbuf;
		params[1] = ids[i];
		res = PQexecParams(db, "SELECT 1 FROM cleanup.manifest WHERE job_id = $1::bigint AND external_id = $2",
		                   2, NULL, params, NULL, NULL, 0);
		assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
		if (PQntuples(res) != 1)
			fprintf(stderr, "ID [%s] did not arrive as given\n", ids[i]);
		assert_int_equal(PQntuples(res), 1);
		PQclear(res);
	}
	cleanup_engine_close(e);
}

/* C3: a seal with a count that differs from the manifest is refused and
 * changes nothing; the right count seals; sealing twice and appending
 * after the seal are refused (C8: and so is cancelling). */
static void test_C3_seal_needs_the_exact_count(void **state)
{
	char sql[256];
	int64_t job = create("prune", 1);

	(void)state;
	pgtest_exec(db, "SELECT cleanup.job_append(%lld, ARRAY['ext-1-1', 'ext-1-2', 'gone-1'])", (long long)job);
	pgtest_refused(db, "CU402", sqlf("SELECT cleanup.job_seal(%lld, 2)", (long long)job),
	               "expected 2", "holds 3", "nothing changed", NULL);
	pgtest_refused(db, "CU402", sqlf("SELECT cleanup.job_seal(%lld, 4)", (long long)job),
	               "expected 4", "holds 3", NULL);
	pgtest_refused(db, "CU101", sqlf("SELECT cleanup.job_seal(%lld, -1)", (long long)job), "-1", NULL);

	assert_text_equal(pgtest_text(db, "SELECT phase FROM cleanup.job_seal(%lld, 3)", (long long)job), "draining");
	assert_int_equal(pgtest_int(db, "SELECT expected_count FROM cleanup.jobs WHERE id = %lld", (long long)job), 3);
	snprintf(sql, sizeof sql, "draining:%lld", (long long)job);
	assert_text_equal(pgtest_text(db, "SELECT state || ':' || job_id FROM cleanup.library_admission "
	                                    "WHERE library_id = 1"),
	                    sql);

	pgtest_refused(db, "CU400", sqlf("SELECT cleanup.job_seal(%lld, 3)", (long long)job), "already sealed", NULL);
	pgtest_refused(db, "CU400", sqlf("SELECT cleanup.job_append(%lld, ARRAY['late'])", (long long)job),
	               "no longer collecting", NULL);
	pgtest_refused(db, "CU400", sqlf("SELECT cleanup.job_transition(%lld, 'pause')", (long long)job),
	               "only collecting jobs pause", NULL);
	/* C8: once a step deleted anything, the job only goes forward, and the
	 * refusal says what is gone. */
	pgtest_exec(db, "SELECT cleanup.job_step(%lld, 1)", (long long)job);
	assert_true(pgtest_int(db, "SELECT deleted FROM cleanup.jobs WHERE id = %lld", (long long)job) > 0);
	pgtest_refused(db, "CU400", sqlf("SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job),
	               "deletion has started", "rows gone", "recovery resumes forward",
	               NULL);
}

/* C8: a sealed prune and a removal are not a point of no return
 * until their first deletion: cancelled before it, the fence comes down
 * (the library admits writes again), the job is cancelled and the cancel is
 * an audit row. */
static void test_C8_cancel_before_the_first_deletion(void **state)
{
	int64_t prune, removal;

	(void)state;
	prune = create("prune", 1);
	pgtest_exec(db, "SELECT cleanup.job_append(%lld, ARRAY['ext-1-1'])", (long long)prune);
	pgtest_exec(db, "SELECT cleanup.job_seal(%lld, 1)", (long long)prune);
	assert_text_equal(pgtest_text(db, "SELECT phase FROM cleanup.job_transition(%lld, 'cancel')", (long long)prune),
	                    "cancelled");
	assert_text_equal(pgtest_text(db, "SELECT state FROM cleanup.library_admission WHERE library_id = 1"), "open");
	pgtest_exec(db, "INSERT INTO inventory.items (library_id, external_id) VALUES (1, 'after-cancel')");

	removal = create("remove-library", 2);
	assert_text_equal(pgtest_text(db, "SELECT state FROM cleanup.library_admission WHERE library_id = 2"),
	                    "draining");
	assert_text_equal(pgtest_text(db, "SELECT phase FROM cleanup.job_transition(%lld, 'cancel')", (long long)removal),
	                    "cancelled");
	assert_text_equal(pgtest_text(db, "SELECT state FROM cleanup.library_admission WHERE library_id = 2"), "open");
	assert_int_equal(pgtest_int(db, "SELECT count(*) FROM cleanup.audit WHERE action = 'cancel' AND job_id IN (%lld, %lld)",
	                            (long long)prune, (long long)removal),
	                 2);
	pgtest_exec(db, "INSERT INTO inventory.items (library_id, external_id) VALUES (2, 'after-cancel')");
}

/* C5: an empty manifest sealed with expected 0 is the statement that the
 * library is now empty: the job records it (every item up to the
 * high-water id becomes eligible; the step engine deletes them). */
static void test_C5_empty_manifest_sealed_with_zero(void **state)
{
	int64_t job = create("prune", 2);

	(void)state;
	assert_text_equal(pgtest_text(db, "SELECT phase FROM cleanup.job_seal(%lld, 0)", (long long)job), "draining");
	assert_text_equal(pgtest_text(db, "SELECT manifest_count || '/' || expected_count || '/' || "
	                                    "(high_water_id = (SELECT max(id) FROM inventory.items WHERE library_id = 2))"
	                                    " || '/' || total_estimate FROM cleanup.jobs WHERE id = %lld",
	                                (long long)job),
	                    "0/0/true/10");
	assert_int_equal(pgtest_int(db, "SELECT count(*) FROM cleanup.manifest WHERE job_id = %lld", (long long)job), 0);
	assert_text_equal(pgtest_text(db, "SELECT state FROM cleanup.library_admission WHERE library_id = 2"),
	                    "draining");
	/* Every item of the library is at or below the high-water id. */
	assert_int_equal(pgtest_int(db, "SELECT count(*) FROM inventory.items i JOIN cleanup.jobs j ON j.id = %lld "
	                                "WHERE i.library_id = 2 AND i.id <= j.high_water_id", (long long)job),
	                 10);
}

/* C8 and pause/resume: a paused job refuses appends and seals; resumed,
 * it collects again; collecting and paused jobs can be cancelled, once. */
static void test_C8_pause_resume_cancel(void **state)
{
	int64_t job = create("prune", 3);

	(void)state;
	assert_text_equal(pgtest_text(db, "SELECT phase FROM cleanup.job_transition(%lld, 'pause')", (long long)job),
	                    "paused");
	pgtest_refused(db, "CU400", sqlf("SELECT cleanup.job_append(%lld, ARRAY['x'])", (long long)job),
	               "is paused", NULL);
	pgtest_refused(db, "CU400", sqlf("SELECT cleanup.job_seal(%lld, 0)", (long long)job), "is paused", NULL);
	pgtest_refused(db, "CU400", sqlf("SELECT cleanup.job_transition(%lld, 'pause')", (long long)job),
	               "only collecting jobs pause", NULL);
	assert_text_equal(pgtest_text(db, "SELECT phase FROM cleanup.job_transition(%lld, 'resume')", (long long)job),
	                    "collecting");
	assert_int_equal(pgtest_int(db, "SELECT added FROM cleanup.job_append(%lld, ARRAY['x'])", (long long)job), 1);
	pgtest_refused(db, "CU400", sqlf("SELECT cleanup.job_transition(%lld, 'resume')", (long long)job),
	               "only paused jobs resume", NULL);
	/* Paused jobs can be cancelled too. */
	pgtest_exec(db, "SELECT cleanup.job_transition(%lld, 'pause')", (long long)job);
	assert_text_equal(pgtest_text(db, "SELECT phase FROM cleanup.job_transition(%lld, 'cancel')", (long long)job),
	                    "cancelled");
	assert_int_equal(pgtest_int(db, "SELECT count(*) FROM cleanup.jobs WHERE id = %lld AND finished_at IS NOT NULL",
	                            (long long)job),
	                 1);
	pgtest_refused(db, "CU400", sqlf("SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job),
	               "already ended", NULL);
	pgtest_refused(db, "CU400", sqlf("SELECT cleanup.job_append(%lld, ARRAY['y'])", (long long)job),
	               "no longer collecting", NULL);
	/* A cancelled collecting job never fenced anything. */
	assert_text_equal(pgtest_text(db, "SELECT state FROM cleanup.library_admission WHERE library_id = 3"), "open");
}

/* C7: one unfinished job per server, collecting jobs included, enforced
 * by the database; the refusal names the job in the way; other servers
 * are independent; a finished job frees the server. */
static void test_C7_one_unfinished_job_per_server(void **state)
{
	char name[32];
	int64_t a, b;

	(void)state;
	a = create("prune", 1);
	snprintf(name, sizeof name, "job %lld", (long long)a);
	pgtest_refused(db, "CU401", "SELECT cleanup.job_create('prune', 2)",
	               "server 1 already has unfinished", name, "collecting", NULL);
	pgtest_refused(db, "CU401", "SELECT cleanup.job_create('remove-library', 1)", name, NULL);
	pgtest_refused(db, "CU401", "SELECT cleanup.job_create('remove-server', 1)", name, NULL);
	/* The unique partial index holds even for a writer bypassing the
	 * function. */
	pgtest_refused(db, "23505",
	               "INSERT INTO cleanup.jobs (kind, server_id, library_id, target_name, phase) "
	               "VALUES ('prune', 1, 2, 'x', 'collecting')",
	               "jobs_one_unfinished_per_server", NULL);
	/* Another server is independent. */
	b = create("prune", 3);
	assert_true(b > a);
	/* A paused job still holds its server. */
	pgtest_exec(db, "SELECT cleanup.job_transition(%lld, 'pause')", (long long)a);
	pgtest_refused(db, "CU401", "SELECT cleanup.job_create('prune', 2)", name, "paused", NULL);
	pgtest_exec(db, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)a);
	assert_true(create("prune", 2) > b);
}

/* Parent removal jobs close admission at once (A1, A5, A6). */
static void test_removal_jobs_fence_immediately(void **state)
{
	char msg[512];
	int64_t job = create("remove-library", 2);

	(void)state;
	assert_text_equal(pgtest_text(db, "SELECT phase || '/' || (sealed_at IS NOT NULL) FROM cleanup.jobs "
	                                    "WHERE id = %lld", (long long)job),
	                    "draining/true");
	assert_text_equal(pgtest_text(db, "SELECT state FROM cleanup.library_admission WHERE library_id = 2"),
	                    "draining");
	pgtest_fails(db, "CUA01", "library 2",
	             "INSERT INTO inventory.items (library_id, external_id) VALUES (2, 'late')");
	/* The other library of the same server still admits writes. */
	pgtest_exec(db, "INSERT INTO inventory.items (library_id, external_id) VALUES (1, 'fine-1')");
	reset(NULL);

	job = create("remove-server", 2);
	assert_text_equal(pgtest_text(db, "SELECT state FROM cleanup.server_admission WHERE server_id = 2"),
	                    "draining");
	assert_int_equal(pgtest_int(db, "SELECT count(*) FROM cleanup.library_admission "
	                                "WHERE server_id = 2 AND state = 'draining' AND job_id = %lld",
	                            (long long)job),
	                 2);
	assert_string_equal(pgtest_fail(db, msg, sizeof msg,
	                                "INSERT INTO inventory.libraries (server_id, name) VALUES (2, 'New')"),
	                    "CUA01");
	assert_non_null(strstr(msg, "server 2"));
	assert_non_null(strstr(msg, "no new library"));
	pgtest_exec(db, "INSERT INTO inventory.libraries (server_id, name) VALUES (1, 'New on 1')");
}

/* An unknown job id: CU001 naming it, for every verb; unknown targets and
 * kinds too. */
static void test_unknown_job_and_target(void **state)
{
	cleanup_engine *e = pgtest_engine(conninfo);
	cleanup_job job;
	cleanup_error err;

	(void)state;
	pgtest_refused(db, "CU001", "SELECT cleanup.job_append(999999, ARRAY['a'])",
	               "job 999999 does not exist", NULL);
	pgtest_refused(db, "CU001", "SELECT cleanup.job_seal(999999, 0)", "job 999999 does not exist", NULL);
	pgtest_refused(db, "CU001", "SELECT cleanup.job_transition(999999, 'pause')",
	               "job 999999 does not exist", NULL);
	pgtest_refused(db, "CU001", "SELECT cleanup.job_show_json(999999)", "job 999999 does not exist",
	               NULL);
	pgtest_refused(db, "CU001", "SELECT cleanup.job_create('prune', 424242)",
	               "library 424242 does not exist", NULL);
	pgtest_refused(db, "CU001", "SELECT cleanup.job_create('remove-server', 424242)",
	               "server 424242 does not exist", NULL);
	pgtest_refused(db, "CU101", "SELECT cleanup.job_create('shred', 1)", "unknown job kind shred", NULL);
	assert_int_equal(cleanup_job_get(&job, e, 999999, &err), CLEANUP_ENOTFOUND);
	assert_non_null(strstr(err.message, "999999"));
	assert_int_equal(cleanup_job_seal(&job, e, 999999, 0, &err), CLEANUP_ENOTFOUND);
	assert_string_equal(err.sqlstate, "CU001");
	assert_int_equal(cleanup_exit_code(err.status), 1);
	cleanup_engine_close(e);
}

/* The engine's records keep the cause: SQLSTATE, message, hint, context,
 * and the status that becomes the exit code. */
static void test_engine_error_records(void **state)
{
	cleanup_engine *e = pgtest_engine(conninfo);
	cleanup_job a, b;
	cleanup_error err;

	(void)state;
	assert_int_equal(cleanup_job_create(&a, e, "prune", 1, NULL, &err), CLEANUP_OK);
	assert_string_equal(a.phase, "collecting");
	assert_non_null(strstr(a.json, "\"phase\": \"collecting\""));
	assert_int_equal(cleanup_job_create(&b, e, "prune", 2, NULL, &err), CLEANUP_EREFUSED);
	assert_string_equal(err.sqlstate, "CU401");
	assert_non_null(strstr(err.hint, "finish or cancel job"));
	assert_non_null(strstr(err.context, "creating a prune job"));
	assert_int_equal(cleanup_exit_code(err.status), 4);
	assert_int_equal(cleanup_job_seal(&b, e, a.id, 5, &err), CLEANUP_EREFUSED);
	assert_string_equal(err.sqlstate, "CU402");
	cleanup_job_reset(&a);
	cleanup_engine_close(e);
}

/* B1: an append never waits without bound: a job row held elsewhere makes
 * it busy (55P03, exit 3) after the function's lock_timeout (10 s; 300 ms
 * here), and nothing changes. */
static void test_B1_append_wait_is_bounded(void **state)
{
	PGconn *holder = pgtest_connect(conninfo, "holder");
	int64_t job = create("prune", 1);

	(void)state;
	pgtest_exec(db, "ALTER FUNCTION cleanup.job_append(bigint, text[]) SET lock_timeout = '300ms'");
	pgtest_begin(holder, "SELECT 1 FROM cleanup.jobs WHERE id = %lld FOR UPDATE", (long long)job);
	pgtest_refused(db, "55P03", sqlf("SELECT cleanup.job_append(%lld, ARRAY['a'])", (long long)job),
	               "stayed locked by another transaction for 300ms",
	               "nothing was appended", NULL);
	pgtest_exec(holder, "ROLLBACK");
	pgtest_exec(db, "ALTER FUNCTION cleanup.job_append(bigint, text[]) SET lock_timeout = '10s'");
	assert_int_equal(pgtest_int(db, "SELECT added FROM cleanup.job_append(%lld, ARRAY['a'])", (long long)job), 1);
	PQfinish(holder);
}

PGTEST_MAIN(cmocka_unit_test_setup(test_C1_129_ids_refused_by_the_function, reset),
            cmocka_unit_test_setup(test_C1_129_ids_through_the_engine, reset),
            cmocka_unit_test_setup(test_C1_bad_ids_change_nothing, reset),
            cmocka_unit_test_setup(test_C1_invalid_utf8, reset),
            cmocka_unit_test_setup(test_C2_duplicates_are_idempotent, reset),
            cmocka_unit_test_setup(test_C2_ids_round_trip_exactly, reset),
            cmocka_unit_test_setup(test_C3_seal_needs_the_exact_count, reset),
            cmocka_unit_test_setup(test_C5_empty_manifest_sealed_with_zero, reset),
            cmocka_unit_test_setup(test_C8_pause_resume_cancel, reset),
            cmocka_unit_test_setup(test_C8_cancel_before_the_first_deletion, reset),
            cmocka_unit_test_setup(test_C7_one_unfinished_job_per_server, reset),
            cmocka_unit_test_setup(test_removal_jobs_fence_immediately, reset),
            cmocka_unit_test_setup(test_unknown_job_and_target, reset),
            cmocka_unit_test_setup(test_engine_error_records, reset),
            cmocka_unit_test_setup(test_B1_append_wait_is_bounded, reset))
