/* The console's asynchronous monitor (cleanup/monitor.h) against the real
 * PostgreSQL: snapshot contents, NOTIFY-driven refresh, reconnection after
 * pg_terminate_backend with the last snapshot kept and marked stale, the
 * lock tree, and the lock query degrading when it times out. */
#include "cleanup/monitor.h"
#include "montest.h"
#include "pgtest.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PGTEST_DB_GROUP(conninfo, pgtest_seeded_db("monitor", 2, 2, 10))

static cleanup_monitor *open_monitor(int refresh_ms, int locks_ms, int locks_timeout_ms)
{
	cleanup_monitor_opts o = {0};
	cleanup_monitor *m = NULL;
	cleanup_error err;

	o.conninfo = conninfo;
	o.refresh_ms = refresh_ms;
	o.locks_ms = locks_ms;
	o.locks_timeout_ms = locks_timeout_ms;
	o.backoff_initial_ms = 50;
	o.backoff_max_ms = 200;
	assert_int_equal(cleanup_monitor_open(&m, &o, &err), CLEANUP_OK);
	return m;
}

static bool has_snapshot(const cleanup_mon_snapshot *s, void *arg)
{
	return s->seq > *(uint64_t *)arg && s->njobs > 0;
}

struct phase_wait {
	int64_t job;
	const char *phase;
};

static bool job_in_phase(const cleanup_mon_snapshot *s, void *arg)
{
	const struct phase_wait *w = arg;
	const cleanup_mon_job *j = montest_find_job(s, w->job);

	return j && strcmp(j->job.phase, w->phase) == 0;
}

/* The snapshot holds the servers, libraries (with item counts from
 * cleanup.library_stats and their active job), jobs, the detail job's steps
 * and the event log. */
static void test_snapshot_contents(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "observer");
	cleanup_monitor *m = open_monitor(1000, -1, 0);
	const cleanup_mon_snapshot *s;
	uint64_t zero = 0;
	int64_t job, lib;
	size_t i;
	bool seen_lib = false;

	(void)state;
	lib = pgtest_int(c, "SELECT min(id) FROM inventory.libraries");
	job = pgtest_job_create(c, "prune", lib);
	pgtest_exec(c, "INSERT INTO cleanup.job_steps (job_id, step_no, action, pass_no, examined, visited, deleted, kept, "
	               "mutations, phase_after, started_at, duration_ms, lock_hold_ms) "
	               "VALUES (%lld, 1, 'drain', 1, 10, 4, 4, 6, 4, 'draining', now(), 2.5, 1.25)",
	            (long long)job);
	cleanup_monitor_set_detail_job(m, job);
	montest_drive_until(m, has_snapshot, &zero, 5000, "the first snapshot");
	s = cleanup_monitor_snapshot(m);

	assert_int_equal(s->nservers, 2);
	assert_int_equal(s->nlibraries, 4);
	assert_int_equal(s->servers[0].row.library_count, 2);
	assert_int_equal(s->servers[0].row.item_count, 20);
	assert_int_equal(s->servers[0].row.job_id, job);
	assert_string_equal(s->servers[0].job_phase, "collecting");
	assert_string_equal(s->servers[0].row.admission, "open");
	assert_int_equal(s->servers[1].row.job_id, -1);
	for (i = 0; i < s->nlibraries; i++) {
		assert_int_equal(s->libraries[i].row.item_count, 10);
		if (s->libraries[i].row.id == lib) {
			seen_lib = true;
			assert_int_equal(s->libraries[i].row.job_id, job);
			assert_string_equal(s->libraries[i].job_kind, "prune");
		} else {
			assert_int_equal(s->libraries[i].row.job_id, -1);
		}
	}
	assert_true(seen_lib);
	assert_non_null(montest_find_job(s, job));
	assert_string_equal(montest_find_job(s, job)->job.phase, "collecting");
	assert_string_equal(montest_find_job(s, job)->job.kind, "prune");
	assert_int_equal(montest_find_job(s, job)->job.expected_count, -1);
	assert_int_equal(s->detail_job_id, job);
	assert_int_equal(s->nsteps, 1);
	assert_int_equal(s->steps[0].step_no, 1);
	assert_int_equal(s->steps[0].deleted, 4);
	assert_true(s->steps[0].lock_hold_ms > 1.2 && s->steps[0].lock_hold_ms < 1.3);
	/* job_create logged a 'created' event. */
	assert_true(s->nevents >= 1);
	assert_string_equal(s->events[0].kind, "created");
	assert_int_equal(s->events[0].job_id, job);
	assert_false(cleanup_monitor_stale(m, NULL));
	assert_true(s->db_ms >= 0);

	pgtest_exec(c, "DELETE FROM cleanup.job_steps WHERE job_id = %lld", (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job);
	cleanup_monitor_close(m);
	PQfinish(c);
}

/* A change committed by another connection appears through NOTIFY, long
 * before the (here one minute) periodic refresh would show it. */
static void test_notify_from_another_connection_triggers_refresh(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "other");
	cleanup_monitor *m = open_monitor(60000, -1, 0);
	uint64_t zero = 0, before;
	struct phase_wait w;
	int64_t job;
	double ms;

	(void)state;
	job = pgtest_int(c, "SELECT id FROM cleanup.job_create('prune', (SELECT max(id) FROM inventory.libraries))");
	w.job = job;
	w.phase = "collecting";
	montest_drive_until(m, has_snapshot, &zero, 5000, "the first snapshot");
	montest_drive_until(m, job_in_phase, &w, 5000, "the collecting job");
	before = cleanup_monitor_notifications(m);

	pgtest_exec(c, "SELECT cleanup.job_transition(%lld, 'pause')", (long long)job);
	w.phase = "paused";
	ms = montest_drive_until(m, job_in_phase, &w, 5000, "the paused job");
	fprintf(stderr, "change visible after %.1f ms\n", ms);
	assert_true(cleanup_monitor_notifications(m) > before);
	/* Without the NOTIFY it would take the full minute. */
	assert_true(ms < 2000);

	pgtest_exec(c, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job);
	cleanup_monitor_close(m);
	PQfinish(c);
}

struct stale_wait {
	cleanup_monitor *m;
	int old_pid;
};

static bool went_stale(const cleanup_mon_snapshot *s, void *arg)
{
	struct stale_wait *w = arg;

	(void)s;
	return cleanup_monitor_stale(w->m, NULL);
}

static bool reconnected(const cleanup_mon_snapshot *s, void *arg)
{
	struct stale_wait *w = arg;
	int pid = cleanup_monitor_backend_pid(w->m);

	(void)s;
	return !cleanup_monitor_stale(w->m, NULL) && pid != 0 && pid != w->old_pid;
}

/* pg_terminate_backend of the monitor's backend: the last snapshot stays
 * visible and is marked stale, the monitor reconnects with backoff, listens
 * again and a NOTIFY reaches it on the new connection. */
static void test_reconnect_after_terminate_backend(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "killer");
	cleanup_monitor *m;
	const cleanup_mon_snapshot *s;
	struct stale_wait sw;
	struct phase_wait w;
	uint64_t zero = 0;
	double since = 0;
	int64_t job;

	(void)state;
	/* The console keeps its name whatever PGAPPNAME says (the engine's
	 * connection parameters, application_name fixed). */
	setenv("PGAPPNAME", "someone-else", 1);
	m = open_monitor(60000, -1, 0);
	montest_drive_until(m, has_snapshot, &zero, 5000, "the first snapshot");
	unsetenv("PGAPPNAME");
	sw.m = m;
	sw.old_pid = cleanup_monitor_backend_pid(m);
	assert_true(sw.old_pid > 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_stat_activity WHERE pid = %d "
	                               "AND application_name = 'cleanupctl:console'",
	                            sw.old_pid),
	                 1);
	pgtest_exec(c, "SELECT pg_terminate_backend(%d)", sw.old_pid);
	montest_drive_until(m, went_stale, &sw, 5000, "the monitor to notice the lost connection");
	assert_true(cleanup_monitor_stale(m, &since));
	assert_true(since > 0);
	/* The loss is the engine's error record: a connection status. */
	assert_int_equal(cleanup_monitor_last_error_record(m)->status, CLEANUP_ECONN);
	s = cleanup_monitor_snapshot(m);
	assert_int_equal(s->nservers, 2); /* the last snapshot stays visible */

	montest_drive_until(m, reconnected, &sw, 10000, "the monitor to reconnect");
	assert_true(strlen(cleanup_monitor_last_error(m)) == 0);

	/* Listening again on the new connection. */
	job = pgtest_int(c, "SELECT id FROM cleanup.job_create('prune', (SELECT min(id) FROM inventory.libraries))");
	w.job = job;
	w.phase = "collecting";
	cleanup_monitor_set_interval(m, 60000);
	montest_drive_until(m, job_in_phase, &w, 5000, "the new job after reconnecting");
	pgtest_exec(c, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job);
	cleanup_monitor_close(m);
	PQfinish(c);
}

/* Drives M until its own connection is idle (set up, no query in flight)
 * and returns its engine handle. */
static cleanup_engine *idle_engine(cleanup_monitor *m)
{
	double start = cleanup_monitor_now();
	cleanup_engine *e;

	while (!(e = cleanup_monitor_engine_int(m))) {
		struct pollfd p;
		short ev = 0;
		int fd = cleanup_monitor_fd(m, &ev), t = cleanup_monitor_timeout_ms(m, cleanup_monitor_now());

		assert_true(cleanup_monitor_now() - start < 10);
		p.fd = fd;
		p.events = ev;
		p.revents = 0;
		poll(&p, fd >= 0 ? 1 : 0, t < 0 || t > 50 ? 50 : t);
		cleanup_monitor_service(m, cleanup_monitor_now());
	}
	return e;
}

/* A write on the monitor's session is refused by the server with 25006
 * (read_only_sql_transaction), and the monitor goes on refreshing. */
static void assert_session_read_only(cleanup_monitor *m, PGconn *c, const char *when)
{
	cleanup_engine *e = idle_engine(m);
	cleanup_error err;
	uint64_t seq = cleanup_monitor_snapshot(m)->seq;
	int rc;

	cleanup_error_clear(&err);
	rc = cleanup_engine_exec(e, "CREATE TABLE public.monitor_ro_probe (i int)", &err);
	if (rc == CLEANUP_OK)
		fprintf(stderr, "%s: the monitor's session wrote (created a table)\n", when);
	assert_int_not_equal(rc, CLEANUP_OK);
	assert_string_equal(err.sqlstate, "25006");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM pg_class WHERE relname = 'monitor_ro_probe'"), 0);
	cleanup_monitor_refresh_now(m);
	montest_drive_until(m, has_snapshot, &seq, 5000, "a refresh after the refused write");
}

/* The console's data source changes nothing. Its session is
 * read-only (SET default_transaction_read_only = on in the monitor's
 * setup), on the first connection and again after a reconnect: a write
 * through the monitor's own connection gets SQLSTATE 25006. */
static void test_monitor_session_is_read_only(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "ro-check");
	cleanup_monitor *m;
	struct stale_wait sw;
	uint64_t zero = 0;

	(void)state;
	m = open_monitor(60000, -1, 0);
	montest_drive_until(m, has_snapshot, &zero, 5000, "the first snapshot");
	assert_session_read_only(m, c, "first connection");
	sw.m = m;
	sw.old_pid = cleanup_monitor_backend_pid(m);
	pgtest_exec(c, "SELECT pg_terminate_backend(%d)", sw.old_pid);
	montest_drive_until(m, went_stale, &sw, 5000, "the monitor to notice the lost connection");
	montest_drive_until(m, reconnected, &sw, 10000, "the monitor to reconnect");
	assert_session_read_only(m, c, "after the reconnect");
	cleanup_monitor_close(m);
	PQfinish(c);
}

/* A server that does not answer: the monitor keeps trying with backoff and
 * reports the error; nothing blocks. */
static void test_unreachable_server_backs_off(void **state)
{
	cleanup_monitor_opts o = {0};
	cleanup_monitor *m = NULL;
	cleanup_error err;
	double start = cleanup_monitor_now(), now;
	int calls = 0;

	(void)state;
	o.conninfo = "host=/nonexistent-socket-dir port=1 dbname=cleanup_lab password=monitor-secret-42";
	o.backoff_initial_ms = 20;
	o.backoff_max_ms = 80;
	assert_int_equal(cleanup_monitor_open(&m, &o, &err), CLEANUP_OK);
	do {
		now = cleanup_monitor_now();
		cleanup_monitor_service(m, now);
		calls++;
		poll(NULL, 0, 5);
	} while (now - start < 0.5);
	assert_int_not_equal(cleanup_monitor_get_state(m), CLEANUP_MON_READY);
	assert_true(cleanup_monitor_attempts(m) >= 3);
	assert_true(cleanup_monitor_attempts(m) < calls);
	assert_non_null(strstr(cleanup_monitor_last_error(m), "cannot connect"));
	/* The engine's connect error: the conninfo shown, its password not. */
	assert_non_null(strstr(cleanup_monitor_last_error(m), "host=/nonexistent-socket-dir"));
	assert_null(strstr(cleanup_monitor_last_error(m), "monitor-secret-42"));
	assert_int_equal(cleanup_monitor_last_error_record(m)->status, CLEANUP_ECONN);
	assert_int_equal(cleanup_monitor_snapshot(m)->seq, 0);
	assert_int_equal(cleanup_monitor_wait(m, 0, 100, &err), CLEANUP_ECONN);
	cleanup_monitor_close(m);
}

struct lock_wait {
	int blocked_pid;
	int blocker_pid;
};

static bool lock_tree_shows(const cleanup_mon_snapshot *s, void *arg)
{
	struct lock_wait *w = arg;
	size_t i;

	for (i = 0; i < s->nlocks; i++)
		if (s->locks[i].pid == w->blocked_pid && cleanup_lock_blocked_by(&s->locks[i], w->blocker_pid))
			return true;
	return false;
}

static bool locks_timed_out(const cleanup_mon_snapshot *s, void *arg)
{
	(void)arg;
	return strstr(s->locks_error, "timed out") != NULL;
}

static bool locks_ok(const cleanup_mon_snapshot *s, void *arg)
{
	(void)arg;
	return s->locks_valid && s->locks_error[0] == '\0';
}

/* The lock tree: a writer blocked behind another transaction's row lock
 * shows with its blocker, and the writer's application_name. */
static void test_lock_tree_shows_blocked_writer(void **state)
{
	PGconn *a = pgtest_connect(conninfo, "holder");
	PGconn *b = pgtest_connect(conninfo, "cleanupctl:writer:test");
	cleanup_monitor *m = open_monitor(1000, 100, 0);
	const cleanup_mon_snapshot *s;
	struct lock_wait w;
	size_t i;
	bool found = false;

	(void)state;
	w.blocker_pid = PQbackendPID(a);
	w.blocked_pid = PQbackendPID(b);
	pgtest_begin(a, "UPDATE inventory.media_servers SET name = name WHERE id = 2");
	pgtest_send(b, "UPDATE inventory.media_servers SET name = name WHERE id = 2");
	pgtest_wait_blocked(a, w.blocked_pid, 5000);
	montest_drive_until(m, lock_tree_shows, &w, 5000, "the blocked writer in the lock tree");
	s = cleanup_monitor_snapshot(m);
	for (i = 0; i < s->nlocks; i++) {
		if (s->locks[i].pid == w.blocked_pid) {
			found = true;
			assert_string_equal(s->locks[i].application_name, "cleanupctl:writer:test");
			assert_int_equal(s->locks[i].job_id, -1);
			assert_true(s->locks[i].wait_ms >= 0);
		}
	}
	assert_true(found);
	assert_string_equal(s->locks_error, "");
	pgtest_exec(a, "COMMIT");
	assert_string_equal(pgtest_finish(b), "");
	cleanup_monitor_close(m);
	pgtest_close_all(a, b, NULL);
}

/* When the lock query cannot finish within its statement_timeout (here a
 * session holds an exclusive lock on a catalog the query reads), the
 * snapshot says "locks: timed out" and the other panels keep refreshing;
 * once the lock is gone the lock rows come back. */
static void test_lock_query_timeout_degrades(void **state)
{
	PGconn *a = pgtest_connect(conninfo, "catalog-locker");
	cleanup_monitor *m = open_monitor(100, 100, 50);
	uint64_t seq, zero = 0;

	(void)state;
	montest_drive_until(m, locks_ok, &zero, 5000, "a first lock snapshot");
	pgtest_begin(a, "LOCK TABLE pg_catalog.pg_namespace IN ACCESS EXCLUSIVE MODE");
	montest_drive_until(m, locks_timed_out, &zero, 5000, "the lock query to time out");
	assert_true(cleanup_monitor_snapshot(m)->locks_valid); /* earlier rows kept */
	/* The rest of the dashboard keeps refreshing meanwhile. */
	seq = cleanup_monitor_snapshot(m)->seq;
	montest_drive_until(m, has_snapshot, &seq, 5000, "a refresh while the lock query times out");
	assert_int_equal(cleanup_monitor_get_state(m), CLEANUP_MON_READY);
	pgtest_exec(a, "ROLLBACK");
	montest_drive_until(m, locks_ok, &zero, 5000, "the lock query to recover");
	cleanup_monitor_close(m);
	PQfinish(a);
}

/* A paused display keeps a deep copy while the monitor goes on. */
static void test_snapshot_copy(void **state)
{
	cleanup_monitor *m = open_monitor(1000, -1, 0);
	cleanup_mon_snapshot *copy = NULL;
	cleanup_error err;
	uint64_t zero = 0;

	(void)state;
	montest_drive_until(m, has_snapshot, &zero, 5000, "the first snapshot");
	assert_int_equal(cleanup_mon_snapshot_copy(&copy, cleanup_monitor_snapshot(m), &err), CLEANUP_OK);
	cleanup_monitor_close(m);
	assert_int_equal(copy->nservers, 2);
	assert_string_equal(copy->servers[1].row.name, "server-2");
	cleanup_mon_snapshot_free(copy);
}

PGTEST_MAIN(cmocka_unit_test(test_snapshot_contents),
            cmocka_unit_test(test_notify_from_another_connection_triggers_refresh),
            cmocka_unit_test(test_reconnect_after_terminate_backend),
            cmocka_unit_test(test_monitor_session_is_read_only),
            cmocka_unit_test(test_unreachable_server_backs_off),
            cmocka_unit_test(test_lock_tree_shows_blocked_writer),
            cmocka_unit_test(test_lock_query_timeout_degrades), cmocka_unit_test(test_snapshot_copy))
