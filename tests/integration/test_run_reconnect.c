/* A run keeps its step commit mode across a reconnect (after
 * Ctrl-C was made safe): cleanup_engine_reconnect() opens a new session,
 * which has none of the old one's settings, so a `job run` whose backend
 * was terminated used to go on with cleanup.step_synchronous_commit unset:
 * its later drain steps committed synchronously although the run was told
 * otherwise. The run now sets cleanup_run_opts.step_commit again after
 * every reconnect. The backend is terminated from the run's own progress
 * callback (after step 1), which returns once the backend has exited
 * (pg_terminate_backend with a timeout): no timing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/job.h"
#include "cleanup/step.h"
#include "pgtest.h"

PGTEST_DB_GROUP(conninfo, pgtest_seeded_db("run_reconnect", 1, 3, 1000))

typedef struct killer {
	cleanup_engine *e;
	PGconn *observer;
	int killed_pid;
} killer;

/* After the first step: terminates the run's backend once, so the run's
 * next call finds the connection lost. */
static bool kill_after_first_step(const cleanup_run_progress *p, void *arg)
{
	killer *k = arg;
	int pid = cleanup_engine_backend_pid(k->e);

	if (k->killed_pid || !p->step || p->steps_done < 1)
		return true;
	k->killed_pid = pid;
	/* With a timeout, pg_terminate_backend() returns once the backend has
	 * exited (true), so the next call of the run finds it gone. */
	assert_int_equal(pgtest_int(k->observer, "SELECT pg_terminate_backend(%d, 60000)::int", pid), 1);
	assert_int_equal(pgtest_int(k->observer, "SELECT count(*) FROM pg_stat_activity WHERE pid = %d", pid), 0);
	return true;
}

/* Runs a sealed prune of library LIB to completion with STEP_COMMIT, its
 * backend terminated after step 1; returns the run's session value of
 * cleanup.step_synchronous_commit at the end (malloc'd; NULL when unset). */
static char *run_with_a_reconnect(int64_t lib, int step_commit)
{
	cleanup_engine *e = pgtest_engine(conninfo);
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_run_summary sum;
	cleanup_run_opts opts;
	cleanup_error err;
	killer k = {e, o, 0};
	int64_t job;
	char *setting;

	job = pgtest_job_create(o, "prune", lib);
	pgtest_exec(o, "SELECT cleanup.job_append(%lld, ARRAY['ext-%lld-1'])", (long long)job, (long long)lib);
	pgtest_exec(o, "SELECT cleanup.job_seal(%lld, 1)", (long long)job);
	memset(&opts, 0, sizeof opts);
	opts.max_reconnects = 3;
	opts.step_commit = step_commit;
	opts.callback = kill_after_first_step;
	opts.callback_arg = &k;
	assert_int_equal(cleanup_job_run(&sum, e, job, &opts, &err), CLEANUP_OK);
	assert_true(sum.completed);
	assert_true(k.killed_pid > 0);
	assert_true(sum.reconnects >= 1);
	assert_int_not_equal(cleanup_engine_backend_pid(e), k.killed_pid);
	/* The engine's own session setting, read through the public API: the
	 * engine's session publishes it in its application_name, and the
	 * observer reads that for the engine's backend. */
	assert_int_equal(cleanup_engine_exec(e,
	                                     "SELECT set_config('application_name', 'setting:' || "
	                                     "coalesce(current_setting('cleanup.step_synchronous_commit', true), ''), "
	                                     "false)",
	                                     &err),
	                 CLEANUP_OK);
	setting = pgtest_text(o,
	                      "SELECT substr(application_name, 9) FROM pg_stat_activity WHERE pid = %d "
	                      "AND application_name LIKE 'setting:%%'",
	                      cleanup_engine_backend_pid(e));
	if (setting && !*setting) {
		free(setting);
		setting = NULL;
	}
	cleanup_job_reset(&sum.job);
	cleanup_engine_close(e);
	PQfinish(o);
	return setting;
}

/* run_with_a_reconnect(LIB, STEP_COMMIT) ends with the session value
 * WANT (NULL: unset). */
static void expect_setting_after_a_reconnect(int64_t lib, int step_commit, const char *want)
{
	char *s = run_with_a_reconnect(lib, step_commit);

	if (!want) {
		assert_null(s);
		return;
	}
	assert_non_null(s);
	assert_string_equal(s, want);
	free(s);
}

/* job run's default: asynchronous steps, still after the reconnect. */
static void test_async_run_stays_async_after_a_reconnect(void **state)
{
	(void)state;
	expect_setting_after_a_reconnect(1, CLEANUP_STEP_COMMIT_ASYNC, "off");
}

/* --synchronous-commit on: synchronous, still after the reconnect. */
static void test_sync_run_stays_sync_after_a_reconnect(void **state)
{
	(void)state;
	expect_setting_after_a_reconnect(2, CLEANUP_STEP_COMMIT_SYNC, "on");
}

/* CLEANUP_STEP_COMMIT_SESSION leaves the setting alone (the contract in
 * step.h: a mode set beforehand by hand does not survive a reconnect). */
static void test_session_mode_sets_nothing(void **state)
{
	(void)state;
	expect_setting_after_a_reconnect(3, CLEANUP_STEP_COMMIT_SESSION, NULL);
}

PGTEST_MAIN(cmocka_unit_test(test_async_run_stays_async_after_a_reconnect),
            cmocka_unit_test(test_sync_run_stays_sync_after_a_reconnect),
            cmocka_unit_test(test_session_mode_sets_nothing))
