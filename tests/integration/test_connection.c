/* Connections that fail: a conninfo that does not connect (exit 1 and a
 * message naming it), and a connection lost in the middle of a command (a
 * `job append` waiting on the job row when its backend is terminated: exit
 * 1, "lost the connection", nothing changed). Stopping the whole server
 * mid-command is in tests/cli/test_sandbox.sh, on a private sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/job.h"
#include "pgtest.h"

PGTEST_DB_GROUP(conninfo, pgtest_seeded_db("connection", 1, 1, 5))

/* Conninfos that do not connect: exit 1, the conninfo and libpq's reason
 * in the message, also as a --json error document. */
static void test_conninfo_that_does_not_connect(void **state)
{
	const char *bin = pgtest_cleanupctl();
	char *out = NULL, *nodb;

	(void)state;
	assert_int_equal(pgtest_sh(&out, "'%s' --db 'host=/nonexistent/cleanupctl port=5 dbname=cleanup_lab' status 2>&1",
	                           bin),
	                 1);
	assert_non_null(strstr(out, "cannot connect to the database (host=/nonexistent/cleanupctl port=5"));
	assert_non_null(strstr(out, "No such file or directory"));
	free(out);

	nodb = pgtest_conninfo("cleanup_lab_t_no_such_db");
	assert_int_equal(pgtest_sh(&out, "'%s' --db \"%s\" job show 1 2>&1", bin, nodb), 1);
	assert_non_null(strstr(out, "database \"cleanup_lab_t_no_such_db\" does not exist"));
	free(out);
	free(nodb);

	assert_int_equal(pgtest_sh(&out, "'%s' --db 'host=/tmp nonsense' status 2>&1", bin), 1);
	assert_non_null(strstr(out, "cannot connect"));
	assert_non_null(strstr(out, "nonsense"));
	free(out);

	assert_int_equal(pgtest_sh(&out, "'%s' --json --db 'host=/nonexistent/cleanupctl' jobs 2>/dev/null", bin), 1);
	assert_non_null(strstr(out, "\"status\": \"connection\""));
	assert_non_null(strstr(out, "\"exit_code\": 1"));
	free(out);

	assert_int_equal(pgtest_sh(&out, "'%s' --db 2>&1", bin), 2);
	assert_non_null(strstr(out, "--db needs a conninfo"));
	free(out);
}

/* The server ends the backend of a `job append` that waits on the job row
 * (another session holds it): the command reports the lost connection,
 * exits 1, and the manifest and job are unchanged. */
static void test_append_loses_its_connection_mid_command(void **state)
{
	PGconn *holder = pgtest_connect(conninfo, "holder");
	PGconn *o = pgtest_connect(conninfo, "observer");
	char app[64], *before, *after, *out = NULL;
	int64_t job;
	int pid, backend;

	(void)state;
	job = pgtest_job_create(o, "prune", 1);
	before = pgtest_fingerprint(o);
	pgtest_begin(holder, "SELECT 1 FROM cleanup.jobs WHERE id = %lld FOR UPDATE", (long long)job);
	pid = pgtest_spawn("'%s' --db \"%s\" job append %lld a b c", pgtest_cleanupctl(), conninfo, (long long)job);
	snprintf(app, sizeof app, "cleanupctl:job:%lld:append", (long long)job);
	backend = pgtest_wait_app_blocked(o, app, 20000);
	assert_true(pgtest_int(o, "SELECT pg_terminate_backend(%d)::int", backend) == 1);
	assert_int_equal(pgtest_wait(pid, &out), 1);
	assert_non_null(strstr(out, "lost the connection to the database while appending to job"));
	assert_non_null(strstr(out, "terminating connection due to administrator command"));
	free(out);
	pgtest_exec(holder, "ROLLBACK");
	after = pgtest_fingerprint(o);
	assert_string_equal(before, after);
	/* The job is intact and takes the same append afterwards. */
	assert_int_equal(pgtest_sh(NULL, "'%s' --db \"%s\" job append %lld a b c", pgtest_cleanupctl(), conninfo,
	                           (long long)job),
	                 0);
	assert_int_equal(pgtest_int(o, "SELECT manifest_count FROM cleanup.jobs WHERE id = %lld", (long long)job), 3);
	pgtest_exec(o, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job);
	free(before);
	free(after);
	pgtest_close_all(holder, o, NULL);
}

/* Through the engine: a terminated idle connection makes the next call
 * fail with ECONN ("lost the connection"), and a reconnect resumes. */
static void test_engine_reports_lost_connection(void **state)
{
	cleanup_engine *e = pgtest_engine(conninfo);
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_job job;
	cleanup_error err;
	int64_t id;

	(void)state;
	id = pgtest_job_create(o, "prune", 1);
	assert_int_equal(pgtest_int(o, "SELECT pg_terminate_backend(%d)::int", cleanup_engine_backend_pid(e)), 1);
	assert_int_equal(cleanup_job_get(&job, e, id, &err), CLEANUP_ECONN);
	assert_non_null(strstr(err.message, "lost the connection to the database"));
	assert_int_equal(cleanup_exit_code(err.status), 1);
	assert_false(cleanup_engine_ok(e));
	assert_int_equal(cleanup_engine_reconnect(e, &err), CLEANUP_OK);
	assert_int_equal(cleanup_job_get(&job, e, id, &err), CLEANUP_OK);
	assert_string_equal(job.phase, "collecting");
	cleanup_job_reset(&job);
	pgtest_exec(o, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)id);
	cleanup_engine_close(e);
	PQfinish(o);
}

PGTEST_MAIN(cmocka_unit_test(test_conninfo_that_does_not_connect),
            cmocka_unit_test(test_append_loses_its_connection_mid_command),
            cmocka_unit_test(test_engine_reports_lost_connection))
