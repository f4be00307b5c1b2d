/* The simulated sync writer against the real PostgreSQL: refused writes to a
 * sealed (draining) library are reported as rejections with their SQLSTATE
 * and logged to cleanup.events with the owning job; its writes land in open
 * libraries (A1, A3, A6); a fence in flight makes it report busy (55P03);
 * runs stop at their operation limit, their duration, or when stopped, and
 * keep their pace. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/count_cache.h"
#include "cleanup/writer.h"
#include "pgtest.h"

static char *conninfo;
static int64_t job; /* a sealed prune job on library 1 (server 1: libraries 1, 2) */

static int setup(void **state)
{
	PGconn *c;

	(void)state;
	conninfo = pgtest_fresh_db("writer");
	c = pgtest_connect(conninfo, "setup");
	/* Servers 1 (libraries 1, 2) and 2 (libraries 3, 4), 20 items each. */
	pgtest_exec(c, "SELECT cleanup_lab.seed_demo(2, 2, 20)");
	job = pgtest_draining_prune(c, 1);
	PQfinish(c);
	return 0;
}

PGTEST_DB_TEARDOWN(conninfo)

/* A writer with OPTS on engine E. */
static cleanup_writer *new_writer(cleanup_engine *e, const cleanup_writer_opts *opts)
{
	cleanup_writer *w = NULL;
	cleanup_error err;

	if (cleanup_writer_new(&w, e, opts, &err) != CLEANUP_OK)
		fail_msg("writer: %s", err.message);
	return w;
}

/* An engine as APP (the source its events carry) into *E, and a writer on
 * it for SERVER with SEED, no limits. */
static cleanup_writer *open_writer(cleanup_engine **e, const char *app, int64_t server, uint64_t seed)
{
	cleanup_writer_opts o = {0, server, 0, 0, seed, false};

	*e = pgtest_engine_as(conninfo, app);
	return new_writer(*e, &o);
}

/* Runs W (with STOP, and REPORT given ARG) to its end, which must be a
 * success; returns its counters. */
static const cleanup_writer_stats *run_writer(cleanup_writer *w, volatile sig_atomic_t *stop,
                                              cleanup_writer_report_fn report, void *arg)
{
	cleanup_error err;

	assert_int_equal(cleanup_writer_run(w, stop, report, arg, &err), CLEANUP_OK);
	return cleanup_writer_get_stats(w);
}

/* Frees W, closes E and, when not NULL, the observer O. */
static void close_writer(cleanup_writer *w, cleanup_engine *e, PGconn *o)
{
	cleanup_writer_free(w);
	cleanup_engine_close(e);
	if (o)
		PQfinish(o);
}

/* W does OP on library LIB (into library TO for a move, else -1): the
 * call succeeds and its event has OUTCOME and, when SQLSTATE is not NULL,
 * that SQLSTATE. Returns the event. */
static cleanup_writer_event expect_write(cleanup_writer *w, cleanup_writer_op op, int64_t lib, int64_t to,
                                         cleanup_writer_outcome outcome, const char *sqlstate)
{
	cleanup_writer_event ev;
	cleanup_error err;

	assert_int_equal(cleanup_writer_do(&ev, w, op, lib, to, &err), CLEANUP_OK);
	assert_int_equal(ev.outcome, outcome);
	if (sqlstate)
		assert_string_equal(ev.sqlstate, sqlstate);
	return ev;
}

static int64_t count(PGconn *c, const char *fmt, long long a)
{
	char sql[512];

	snprintf(sql, sizeof sql, fmt, a);
	return pgtest_int(c, "%s", sql);
}

/* A1, A3: the sealed library refuses inserts, updates and moves into it;
 * each refusal is a rejection with CUA01, logged with the job; moves out
 * of it and writes to the open library land. */
static void test_A1_writer_rejected_by_sealed_library_and_logged(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *e = NULL;
	cleanup_writer *w = open_writer(&e, "cleanupctl:writer:1", 1, 1);
	const cleanup_writer_stats *s = cleanup_writer_get_stats(w);
	cleanup_writer_event ev;
	int64_t lib1 = count(o, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", 1);
	int64_t events0 = count(o, "SELECT count(*) FROM cleanup.events WHERE kind = 'rejected' AND job_id = %lld", job);
	char *text;

	(void)state;
	assert_int_equal(cleanup_writer_library_count(w), 2);

	/* Insert into the draining library: refused, nothing lands. */
	ev = expect_write(w, CLEANUP_WRITER_INSERT, 1, -1, CLEANUP_WRITER_REJECTED, "CUA01");
	assert_non_null(strstr(ev.message, "draining"));
	assert_true(ev.logged);
	assert_int_equal(ev.job_id, job);
	assert_int_equal(ev.server_id, 1);
	assert_int_equal(count(o, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", 1), lib1);

	/* Logged in its own transaction: visible to others at once. */
	assert_int_equal(count(o, "SELECT count(*) FROM cleanup.events WHERE kind = 'rejected' AND job_id = %lld", job),
	                 events0 + 1);
	text = pgtest_text(o, "SELECT source || ' | ' || message FROM cleanup.events WHERE kind = 'rejected' "
	                      "ORDER BY id DESC LIMIT 1");
	assert_non_null(strstr(text, "cleanupctl:writer:1 | insert into library 1 refused: CUA01 library 1"));
	free(text);

	/* A3: an update that stays in the draining library is refused ... */
	ev = expect_write(w, CLEANUP_WRITER_UPDATE, 1, -1, CLEANUP_WRITER_REJECTED, "CUA01");
	/* ... a move into it is refused, naming the job of the destination ... */
	ev = expect_write(w, CLEANUP_WRITER_MOVE, 2, 1, CLEANUP_WRITER_REJECTED, "CUA01");
	assert_int_equal(ev.job_id, job);
	/* ... and a move out of it into an open library lands. */
	ev = expect_write(w, CLEANUP_WRITER_MOVE, 1, 2, CLEANUP_WRITER_OK, NULL);
	assert_true(ev.item_id > 0);
	assert_int_equal(count(o, "SELECT library_id FROM inventory.items WHERE id = %lld", (long long)ev.item_id), 2);
	assert_int_equal(count(o, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", 1), lib1 - 1);

	/* The open library takes inserts and updates. */
	ev = expect_write(w, CLEANUP_WRITER_INSERT, 2, -1, CLEANUP_WRITER_OK, NULL);
	assert_int_equal(count(o, "SELECT library_id FROM inventory.items WHERE id = %lld", (long long)ev.item_id), 2);
	text = pgtest_text(o, "SELECT external_id FROM inventory.items WHERE id = %lld", (long long)ev.item_id);
	assert_true(strncmp(text, "w-", 2) == 0);
	free(text);
	ev = expect_write(w, CLEANUP_WRITER_UPDATE, 2, -1, CLEANUP_WRITER_OK, NULL);
	text = pgtest_text(o, "SELECT title FROM inventory.items WHERE id = %lld", (long long)ev.item_id);
	assert_true(strncmp(text, "Retitled ", 9) == 0);
	free(text);

	assert_int_equal(s->ops, 6);
	assert_int_equal(s->rejected, 3);
	assert_int_equal(s->logged, 3);
	assert_int_equal(s->inserted, 1);
	assert_int_equal(s->updated, 1);
	assert_int_equal(s->moved, 1);
	assert_int_equal(s->nrejections, 1);
	assert_string_equal(s->rejections[0].sqlstate, "CUA01");
	assert_int_equal(s->rejections[0].n, 3);
	close_writer(w, e, o);
}

/* A6: a writer on server 2 is never refused by server 1's job. */
static void test_A6_other_server_accepts_writes(void **state)
{
	cleanup_writer_opts opts = {0, 2, 0, 30, 5, false};
	cleanup_engine *e = pgtest_engine_as(conninfo, "cleanupctl:writer:2");
	cleanup_writer *w = new_writer(e, &opts);
	const cleanup_writer_stats *s = run_writer(w, NULL, NULL, NULL);

	(void)state;
	assert_int_equal(s->ops, 30);
	assert_int_equal(s->rejected, 0);
	assert_int_equal(s->inserted + s->updated + s->moved + s->noop, 30);
	assert_true(s->inserted > 0);
	close_writer(w, e, NULL);
}

/* A fence in flight (the admission row locked FOR UPDATE, as a seal holds
 * it) makes the writer's FOR SHARE NOWAIT fail: a busy rejection, logged. */
static void test_A2_writer_busy_while_fence_in_flight(void **state)
{
	PGconn *fence = pgtest_connect(conninfo, "cleanupctl:job:999:seal");
	cleanup_engine *e = NULL;
	cleanup_writer *w = open_writer(&e, "cleanupctl:writer:2", 2, 3);
	cleanup_writer_event ev;

	(void)state;
	pgtest_begin(fence, "SELECT 1 FROM cleanup.library_admission WHERE library_id = 3 FOR UPDATE");
	ev = expect_write(w, CLEANUP_WRITER_INSERT, 3, -1, CLEANUP_WRITER_REJECTED, "55P03");
	assert_true(ev.logged);
	assert_int_equal(ev.job_id, -1); /* the library is not draining yet */
	assert_true(ev.ms < 1000);       /* NOWAIT: refused at once, not after the lock timeout */
	pgtest_exec(fence, "ROLLBACK");
	/* Once the fence is gone, the same write lands. */
	ev = expect_write(w, CLEANUP_WRITER_INSERT, 3, -1, CLEANUP_WRITER_OK, NULL);
	close_writer(w, e, fence);
}

/* K3: the writer writes through the mutation gateway, so
 * a library the count cache watches keeps taking its inserts, updates and
 * moves, and the cache follows them (fresh again, equal to count(*)). */
static void test_K3_writer_uses_gateway_on_watched_libraries(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *e = NULL;
	cleanup_writer *w = open_writer(&e, "cleanupctl:writer:2", 2, 17);
	const cleanup_writer_stats *s = cleanup_writer_get_stats(w);
	cleanup_writer_event ev;
	cleanup_count_visit v;
	cleanup_error err;
	int i, n;

	(void)state;
	assert_true(cleanup_writer_uses_gateway(w));
	for (i = 3; i <= 4; i++) {
		pgtest_exec(o, "SELECT cleanup.count_visit(%d)", i);
		assert_int_equal(cleanup_count_settle(&v, &n, e, i, 10, NULL, &err), CLEANUP_OK);
		assert_string_equal(v.state, "fresh");
	}
	/* Plain SQL to a watched library is refused, naming the gateway. */
	pgtest_fails(o, "CU410", NULL, "INSERT INTO inventory.items (library_id, external_id) VALUES (3, 'p')");
	for (i = 0; i < 20; i++)
		assert_int_equal(cleanup_writer_tick(&ev, w, &err), CLEANUP_OK);
	ev = expect_write(w, CLEANUP_WRITER_MOVE, 3, 4, CLEANUP_WRITER_OK, NULL);
	assert_int_equal(s->rejected, 0);
	assert_int_equal(s->inserted + s->updated + s->moved + s->noop, 21);
	for (i = 3; i <= 4; i++) {
		assert_int_equal(cleanup_count_settle(&v, &n, e, i, 10, NULL, &err), CLEANUP_OK);
		assert_string_equal(v.state, "fresh");
		assert_int_equal(v.count, count(o, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", i));
	}
	pgtest_exec(o, "SELECT cleanup.count_release(slot) FROM cleanup.count_registry WHERE library_id IS NOT NULL");
	close_writer(w, e, o);
}

/* Seed 001: each insert carries its dependents (a retry and a
 * review preview of the item; a collection, the sync status and a history
 * record of the library) in its transaction; a refused insert leaves none. */
static void test_D_writer_inserts_carry_dependents(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *e = NULL;
	cleanup_writer *w = open_writer(&e, "cleanupctl:writer:1", 1, 23);
	cleanup_writer_event ev;
	int64_t before, hist;

	(void)state;
	assert_true(cleanup_writer_dependents(w) == 0);
	hist = count(o, "SELECT count(*) FROM inventory.classification_history WHERE library_id = %lld", 2);
	ev = expect_write(w, CLEANUP_WRITER_INSERT, 2, -1, CLEANUP_WRITER_OK, NULL);
	assert_int_equal(count(o, "SELECT count(*) FROM inventory.item_retries WHERE item_id = %lld", ev.item_id), 1);
	assert_int_equal(count(o, "SELECT count(*) FROM inventory.identity_review_previews WHERE item_id = %lld",
	                       ev.item_id),
	                 1);
	assert_int_equal(count(o, "SELECT count(*) FROM inventory.library_sync_status WHERE library_id = %lld", 2), 1);
	assert_true(count(o, "SELECT count(*) FROM inventory.library_collections WHERE library_id = %lld", 2) >= 1);
	assert_int_equal(count(o, "SELECT count(*) FROM inventory.classification_history WHERE library_id = %lld", 2),
	                 hist + 1);
	assert_int_equal(cleanup_writer_dependents(w), 5);
	/* The sealed library refuses the insert: no dependent is written either. */
	before = count(o, "SELECT count(*) FROM inventory.item_retries WHERE %lld = 0", 0);
	ev = expect_write(w, CLEANUP_WRITER_INSERT, 1, -1, CLEANUP_WRITER_REJECTED, "CUA01");
	assert_int_equal(count(o, "SELECT count(*) FROM inventory.item_retries WHERE %lld = 0", 0), before);
	assert_int_equal(cleanup_writer_dependents(w), 5);
	/* The connection is usable afterwards (the transaction was rolled back). */
	ev = expect_write(w, CLEANUP_WRITER_INSERT, 2, -1, CLEANUP_WRITER_OK, NULL);
	/* A gateway delete takes the item's retries and previews with it. */
	pgtest_exec(o, "SELECT cleanup.write_items(jsonb_build_array(jsonb_build_object('op', 'delete', 'item_id', %lld, "
	               "'expected_library_id', 2)))",
	            (long long)ev.item_id);
	assert_int_equal(count(o, "SELECT count(*) FROM inventory.item_retries WHERE item_id = %lld", ev.item_id), 0);
	close_writer(w, e, o);
}

static void tally(const cleanup_writer_event *ev, void *arg)
{
	int *n = arg;

	n[ev->outcome]++;
}

/* A run with an operation limit: deterministic for a seed; every operation
 * accounted for; rejections logged; inserts land only in open libraries. */
static void test_writer_run_limited_by_ops(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_writer_opts opts = {0, 1, 0, 60, 7, false};
	cleanup_engine *e = NULL;
	cleanup_writer *w;
	const cleanup_writer_stats *s;
	int seen[4] = {0, 0, 0, 0};
	int64_t events0;

	(void)state;
	events0 = pgtest_int(o, "SELECT count(*) FROM cleanup.events WHERE kind = 'rejected' "
	                        "AND source = 'cleanupctl:writer:1'");
	pgtest_exec(o, "CREATE TEMP TABLE before AS SELECT id FROM inventory.items");
	e = pgtest_engine_as(conninfo, "cleanupctl:writer:1");
	w = new_writer(e, &opts);
	s = run_writer(w, NULL, tally, seen);
	assert_int_equal(s->ops, 60);
	assert_int_equal(s->inserted + s->updated + s->moved + s->noop + s->rejected + s->lost, 60);
	assert_int_equal(seen[CLEANUP_WRITER_OK] + seen[CLEANUP_WRITER_NOOP] + seen[CLEANUP_WRITER_REJECTED], 60);
	assert_int_equal(seen[CLEANUP_WRITER_REJECTED], s->rejected);
	/* Half the libraries are draining: some of 60 random writes hit it. */
	assert_true(s->rejected > 0);
	assert_true(s->inserted > 0);
	assert_int_equal(s->logged, s->rejected);
	assert_false(s->stopped);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.events WHERE kind = 'rejected' "
	                               "AND source = 'cleanupctl:writer:1'"),
	                 events0 + s->rejected);
	/* New items only in the open library 2; none in the draining one. */
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = 1 "
	                               "AND id NOT IN (SELECT id FROM before)"),
	                 0);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = 2 "
	                               "AND id NOT IN (SELECT id FROM before)"),
	                 s->inserted);
	close_writer(w, e, o);
}

/* Pace and stop: a run at 40 operations per second for 0.5 s does at most
 * 21 operations and lasts the duration; a stop request ends a run at once. */
static void test_writer_run_paced_and_stoppable(void **state)
{
	cleanup_writer_opts opts = {40, 2, 0.5, 0, 9, true};
	cleanup_engine *e = pgtest_engine_as(conninfo, "cleanupctl:writer:2");
	cleanup_writer *w = new_writer(e, &opts);
	volatile sig_atomic_t stop = 0;
	const cleanup_writer_stats *s = run_writer(w, &stop, NULL, NULL);

	(void)state;
	assert_true(s->ops >= 1);
	assert_true(s->ops <= 21);
	assert_true(s->elapsed_s >= 0.5);
	assert_int_equal(s->logged, 0); /* no_log */
	assert_false(s->stopped);
	cleanup_writer_free(w);

	stop = 1;
	opts.duration_s = 0;
	w = new_writer(e, &opts);
	s = run_writer(w, &stop, NULL, NULL);
	assert_int_equal(s->ops, 0);
	assert_true(s->stopped);
	close_writer(w, e, NULL);
}

/* S9 for writers: a terminated backend is a lost write, not a rejection;
 * the run reconnects and goes on. */
static void test_writer_reconnects_after_backend_terminated(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_writer_opts opts = {0, 2, 0, 5, 4, false};
	cleanup_engine *e = pgtest_engine_as(conninfo, "cleanupctl:writer:2");
	cleanup_writer *w = new_writer(e, &opts);
	const cleanup_writer_stats *s = cleanup_writer_get_stats(w);
	cleanup_writer_event ev;
	cleanup_error err;
	int pid;

	(void)state;
	pid = cleanup_engine_backend_pid(e);
	/* With a timeout, pg_terminate_backend waits until the backend is gone. */
	assert_int_equal(pgtest_int(o, "SELECT pg_terminate_backend(%d, 10000)::int", pid), 1);
	assert_int_equal(cleanup_writer_do(&ev, w, CLEANUP_WRITER_INSERT, 3, -1, &err), CLEANUP_ECONN);
	assert_int_equal(ev.outcome, CLEANUP_WRITER_LOST);
	assert_int_equal(s->lost, 1);
	assert_int_equal(s->rejected, 0);
	assert_int_equal(s->logged, 0);

	/* A run picks up: reconnects, then does the rest of its 5 operations. */
	run_writer(w, NULL, NULL, NULL);
	assert_int_equal(s->reconnects, 1);
	assert_int_equal(s->ops, 5);
	assert_int_equal(s->inserted + s->updated + s->moved + s->noop, 4);
	assert_true(cleanup_engine_backend_pid(e) != pid);
	close_writer(w, e, o);
}

/* Bad options and unknown servers are refused before any write. */
static void test_writer_refuses_bad_options(void **state)
{
	cleanup_writer_opts opts = {-1, -1, 0, 0, 0, false};
	cleanup_engine *e = pgtest_engine_as(conninfo, "cleanupctl:writer:all");
	cleanup_writer *w = NULL;
	cleanup_error err;

	(void)state;
	assert_int_equal(cleanup_writer_new(&w, e, &opts, &err), CLEANUP_EINVAL);
	assert_null(w);
	opts.rate = 1;
	opts.server_id = 999;
	assert_int_equal(cleanup_writer_new(&w, e, &opts, &err), CLEANUP_ENOTFOUND);
	assert_non_null(strstr(err.message, "server 999 does not exist"));
	assert_null(w);
	cleanup_engine_close(e);
}

PGTEST_MAIN(cmocka_unit_test(test_A1_writer_rejected_by_sealed_library_and_logged),
            cmocka_unit_test(test_A6_other_server_accepts_writes),
            cmocka_unit_test(test_A2_writer_busy_while_fence_in_flight),
            cmocka_unit_test(test_writer_run_limited_by_ops),
            cmocka_unit_test(test_writer_run_paced_and_stoppable),
            cmocka_unit_test(test_writer_reconnects_after_backend_terminated),
            cmocka_unit_test(test_writer_refuses_bad_options),
            cmocka_unit_test(test_K3_writer_uses_gateway_on_watched_libraries),
            cmocka_unit_test(test_D_writer_inserts_carry_dependents))
