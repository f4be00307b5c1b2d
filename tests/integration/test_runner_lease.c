/* The runner lease and the job driver (cleanup/runner.h, F1-F3),
 * against the real PostgreSQL: F2 (one runner per job,
 * proved by a lease row renewed each step, with an expiry) and F3 (a lost
 * runner is an event; the next runner takes the lease over and resumes
 * exactly). Ages are made by moving the lease's renewal back in time with
 * SQL, never by sleeping. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cleanup/job.h"
#include "cleanup/runner.h"
#include "cleanup/step.h"
#include "pgtest.h"

/* 6 servers x 1 library x 300 items: one library per test. */
PGTEST_DB_GROUP(conninfo, pgtest_seeded_db("runner_lease", 6, 1, 300))

/* A sealed prune of library LIB with nothing seen: every item goes. */
static int64_t sealed_prune(PGconn *c, int64_t lib)
{
	int64_t job = pgtest_job_create(c, "prune", lib);

	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 0)", (long long)job);
	return job;
}

static cleanup_engine *engine_as(const char *app)
{
	return pgtest_engine_as(conninfo, app);
}

/* Closes the test's engines A and B, then its observer O. */
static void close_engines(PGconn *o, cleanup_engine *a, cleanup_engine *b)
{
	cleanup_engine_close(a);
	cleanup_engine_close(b);
	PQfinish(o);
}

static int64_t count_events(PGconn *c, int64_t job, const char *kind, const char *like)
{
	return pgtest_int(c, "SELECT count(*) FROM cleanup.events WHERE job_id = %lld AND kind = '%s' AND message LIKE '%s'",
	                  (long long)job, kind, like);
}

/* F2: the lease names the runner (host, OS pid, application, backend),
 * every step renews it in the step's own transaction (its last_step and
 * renewal move), a second runner is refused naming it, and close ends it. */
static void test_F2_lease_row_names_the_runner_and_each_step_renews_it(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *a = engine_as("cleanupctl:job:f2:run"), *b = engine_as("f2-second");
	cleanup_runner *ra = NULL, *rb = NULL;
	cleanup_runner_holder h;
	cleanup_step_result s;
	cleanup_error err;
	char host[64] = "", *v;
	int64_t job = sealed_prune(o, 1);

	(void)state;
	gethostname(host, sizeof host);
	assert_int_equal(cleanup_runner_open(&ra, a, job, NULL, NULL, &err), CLEANUP_OK);
	v = pgtest_text(o, "SELECT concat_ws('|', host, os_pid, application, backend_pid, direct, coalesce(last_step, -1)) "
	                   "FROM cleanup.job_runners WHERE job_id = %lld",
	                (long long)job);
	{
		char want[256];

		snprintf(want, sizeof want, "%s|%d|cleanupctl:job:f2:run|%d|t|-1", host, (int)getpid(),
		         cleanup_engine_backend_pid(a));
		assert_string_equal(v, want);
	}
	free(v);
	/* A renewal a minute old: the step moves it to now. */
	pgtest_exec(o, "UPDATE cleanup.job_runners SET renewed_at = renewed_at - interval '50 s' WHERE job_id = %lld",
	            (long long)job);
	assert_int_equal(cleanup_runner_step(ra, &s, &err), CLEANUP_OK);
	assert_int_equal(s.step_no, 1);
	cleanup_step_result_reset(&s);
	assert_int_equal(pgtest_int(o, "SELECT (last_step = 1 AND renewed_at > clock_timestamp() - interval '10 s')::int "
	                               "FROM cleanup.job_runners WHERE job_id = %lld",
	                            (long long)job),
	                 1);
	assert_int_equal(cleanup_runner_job(ra)->step_no, 1);

	/* A second runner: refused at once, naming the first. */
	{
		cleanup_runner_opts ro;
		char needle[160];

		memset(&ro, 0, sizeof ro);
		ro.claim_grace_s = -1;
		assert_int_equal(cleanup_runner_open(&rb, b, job, &ro, &h, &err), CLEANUP_EBUSY);
		assert_null(rb);
		snprintf(needle, sizeof needle, "already being run by backend %d (cleanupctl:job:f2:run, %s:%d",
		         cleanup_engine_backend_pid(a), host, (int)getpid());
		assert_non_null(strstr(err.message, needle));
		assert_non_null(strstr(err.message, "last step 1"));
		assert_int_equal(h.last_step, 1);
	}
	assert_int_equal(cleanup_runner_close(ra, NULL, &err), CLEANUP_OK);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.job_runners WHERE job_id = %lld", (long long)job), 0);
	close_engines(o, a, b);
}

/* F3: a lease past its expiry is taken over by the next runner, which
 * records "runner lost"; the old runner's next step is refused (CU470,
 * exit 4) naming the new holder, and the job goes on exactly under the new
 * one. */
static void test_F3_expired_lease_taken_over_and_the_old_runner_refused(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *a = engine_as("f3-old"), *b = engine_as("f3-new");
	cleanup_runner *ra = NULL, *rb = NULL;
	cleanup_runner_holder lost;
	cleanup_step_result s;
	cleanup_run_summary sum;
	cleanup_error err;
	int64_t job = sealed_prune(o, 2), items;

	(void)state;
	items = pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = 2");
	assert_int_equal(cleanup_runner_open(&ra, a, job, NULL, NULL, &err), CLEANUP_OK);
	assert_int_equal(cleanup_runner_step(ra, &s, &err), CLEANUP_OK);
	cleanup_step_result_reset(&s);
	/* The old runner stalls (a stopped process): its lease expires. */
	pgtest_exec(o, "UPDATE cleanup.job_runners SET renewed_at = renewed_at - interval '61 s' WHERE job_id = %lld",
	            (long long)job);
	assert_int_equal(cleanup_runner_open(&rb, b, job, NULL, NULL, &err), CLEANUP_OK);
	assert_true(cleanup_runner_took_over(rb, &lost));
	assert_string_equal(lost.app, "f3-old");
	assert_int_equal(lost.last_step, 1);
	assert_int_equal(count_events(o, job, "runner_lost", "runner lost: %:% (f3-old), last step 1 at %; its lease expired % s ago; taken over by %:% (f3-new)"), 1);

	/* The old runner wakes up: refused, nothing done. */
	assert_int_equal(cleanup_runner_step(ra, &s, &err), CLEANUP_EREFUSED);
	assert_string_equal(err.sqlstate, "CU470");
	assert_non_null(strstr(err.message, "lost the runner lease of job"));
	assert_non_null(strstr(err.message, "(f3-new) now"));
	assert_int_equal(pgtest_int(o, "SELECT step_no FROM cleanup.jobs WHERE id = %lld", (long long)job), 1);

	/* The new one resumes after step 1 and completes exactly. */
	assert_int_equal(cleanup_runner_run(rb, &sum, NULL, &err), CLEANUP_OK);
	assert_true(sum.completed);
	assert_int_equal(sum.job.deleted, items);
	cleanup_job_reset(&sum.job);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = 2"), 0);
	assert_int_equal(pgtest_int(o, "SELECT (max(step_no) = count(*))::int FROM cleanup.job_steps WHERE job_id = %lld",
	                            (long long)job),
	                 1);
	assert_int_equal(cleanup_runner_close(rb, "completed", &err), CLEANUP_OK);
	cleanup_runner_close(ra, NULL, NULL); /* its lease is not its own any more: nothing ended */
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.job_runners WHERE job_id = %lld", (long long)job), 0);
	close_engines(o, a, b);
}

/* F3: a runner whose backend is gone (kill -9 of its process; here its
 * backend terminated) loses a direct lease at once, with no wait for the
 * expiry; one behind a pooler whose process on this host is gone (a dead
 * OS pid) is taken over at once too, "its process is gone". */
static void test_F3_gone_backend_or_process_loses_the_lease_at_once(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *a = engine_as("f3-killed"), *b = engine_as("f3-next");
	cleanup_runner *ra = NULL, *rb = NULL;
	cleanup_runner_opts ro;
	cleanup_error err;
	char host[64] = "";
	int64_t job = sealed_prune(o, 3);
	pid_t dead;

	(void)state;
	memset(&ro, 0, sizeof ro);
	ro.claim_grace_s = -1; /* no retry: the take-over must not need one */
	gethostname(host, sizeof host);
	assert_int_equal(cleanup_runner_open(&ra, a, job, NULL, NULL, &err), CLEANUP_OK);
	pgtest_exec(o, "SELECT pg_terminate_backend(%d)", cleanup_engine_backend_pid(a));
	pgtest_wait_gone(o, cleanup_engine_backend_pid(a), 10000);
	assert_int_equal(cleanup_runner_open(&rb, b, job, &ro, NULL, &err), CLEANUP_OK);
	assert_true(cleanup_runner_took_over(rb, NULL));
	assert_int_equal(count_events(o, job, "runner_lost", "runner lost: %(f3-killed), last step none at %; its connection is gone; %"), 1);
	assert_int_equal(cleanup_runner_close(rb, NULL, &err), CLEANUP_OK);
	cleanup_runner_close(ra, NULL, NULL);

	/* Behind a pooler: a lease of a process of this host that exited. */
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	pgtest_exec(o,
	            "INSERT INTO cleanup.job_runners (job_id, token, host, os_pid, application, direct, backend_pid, "
	            "server_start, ttl) VALUES (%lld, 99, '%s', %d, 'f3-pooled', false, 1, now(), interval '10 min')",
	            (long long)job, host, (int)dead);
	assert_int_equal(cleanup_runner_open(&rb, b, job, &ro, NULL, &err), CLEANUP_OK);
	assert_true(cleanup_runner_took_over(rb, NULL));
	assert_int_equal(count_events(o, job, "runner_lost", "runner lost: %(f3-pooled)%its process is gone%"), 1);
	assert_int_equal(cleanup_runner_close(rb, NULL, &err), CLEANUP_OK);

	/* ... while one of another host is held until it expires. */
	pgtest_exec(o,
	            "INSERT INTO cleanup.job_runners (job_id, token, host, os_pid, application, direct, backend_pid, "
	            "server_start, ttl) VALUES (%lld, 98, 'elsewhere', %d, 'f3-far', false, 1, now(), interval '10 min')",
	            (long long)job, (int)dead);
	assert_int_equal(cleanup_runner_open(&rb, b, job, &ro, NULL, &err), CLEANUP_EBUSY);
	assert_non_null(strstr(err.message, "elsewhere:"));
	assert_non_null(strstr(err.message, "through a pooler"));
	assert_non_null(strstr(err.message, "its lease expires in"));
	pgtest_exec(o, "DELETE FROM cleanup.job_runners WHERE job_id = %lld", (long long)job);
	close_engines(o, a, b);
}

/* F2 (kill-runner): the console's K acts only on a backend the lease
 * proves is the runner's. It ends the lease ("runner stopped") and
 * terminates the backend; the runner, reconnecting, is not given its
 * lease back (CU470). A lease behind a pooler is never terminated. */
static void test_F2_kill_runner_only_the_proven_backend(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *a = engine_as("f2-victim"), *k = engine_as("f2-console");
	cleanup_runner *ra = NULL;
	cleanup_run_summary sum;
	cleanup_run_opts opts;
	cleanup_error err;
	int64_t job = sealed_prune(o, 4);
	int pid;

	(void)state;
	assert_int_equal(cleanup_runner_open(&ra, a, job, NULL, NULL, &err), CLEANUP_OK);
	pid = cleanup_engine_backend_pid(a);
	/* Another pid than the lease's: nothing done. */
	assert_int_equal(cleanup_job_runner_terminate(k, job, cleanup_engine_backend_pid(k), &err), CLEANUP_ENOTFOUND);
	{
		char needle[96];

		snprintf(needle, sizeof needle, "is run by backend %d of ", pid);
		assert_non_null(strstr(err.message, needle));
		snprintf(needle, sizeof needle, "(f2-victim) now, not %d as confirmed; nothing done",
		         cleanup_engine_backend_pid(k));
		assert_non_null(strstr(err.message, needle));
	}
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM pg_stat_activity WHERE pid = %d", pid), 1);
	/* The runner's backend: stopped, recorded, terminated. */
	assert_int_equal(cleanup_job_runner_terminate(k, job, pid, &err), CLEANUP_OK);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.job_runners WHERE job_id = %lld", (long long)job), 0);
	assert_int_equal(count_events(o, job, "runner_lost", "runner stopped: %(f2-victim), backend %, last step none; by %(f2-console)"), 1);
	pgtest_wait_gone(o, pid, 10000);
	/* The runner reconnects, but its lease is not given back. */
	memset(&opts, 0, sizeof opts);
	opts.max_reconnects = 3;
	assert_int_equal(cleanup_runner_run(ra, &sum, &opts, &err), CLEANUP_EREFUSED);
	assert_string_equal(err.sqlstate, "CU470");
	assert_int_equal(sum.steps, 0);
	cleanup_job_reset(&sum.job);
	cleanup_runner_close(ra, NULL, NULL);
	assert_int_equal(pgtest_int(o, "SELECT step_no FROM cleanup.jobs WHERE id = %lld", (long long)job), 0);

	/* Behind a pooler: refused, the process to stop named. */
	pgtest_exec(o,
	            "INSERT INTO cleanup.job_runners (job_id, token, host, os_pid, application, direct, backend_pid, "
	            "server_start, ttl) VALUES (%lld, 97, 'app-7', 4711, 'f2-pooled', false, pg_backend_pid(), "
	            "pg_postmaster_start_time(), interval '10 min')",
	            (long long)job);
	pid = (int)pgtest_int(o, "SELECT pg_backend_pid()");
	assert_int_equal(cleanup_job_runner_terminate(k, job, pid, &err), CLEANUP_EREFUSED);
	assert_non_null(strstr(err.message, "app-7:4711 (f2-pooled) through a connection pooler"));
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.job_runners WHERE job_id = %lld", (long long)job), 1);
	pgtest_exec(o, "DELETE FROM cleanup.job_runners WHERE job_id = %lld", (long long)job);
	close_engines(o, a, k);
}

/* F3 (a reconnect is not a loss): a runner whose connection drops
 * (failover, a network cut; here its backend terminated) reconnects,
 * keeps its lease by its token, and completes the job exactly: no
 * "runner lost", one "runner started" and one "runner ended". */
static void test_F3_reconnected_runner_keeps_its_lease(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *a = engine_as("f3-reconnects");
	cleanup_run_summary sum;
	cleanup_run_opts opts;
	cleanup_step_result s;
	cleanup_runner_opts ro;
	cleanup_runner *ra = NULL;
	cleanup_error err;
	int64_t job = sealed_prune(o, 5), items;
	int pid;

	(void)state;
	items = pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = 5");
	memset(&ro, 0, sizeof ro);
	ro.announce = true;
	assert_int_equal(cleanup_runner_open(&ra, a, job, &ro, NULL, &err), CLEANUP_OK);
	assert_int_equal(cleanup_runner_step(ra, &s, &err), CLEANUP_OK);
	cleanup_step_result_reset(&s);
	pid = cleanup_engine_backend_pid(a);
	pgtest_exec(o, "SELECT pg_terminate_backend(%d)", pid);
	pgtest_wait_gone(o, pid, 10000);
	memset(&opts, 0, sizeof opts);
	opts.max_reconnects = 3;
	assert_int_equal(cleanup_runner_run(ra, &sum, &opts, &err), CLEANUP_OK);
	assert_true(sum.completed);
	assert_true(sum.reconnects >= 1);
	assert_int_equal(sum.job.deleted, items);
	cleanup_job_reset(&sum.job);
	assert_int_equal(cleanup_runner_close(ra, "completed", &err), CLEANUP_OK);
	assert_int_equal(count_events(o, job, "runner_lost", "%"), 0);
	assert_int_equal(count_events(o, job, "runner", "runner started: %(f3-reconnects), from step 1"), 1);
	assert_int_equal(count_events(o, job, "runner", "runner ended: %(f3-reconnects), last step % (completed)"), 1);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = 5"), 0);
	cleanup_engine_close(a);
	PQfinish(o);
}

/* F2: a step by hand (SQL, no lease) is refused beside a live runner
 * (CU471) and goes when there is none; a job with no step to run (still
 * collecting) opens no lease. */
static void test_F2_step_without_a_lease_refused_beside_a_runner(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *a = engine_as("f2-holder");
	cleanup_runner *ra = NULL;
	cleanup_error err;
	int64_t job = pgtest_job_create(o, "prune", 6);

	(void)state;
	/* collecting: no lease is taken; its step is refused as the server says */
	assert_int_equal(cleanup_runner_open(&ra, a, job, NULL, NULL, &err), CLEANUP_OK);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.job_runners WHERE job_id = %lld", (long long)job), 0);
	cleanup_runner_close(ra, NULL, NULL);
	pgtest_exec(o, "SELECT cleanup.job_seal(%lld, 0)", (long long)job);

	assert_int_equal(cleanup_runner_open(&ra, a, job, NULL, NULL, &err), CLEANUP_OK);
	pgtest_fails(o, "CU471", "(f2-holder)", "SELECT * FROM cleanup.job_step(%lld, 1)", (long long)job);
	assert_int_equal(cleanup_runner_close(ra, NULL, &err), CLEANUP_OK);
	assert_int_equal(pgtest_int(o, "SELECT step_no FROM cleanup.job_step(%lld, 1)", (long long)job), 1);
	cleanup_engine_close(a);
	PQfinish(o);
}

PGTEST_MAIN(cmocka_unit_test(test_F2_lease_row_names_the_runner_and_each_step_renews_it),
            cmocka_unit_test(test_F3_expired_lease_taken_over_and_the_old_runner_refused),
            cmocka_unit_test(test_F3_gone_backend_or_process_loses_the_lease_at_once),
            cmocka_unit_test(test_F2_kill_runner_only_the_proven_backend),
            cmocka_unit_test(test_F3_reconnected_runner_keeps_its_lease),
            cmocka_unit_test(test_F2_step_without_a_lease_refused_beside_a_runner))
