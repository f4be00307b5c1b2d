/* What a worker is offered, against the real PostgreSQL
 * (cleanup_worker_candidates): only draining and
 * finalizing jobs, never one whose runner lease another session holds (the
 * lock `job run`, the console and every worker take), only the servers
 * asked for; and the claim a worker makes on a listed job is refused to a
 * second session while the first holds it, naming the holder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cleanup/job.h"
#include "cleanup/runner.h"
#include "cleanup/worker.h"
#include "pgtest.h"

static char *conninfo;
static int64_t job_draining[2], job_collecting;

static int setup(void **state)
{
	PGconn *c;

	(void)state;
	/* Three servers of one library each: two sealed prunes (draining),
	 * one collecting. */
	conninfo = pgtest_seeded_db("worker", 3, 1, 20);
	c = pgtest_connect(conninfo, "setup");
	job_draining[0] = pgtest_job_create(c, "prune", 1);
	job_draining[1] = pgtest_job_create(c, "prune", 2);
	job_collecting = pgtest_job_create(c, "prune", 3);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 0)", (long long)job_draining[0]);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 0)", (long long)job_draining[1]);
	PQfinish(c);
	return 0;
}

PGTEST_DB_TEARDOWN(conninfo)

static bool listed(const cleanup_worker_candidate *c, size_t n, int64_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i].job_id == id)
			return true;
	return false;
}

static void list(cleanup_worker_candidate **c, size_t *n, const int64_t *servers, size_t ns)
{
	cleanup_engine *e = pgtest_engine(conninfo);
	cleanup_error err;

	if (cleanup_worker_candidates(c, n, e, servers, ns, 64, &err) != CLEANUP_OK)
		fail_msg("candidates: %s", err.message);
	cleanup_engine_close(e);
}

/* Draining jobs are offered, collecting ones are not (C4: no deletion
 * without a seal). */
static void test_C4_worker_offers_only_sealed_jobs(void **state)
{
	cleanup_worker_candidate *c = NULL;
	size_t n = 0;

	(void)state;
	list(&c, &n, NULL, 0);
	assert_int_equal(n, 2);
	assert_true(listed(c, n, job_draining[0]));
	assert_true(listed(c, n, job_draining[1]));
	assert_false(listed(c, n, job_collecting));
	assert_string_equal(c[0].phase, "draining");
	assert_string_equal(c[0].kind, "prune");
	free(c);
}

/* --server: only the servers asked for; an unknown one is named. */
static void test_worker_server_filter(void **state)
{
	cleanup_worker_candidate *c = NULL;
	cleanup_engine *e;
	cleanup_error err;
	int64_t two[1] = {2}, bad[2] = {1, 999}, missing = -1;
	size_t n = 0;

	(void)state;
	list(&c, &n, two, 1);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].job_id, job_draining[1]);
	assert_int_equal(c[0].server_id, 2);
	free(c);
	e = pgtest_engine(conninfo);
	assert_int_equal(cleanup_worker_servers_missing(&missing, e, bad, 2, &err), CLEANUP_OK);
	assert_int_equal(missing, 999);
	assert_int_equal(cleanup_worker_servers_missing(&missing, e, two, 1, &err), CLEANUP_OK);
	assert_int_equal(missing, 0);
	assert_int_equal(cleanup_worker_candidates(&c, &n, e, NULL, 0, 0, &err), CLEANUP_EINVAL);
	assert_null(c);
	cleanup_engine_close(e);
}

/* A job whose runner lease another runner holds is not offered, and an
 * open of it is refused naming the holder; once closed it is offered
 * again. */
static void test_worker_never_offers_a_held_job(void **state)
{
	cleanup_engine *holder = NULL, *other = NULL;
	cleanup_worker_candidate *c = NULL;
	cleanup_runner_holder h;
	cleanup_runner_opts ro;
	cleanup_runner *hr = NULL, *r2 = NULL;
	cleanup_error err;
	size_t n = 0;

	(void)state;
	memset(&ro, 0, sizeof ro);
	ro.claim_grace_s = -1;
	if (cleanup_engine_open(&holder, conninfo, "cleanupctl:job:1:worker/7", &err) != CLEANUP_OK)
		fail_msg("connect: %s", err.message);
	assert_int_equal(cleanup_runner_open(&hr, holder, job_draining[0], &ro, NULL, &err), CLEANUP_OK);

	list(&c, &n, NULL, 0);
	assert_false(listed(c, n, job_draining[0]));
	assert_true(listed(c, n, job_draining[1]));
	free(c);

	other = pgtest_engine(conninfo);
	assert_int_equal(cleanup_runner_open(&r2, other, job_draining[0], &ro, &h, &err), CLEANUP_EBUSY);
	assert_null(r2);
	assert_int_equal(h.pid, cleanup_engine_backend_pid(holder));
	assert_int_equal(h.os_pid, (int)getpid());
	assert_true(h.direct);
	assert_string_equal(h.app, "cleanupctl:job:1:worker/7");

	assert_int_equal(cleanup_runner_close(hr, NULL, &err), CLEANUP_OK);
	list(&c, &n, NULL, 0);
	assert_true(listed(c, n, job_draining[0]));
	free(c);
	cleanup_engine_close(other);
	cleanup_engine_close(holder);
}

/* The set-aside wait doubles and is capped. Pure. */
static void test_worker_retry_backoff_is_bounded(void **state)
{
	(void)state;
	assert_int_equal(cleanup_worker_retry_ms(1, 1000, 30000), 1000);
	assert_int_equal(cleanup_worker_retry_ms(2, 1000, 30000), 2000);
	assert_int_equal(cleanup_worker_retry_ms(5, 1000, 30000), 16000);
	assert_int_equal(cleanup_worker_retry_ms(6, 1000, 30000), 30000);
	assert_int_equal(cleanup_worker_retry_ms(1000, 1000, 30000), 30000);
}

PGTEST_MAIN(cmocka_unit_test(test_C4_worker_offers_only_sealed_jobs),
            cmocka_unit_test(test_worker_server_filter),
            cmocka_unit_test(test_worker_never_offers_a_held_job),
            cmocka_unit_test(test_worker_retry_backoff_is_bounded))
