/* What the console shows, through its monitor (cleanup/monitor.h) against
 * the real PostgreSQL: the log keeps engine events under a
 * rejection storm, the "last 60 s" contention list holds only the last 60
 * seconds, the step rate counts every step, the pace window of a draining
 * job, the runner of a job (and a second runner refused, naming it, by the
 * engine and by `job run` with exit 3), where the console is connected,
 * the step history paged from its first step, the libraries' count states
 * in words, and refresh queries that time out degrading to the previous
 * rows marked stale instead of waiting. */
#include "cleanup/monitor.h"
#include "cleanup/runner.h"
#include "cleanup/step.h"
#include "montest.h"
#include "pgtest.h"
#include "progress.h"
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PGTEST_DB_GROUP(conninfo, pgtest_seeded_db("console_monitor", 2, 2, 600))

static cleanup_monitor *open_monitor(void)
{
	cleanup_monitor_opts o = {0};
	cleanup_monitor *m = NULL;
	cleanup_error err;

	o.conninfo = conninfo;
	o.refresh_ms = 100;
	o.locks_ms = -1;
	assert_int_equal(cleanup_monitor_open(&m, &o, &err), CLEANUP_OK);
	return m;
}

/* PRED of a snapshot newer than SEQ0. */
struct newer_than {
	snap_pred pred;
	void *arg;
	uint64_t seq0;
};

static bool newer_and(const cleanup_mon_snapshot *s, void *arg)
{
	struct newer_than *n = arg;

	return s->seq > n->seq0 && n->pred(s, n->arg);
}

/* Drives M until PRED holds for a snapshot newer than the one at the call
 * (fails the test after TIMEOUT_MS). */
static const cleanup_mon_snapshot *drive_until(cleanup_monitor *m, snap_pred pred, void *arg, int timeout_ms,
                                               const char *what)
{
	struct newer_than n = {pred, arg, cleanup_monitor_snapshot(m)->seq};

	cleanup_monitor_refresh_now(m);
	montest_drive_until(m, newer_and, &n, timeout_ms, what);
	return cleanup_monitor_snapshot(m);
}

static bool any(const cleanup_mon_snapshot *s, void *arg)
{
	(void)s;
	(void)arg;
	return true;
}

/* With 3,000 rejections newer than them, "created job N"
 * and the other engine events are still in the log (the log took the 2,000
 * newest events and only then dropped rejections). */
static void test_log_keeps_engine_events_under_a_rejection_storm(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_monitor *m = open_monitor();
	const cleanup_mon_snapshot *s;
	int64_t job;
	size_t i;
	bool created = false, rejected = false;

	(void)state;
	job = pgtest_job_create(o, "prune", 3);
	pgtest_exec(o, "INSERT INTO cleanup.events (kind, source, message) SELECT 'rejected', 'cleanupctl:writer:1', "
	               "'insert into library 3 refused' FROM generate_series(1, 3000)");
	s = drive_until(m, any, NULL, 10000, "a snapshot");
	for (i = 0; i < s->nevents; i++) {
		if (!s->events[i].audit && s->events[i].job_id == job && strcmp(s->events[i].kind, "created") == 0)
			created = true;
		if (strcmp(s->events[i].kind, "rejected") == 0)
			rejected = true;
	}
	assert_true(created);
	assert_false(rejected); /* they are counted by the contention panel instead */

	/* Read incrementally: a new engine event after more rejections shows,
	 * and the events read before stay. */
	pgtest_exec(o, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job);
	pgtest_exec(o, "INSERT INTO cleanup.events (kind, source, message) SELECT 'rejected', 'cleanupctl:writer:1', "
	               "'insert into library 3 refused' FROM generate_series(1, 3000)");
	s = drive_until(m, any, NULL, 10000, "a snapshot");
	created = false;
	{
		int cancelled = 0;

		for (i = 0; i < s->nevents; i++) {
			if (s->events[i].audit || s->events[i].job_id != job)
				continue;
			if (strcmp(s->events[i].kind, "created") == 0)
				created = true;
			else if (strstr(s->events[i].message, "cancel"))
				cancelled++;
			assert_string_not_equal(s->events[i].kind, "rejected");
		}
		assert_true(created);
		assert_int_equal(cancelled, 1); /* once, though read within the margin twice */
	}
	cleanup_monitor_close(m);
	PQfinish(o);
}

/* "rejections and busy retries, last 60 s" lists only
 * entries of the last 60 seconds, like its counts. */
static void test_contention_list_holds_only_the_last_60_seconds(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_monitor *m = open_monitor();
	const cleanup_mon_snapshot *s;
	size_t i;
	bool fresh = false;

	(void)state;
	pgtest_exec(o, "INSERT INTO cleanup.events (at, kind, source, message) VALUES "
	               "(clock_timestamp() - interval '8 minutes', 'rejected', 'cleanupctl:writer:9', 'eight minutes old'), "
	               "(clock_timestamp(), 'busy', 'cleanupctl:job:1:run', 'just now')");
	s = drive_until(m, any, NULL, 10000, "a snapshot");
	for (i = 0; i < s->ncontention; i++) {
		assert_null(strstr(s->contention[i].message, "eight minutes old"));
		assert_string_not_equal(s->contention[i].source, "cleanupctl:writer:9");
		if (!s->contention[i].count && strcmp(s->contention[i].message, "just now") == 0)
			fresh = true;
	}
	assert_true(fresh);
	cleanup_monitor_close(m);
	PQfinish(o);
}

struct rate_wait {
	int64_t job;
	uint32_t want;
};

static bool rate_counted(const cleanup_mon_snapshot *s, void *arg)
{
	const struct rate_wait *w = arg;
	uint32_t sum = 0;
	int i;

	if (s->rate_job_id != w->job)
		return false;
	for (i = 0; i < CLEANUP_MON_RATE_SECONDS; i++)
		sum += s->rate[i];
	return sum >= w->want;
}

/* The step-rate sparkline counts every step of the last
 * two minutes, not the 60 listed ones (1,118 steps in 14 s showed as one
 * bar "max 54/s"). 300 steps in 3 s: 300 counted, and steps added later
 * are counted once each. */
static void test_step_rate_counts_every_step(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_monitor *m = open_monitor();
	const cleanup_mon_snapshot *s;
	struct rate_wait w;
	uint32_t sum = 0, max = 0;
	int64_t job;
	int i;

	(void)state;
	job = pgtest_job_create(o, "prune", 4);
	pgtest_exec(o, "INSERT INTO cleanup.job_steps (job_id, step_no, action, pass_no, examined, visited, deleted, kept, "
	               "phase_after, started_at, duration_ms, lock_hold_ms) "
	               "SELECT %lld, g, 'drain', 1, 1, 0, 0, 1, 'draining', clock_timestamp() - (300 - g) * interval '10 ms', "
	               "1, 1 FROM generate_series(1, 300) g",
	            (long long)job);
	cleanup_monitor_set_detail_job(m, job);
	w.job = job;
	w.want = 300;
	s = drive_until(m, rate_counted, &w, 10000, "300 steps in the rate");
	assert_int_equal(s->nsteps, 60);
	for (i = 0; i < CLEANUP_MON_RATE_SECONDS; i++) {
		sum += s->rate[i];
		if (s->rate[i] > max)
			max = s->rate[i];
	}
	assert_int_equal(sum, 300);
	assert_true(max >= 75); /* 100 a second, at most split over two seconds */
	pgtest_exec(o, "INSERT INTO cleanup.job_steps (job_id, step_no, action, pass_no, examined, visited, deleted, kept, "
	               "phase_after, started_at, duration_ms, lock_hold_ms) "
	               "SELECT %lld, g, 'drain', 1, 1, 0, 0, 1, 'draining', clock_timestamp(), 1, 1 "
	               "FROM generate_series(301, 310) g",
	            (long long)job);
	w.want = 310;
	s = drive_until(m, rate_counted, &w, 10000, "310 steps in the rate");
	for (sum = 0, i = 0; i < CLEANUP_MON_RATE_SECONDS; i++)
		sum += s->rate[i];
	assert_int_equal(sum, 310);
	pgtest_exec(o, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job);
	cleanup_monitor_close(m);
	PQfinish(o);
}

struct job_wait {
	int64_t job;
	int steps;
	int runner;  /* 1: a runner, 0: none, -1: either */
};

static bool job_seen(const cleanup_mon_snapshot *s, void *arg)
{
	const struct job_wait *w = arg;
	const cleanup_mon_job *v = montest_find_job(s, w->job);

	return v && v->job.step_no >= w->steps && (w->runner < 0 || (v->runner_pid > 0) == (w->runner == 1));
}

/* A draining job's pace window holds its recent steps and
 * their settled rows, read from the step records (not capped at 20). */
static void test_pace_window_of_a_draining_job(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *e = pgtest_engine(conninfo);
	cleanup_monitor *m = open_monitor();
	const cleanup_mon_snapshot *s;
	const cleanup_mon_job *v;
	cleanup_run_opts opts;
	cleanup_run_summary sum;
	cleanup_error err;
	struct job_wait w;
	int64_t job, settled;

	(void)state;
	job = pgtest_draining_prune(o, 1);
	memset(&opts, 0, sizeof opts);
	opts.max_steps = 4;
	assert_int_equal(cleanup_job_run(&sum, e, job, &opts, &err), CLEANUP_OK);
	cleanup_job_reset(&sum.job);
	w.job = job;
	w.steps = 4;
	w.runner = 0;
	s = drive_until(m, job_seen, &w, 10000, "the job after 4 steps");
	v = montest_find_job(s, job);
	settled = pgtest_int(o, "SELECT sum(deleted + moved + absent + kept) FROM cleanup.job_steps WHERE job_id = %lld",
	                     (long long)job);
	assert_int_equal(v->window_steps, 4);
	assert_int_equal(v->window_rows, settled);
	assert_true(settled > 0);
	assert_true(v->window_first_start > 0 && v->window_last_end > v->window_first_start);
	assert_true(v->last_step_age_s >= 0 && v->last_step_age_s < 60);
	assert_int_equal(v->runner_pid, 0); /* the run ended: nobody runs it now */
	assert_true(v->unattended_s >= 0);
	cleanup_engine_close(e);
	cleanup_monitor_close(m);
	PQfinish(o);
}

/* F2 and F2: the holder of a job's runner
 * lease is its runner, shown with its backend pid and application; a
 * second run of the job is refused (EBUSY) naming it, and so is
 * `cleanupctl job run` (exit 3, busy); when the holder's backend ends the
 * job has no runner (a direct lease dies with its backend). */
static void test_runner_shown_and_second_runner_refused_naming_it(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_engine *holder = NULL, *second = pgtest_engine(conninfo);
	cleanup_monitor *m = open_monitor();
	const cleanup_mon_snapshot *s;
	const cleanup_mon_job *v;
	cleanup_run_summary sum;
	cleanup_error err;
	struct job_wait w;
	char needle[64], *out = NULL;
	cleanup_runner *hr = NULL;
	int64_t job;
	int pid, rc;

	(void)state;
	job = pgtest_draining_prune(o, 3); /* server 2: server 1 has the job of the pace test */
	assert_int_equal(cleanup_engine_open(&holder, conninfo, "cleanupctl:job:99:run", &err), CLEANUP_OK);
	assert_int_equal(cleanup_runner_open(&hr, holder, job, NULL, NULL, &err), CLEANUP_OK);
	pid = cleanup_engine_backend_pid(holder);
	w.job = job;
	w.steps = 0;
	w.runner = 1;
	s = drive_until(m, job_seen, &w, 10000, "the job's runner");
	v = montest_find_job(s, job);
	assert_int_equal(v->runner_pid, pid);
	assert_string_equal(v->runner_app, "cleanupctl:job:99:run");
	assert_true(v->runner_client[0] != '\0');
	assert_true(v->runner_since[0] != '\0');

	/* The engine refuses a second runner and names the first. */
	snprintf(needle, sizeof needle, "already being run by backend %d", pid);
	assert_int_equal(cleanup_job_run(&sum, second, job, NULL, &err), CLEANUP_EBUSY);
	assert_non_null(strstr(err.message, needle));
	assert_non_null(strstr(err.message, "cleanupctl:job:99:run"));
	assert_int_equal(sum.steps, 0);
	cleanup_job_reset(&sum.job);
	assert_int_equal(pgtest_int(o, "SELECT step_no FROM cleanup.jobs WHERE id = %lld", (long long)job), 0);

	/* So does the CLI: exit 3 (busy), the holder named. */
	rc = pgtest_sh(&out, "'%s' --db '%s' job run %lld 2>&1", pgtest_cleanupctl(), conninfo, (long long)job);
	assert_int_equal(rc, 3);
	assert_non_null(out);
	assert_non_null(strstr(out, needle));
	free(out);
	assert_int_equal(pgtest_int(o, "SELECT step_no FROM cleanup.jobs WHERE id = %lld", (long long)job), 0);

	/* The holder's backend ends: no runner, and the job can be run. */
	pgtest_exec(o, "SELECT pg_terminate_backend(%d)", pid);
	w.runner = 0;
	s = drive_until(m, job_seen, &w, 10000, "no runner");
	v = montest_find_job(s, job);
	assert_int_equal(v->runner_pid, 0);
	assert_true(v->unattended_s >= 0);
	cleanup_runner_close(hr, NULL, NULL); /* reconnects once to end its lease */
	cleanup_engine_close(holder);
	memset(&sum, 0, sizeof sum);
	{
		cleanup_run_opts opts;

		memset(&opts, 0, sizeof opts);
		opts.max_steps = 1;
		assert_int_equal(cleanup_job_run(&sum, second, job, &opts, &err), CLEANUP_OK);
		assert_int_equal(sum.steps, 1);
		cleanup_job_reset(&sum.job);
	}
	/* The run ended its lease: another runner may open it now. */
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.job_runners WHERE job_id = %lld", (long long)job), 0);
	assert_int_equal(cleanup_engine_open(&holder, conninfo, "observer2", &err), CLEANUP_OK);
	assert_int_equal(cleanup_runner_open(&hr, holder, job, NULL, NULL, &err), CLEANUP_OK);
	assert_int_equal(cleanup_runner_close(hr, NULL, &err), CLEANUP_OK);
	cleanup_engine_close(holder);
	cleanup_engine_close(second);
	cleanup_monitor_close(m);
	PQfinish(o);
}

/* Where the console is: user@host:port/db and the
 * server's version. */
static void test_monitor_says_where_it_is_connected(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_monitor *m = open_monitor();
	char where[300], version[40], *db, *user, *port, want[200];

	(void)state;
	cleanup_monitor_server(m, where, sizeof where, version, sizeof version);
	assert_string_equal(where, "");
	drive_until(m, any, NULL, 10000, "a snapshot");
	cleanup_monitor_server(m, where, sizeof where, version, sizeof version);
	db = pgtest_text(o, "SELECT current_database()");
	user = pgtest_text(o, "SELECT current_user");
	port = pgtest_text(o, "SELECT current_setting('port')");
	snprintf(want, sizeof want, "%s@", user);
	assert_true(strncmp(where, want, strlen(want)) == 0);
	snprintf(want, sizeof want, ":%s/%s", port, db);
	assert_non_null(strstr(where, want));
	assert_true(strncmp(version, "15", 2) == 0);
	free(db);
	free(user);
	free(port);
	cleanup_monitor_close(m);
	PQfinish(o);
}

/* A library of its own on a server of its own (no other test's job in the
 * way); ITEMS items ext-h11-<n>. Returns its id. */
static int64_t own_library(PGconn *o, const char *name, int items)
{
	int64_t srv = pgtest_int(o, "INSERT INTO inventory.media_servers (name) VALUES ('%s') RETURNING id", name);
	int64_t lib =
		pgtest_int(o, "INSERT INTO inventory.libraries (server_id, name) VALUES (%lld, '%s') RETURNING id", (long long)srv, name);

	if (items > 0)
		pgtest_exec(o, "INSERT INTO inventory.items (library_id, external_id, title) "
		               "SELECT %lld, '%s-' || g, 'T' FROM generate_series(1, %d) g",
		            (long long)lib, name, items);
	return lib;
}

struct page_wait {
	int64_t job;
	int64_t upto;
	int first;
};

static bool page_read(const cleanup_mon_snapshot *s, void *arg)
{
	const struct page_wait *w = arg;

	return s->detail_job_id == w->job && s->steps_upto == w->upto && s->nsteps > 0 && s->steps[0].step_no == w->first;
}

/* The detail's step history pages back to the first
 * step (not only the newest 60): each page is the steps numbered at most
 * steps_upto, newest first and contiguous, with each step's cursor and the
 * gap since the step before it (a 5 s pause between steps 150 and 151). */
static void test_step_history_pages_back_to_the_first_step(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_monitor *m = open_monitor();
	const cleanup_mon_snapshot *s;
	struct page_wait w;
	int64_t lib = own_library(o, "h11-history", 0), job;
	size_t i;

	(void)state;
	job = pgtest_job_create(o, "prune", lib);
	pgtest_exec(o, "INSERT INTO cleanup.job_steps (job_id, step_no, action, pass_no, library_id, cursor_from, cursor_to, "
	               "examined, visited, deleted, kept, phase_after, started_at, duration_ms, lock_hold_ms) "
	               "SELECT %lld, g, 'drain', 1, %lld, (g - 1) * 128, g * 128, 1, 0, 0, 1, 'draining', "
	               "clock_timestamp() - interval '20 s' + g * interval '10 ms' + CASE WHEN g > 150 THEN interval '5 s' "
	               "ELSE interval '0 s' END, 1, 1 FROM generate_series(1, 300) g",
	            (long long)job, (long long)lib);
	cleanup_monitor_set_detail_job(m, job);
	w.job = job;
	w.upto = -1;
	w.first = 300;
	s = drive_until(m, page_read, &w, 10000, "the newest page");
	assert_int_equal(s->nsteps, 60);
	assert_int_equal(s->steps[59].step_no, 241);

	cleanup_monitor_set_steps_upto(m, 151);
	w.upto = 151;
	w.first = 151;
	s = drive_until(m, page_read, &w, 10000, "the page of steps up to 151");
	assert_int_equal(s->nsteps, 60);
	for (i = 0; i < s->nsteps; i++)
		assert_int_equal(s->steps[i].step_no, 151 - (int)i);
	assert_true(s->steps[0].gap_s > 4.9 && s->steps[0].gap_s < 5.1);
	assert_true(s->steps[1].gap_s >= 0 && s->steps[1].gap_s < 0.1);
	assert_int_equal(s->steps[0].cursor_from, 150 * 128);
	assert_int_equal(s->steps[0].cursor_to, 151 * 128);
	assert_int_equal(s->steps[0].library_id, lib);

	cleanup_monitor_set_steps_upto(m, 1);
	w.upto = 1;
	w.first = 1;
	s = drive_until(m, page_read, &w, 10000, "the first step");
	assert_int_equal(s->nsteps, 1);
	assert_true(s->steps[0].gap_s < 0); /* none before the first */

	/* another job: its newest page again */
	cleanup_monitor_set_detail_job(m, -1);
	cleanup_monitor_set_detail_job(m, job);
	w.upto = -1;
	w.first = 300;
	drive_until(m, page_read, &w, 10000, "the newest page after choosing the job again");
	pgtest_exec(o, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job);
	cleanup_monitor_close(m);
	PQfinish(o);
}

struct count_wait {
	int64_t lib;
	const char *state;
};

static const cleanup_mon_library *find_library(const cleanup_mon_snapshot *s, int64_t id)
{
	size_t i;

	for (i = 0; i < s->nlibraries; i++)
		if (s->libraries[i].row.id == id)
			return &s->libraries[i];
	return NULL;
}

static bool count_state_is(const cleanup_mon_snapshot *s, void *arg)
{
	const struct count_wait *w = arg;
	const cleanup_mon_library *l = find_library(s, w->lib);

	return l && strcmp(l->count_state, w->state) == 0;
}

/* Seed 002 (the console's part): the monitor's library rows carry the count
 * cache's state and reason in words, and item_count is the count itself:
 * the counter's for an unwatched library, the published count when fresh,
 * -1 while the cache withholds it (restart required, with the reason). */
static void test_library_rows_carry_count_state_and_reason(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_monitor *m = open_monitor();
	const cleanup_mon_snapshot *s;
	const cleanup_mon_library *l;
	struct count_wait w;
	int64_t lib = own_library(o, "h11-counted", 250);
	int i;

	(void)state;
	w.lib = lib;
	w.state = "unwatched";
	s = drive_until(m, count_state_is, &w, 10000, "an unwatched library");
	l = find_library(s, lib);
	assert_int_equal(l->row.item_count, 250);
	assert_non_null(strstr(l->count_reason, "not watched"));

	for (i = 0; i < 4; i++) /* watch, build, publish */
		pgtest_exec(o, "SELECT cleanup.count_visit(%lld)", (long long)lib);
	w.state = "fresh";
	s = drive_until(m, count_state_is, &w, 10000, "a fresh count");
	l = find_library(s, lib);
	assert_int_equal(l->row.item_count, 250);
	assert_string_equal(l->count_reason, "");

	pgtest_exec(o, "UPDATE cleanup.count_registry SET restart_reason = 'h11 test' WHERE library_id = %lld",
	            (long long)lib);
	w.state = "withheld";
	s = drive_until(m, count_state_is, &w, 10000, "a withheld count");
	l = find_library(s, lib);
	assert_int_equal(l->row.item_count, -1);
	assert_string_equal(l->count_reason, "restart required: h11 test");
	pgtest_exec(o, "SELECT cleanup.count_release(slot) FROM cleanup.count_registry WHERE library_id = %lld",
	            (long long)lib);
	cleanup_monitor_close(m);
	PQfinish(o);
}

static bool parts_stale(const cleanup_mon_snapshot *s, void *arg)
{
	return s->stale_parts == *(unsigned *)arg;
}

/* With library_stats locked by another
 * session, the refresh queries that read it (servers, libraries) time out
 * after the monitor's statement_timeout; the snapshot keeps their previous
 * rows, marked stale since the time they were read, and the other parts go
 * on refreshing. Unlocked, every part is fresh again. */
static void test_refresh_query_timeout_keeps_previous_rows_marked_stale(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer"), *locker = pgtest_connect(conninfo, "locker");
	cleanup_monitor_opts opts = {0};
	cleanup_monitor *m = NULL;
	const cleanup_mon_snapshot *s;
	cleanup_error err;
	unsigned want = CLEANUP_MON_PART_SERVERS | CLEANUP_MON_PART_LIBRARIES, none = 0;
	size_t nlibs;
	double first_at;
	int64_t job, lib = own_library(o, "h11-timeout", 0);

	(void)state;
	opts.conninfo = conninfo;
	opts.refresh_ms = 100;
	opts.locks_ms = -1;
	opts.query_timeout_ms = 300;
	assert_int_equal(cleanup_monitor_open(&m, &opts, &err), CLEANUP_OK);
	s = drive_until(m, any, NULL, 10000, "a first snapshot");
	nlibs = s->nlibraries;
	assert_true(nlibs > 0);
	assert_int_equal(s->stale_parts, 0);
	first_at = s->taken_at;

	pgtest_begin(locker, "LOCK TABLE cleanup.library_stats IN ACCESS EXCLUSIVE MODE");
	job = pgtest_job_create(o, "prune", lib);
	s = drive_until(m, parts_stale, &want, 10000, "servers and libraries stale");
	assert_int_equal(s->nlibraries, nlibs);
	assert_true(s->stale_parts_at >= first_at && s->stale_parts_at < s->taken_at);
	assert_non_null(montest_find_job(s, job)); /* the jobs went on refreshing */
	assert_int_equal(cleanup_monitor_stale(m, NULL), false);

	pgtest_exec(locker, "ROLLBACK");
	drive_until(m, parts_stale, &none, 10000, "every part fresh again");
	pgtest_exec(o, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job);
	cleanup_monitor_close(m);
	pgtest_close_all(locker, o, NULL);
}

struct same_wait {
	int64_t job;
};

static bool runner_and_window(const cleanup_mon_snapshot *s, void *arg)
{
	const cleanup_mon_job *v = montest_find_job(s, ((struct same_wait *)arg)->job);

	return v && v->runner_pid > 0 && v->window_steps == 10;
}

/* The console and the CLI print the same progress
 * and ETA for the same job at the same moment. A draining job with 100 of
 * 300 rows settled in 10 steps of the last 10 s and a runner: the console's
 * line comes from the monitor's snapshot (mon_jobs.sql's window, in SQL);
 * `job run`'s from the run's own window of the same step records
 * (tui_step_window, in C), at the snapshot's moment. Both are
 * tui_job_progress_line; what could differ is how each front end gets the
 * window and the job, and that is what is compared. */
static void test_cli_and_console_print_the_same_progress_and_eta(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer"), *runner = pgtest_connect(conninfo, "h11-runner");
	cleanup_monitor *m = open_monitor();
	const cleanup_mon_snapshot *s;
	const cleanup_mon_job *v;
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_job job;
	tui_step_window *w = calloc(1, sizeof *w);
	struct same_wait sw;
	char console_line[256], cli_line[256];
	int64_t lib = own_library(o, "h11-same", 300), id;
	double now;
	PGresult *res;
	int i;

	(void)state;
	assert_non_null(w);
	id = pgtest_draining_prune(o, lib);
	assert_int_equal(pgtest_int(o, "SELECT total_estimate FROM cleanup.jobs WHERE id = %lld", (long long)id), 300);
	pgtest_exec(o, "INSERT INTO cleanup.job_steps (job_id, step_no, action, pass_no, library_id, examined, visited, "
	               "deleted, mutations, phase_after, started_at, duration_ms, lock_hold_ms) "
	               "SELECT %lld, g, 'drain', 1, %lld, 10, 10, 10, 10, 'draining', "
	               "clock_timestamp() - interval '11 s' + g * interval '1 s', 100, 1 FROM generate_series(1, 10) g",
	            (long long)id, (long long)lib);
	pgtest_exec(o, "UPDATE cleanup.jobs SET step_no = 10, examined = 100, visited = 100, deleted = 100 WHERE id = %lld",
	            (long long)id);
	/* a runner's lease, taken before the steps, on the runner's backend */
	pgtest_exec(runner,
	            "INSERT INTO cleanup.job_runners (job_id, token, host, os_pid, application, direct, backend_pid, "
	            "server_start, started_at, renewed_at, ttl) VALUES (%lld, 42, 'h11-host', 4242, 'h11-runner', true, "
	            "pg_backend_pid(), pg_postmaster_start_time(), clock_timestamp() - interval '1 min', clock_timestamp(), "
	            "interval '10 min')",
	            (long long)id);
	sw.job = id;
	s = drive_until(m, runner_and_window, &sw, 10000, "the job with its runner and 10 steps");
	v = montest_find_job(s, id);
	tui_job_progress_line(console_line, sizeof console_line, v);

	/* job run's view: the job as the engine returns it, the steps as the
	 * run saw them commit, at the moment of the snapshot (the server's
	 * now: the newest step's end plus its age) */
	assert_int_equal(cleanup_engine_open(&e, conninfo, "h11-cli", &err), CLEANUP_OK);
	assert_int_equal(cleanup_job_get(&job, e, id, &err), CLEANUP_OK);
	{
		char q[256];

		snprintf(q, sizeof q,
		         "SELECT extract(epoch FROM started_at), duration_ms, deleted + moved + absent + kept "
		         "FROM cleanup.job_steps WHERE job_id = %lld ORDER BY step_no",
		         (long long)id);
		res = PQexec(runner, q);
	}
	assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
	assert_int_equal(PQntuples(res), 10);
	for (i = 0; i < PQntuples(res); i++) {
		double start = strtod(PQgetvalue(res, i, 0), NULL);

		tui_step_window_add(w, start, start + strtod(PQgetvalue(res, i, 1), NULL) / 1000.0,
		                    strtoll(PQgetvalue(res, i, 2), NULL, 10));
	}
	PQclear(res);
	now = v->window_last_end + v->last_step_age_s;
	tui_run_progress_text(cli_line, sizeof cli_line, &job, w, now, 4242);
	fprintf(stderr, "console: %s\ncli:     %s\n", console_line, cli_line);
	assert_string_equal(cli_line, console_line);
	/* and what it says: 100 of 300 settled, a pace over the 10 steps up
	 * to now, an ETA of a time (a runner holds the job) */
	assert_true(strncmp(console_line, "100 of 300 (33.3%), ", 20) == 0);
	assert_non_null(strstr(console_line, "/s, ETA "));
	assert_null(strstr(console_line, "no runner"));
	assert_null(strstr(console_line, "?"));

	/* the runner gone: both say so */
	pgtest_exec(runner, "DELETE FROM cleanup.job_runners WHERE job_id = %lld", (long long)id);
	cleanup_job_reset(&job);
	pgtest_exec(o, "UPDATE cleanup.jobs SET phase = 'completed', finished_at = now() WHERE id = %lld", (long long)id);
	cleanup_engine_close(e);
	free(w);
	cleanup_monitor_close(m);
	pgtest_close_all(runner, o, NULL);
}

/* Each step row of the detail names its runner, the
 * backend pid and application_name of the session that committed it
 * (cleanup.job_steps.runner_pid/runner_app); a step recorded without them
 * (as before 010_step_runner) says none: 0 and "". */
static void test_step_rows_carry_their_runner(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	cleanup_monitor *m = open_monitor();
	cleanup_engine *e = NULL;
	const cleanup_mon_snapshot *s;
	cleanup_run_opts opts;
	cleanup_run_summary sum;
	cleanup_error err;
	struct page_wait w;
	int64_t lib = own_library(o, "h11-runner-steps", 300), job, newest;
	int pid;

	(void)state;
	job = pgtest_draining_prune(o, lib);
	assert_int_equal(cleanup_engine_open(&e, conninfo, "cleanupctl:h11-stepper", &err), CLEANUP_OK);
	pid = cleanup_engine_backend_pid(e);
	assert_true(pid > 0);
	memset(&opts, 0, sizeof opts);
	opts.max_steps = 2;
	assert_int_equal(cleanup_job_run(&sum, e, job, &opts, &err), CLEANUP_OK);
	cleanup_job_reset(&sum.job);
	newest = pgtest_int(o, "SELECT max(step_no) FROM cleanup.job_steps WHERE job_id = %lld", (long long)job);
	assert_true(newest >= 2);
	/* a step recorded without a runner */
	pgtest_exec(o, "INSERT INTO cleanup.job_steps (job_id, step_no, action, pass_no, examined, visited, deleted, kept, "
	               "phase_after, started_at, duration_ms, lock_hold_ms) "
	               "VALUES (%lld, %lld, 'drain', 1, 0, 0, 0, 0, 'draining', clock_timestamp(), 1, 1)",
	            (long long)job, (long long)newest + 1);

	cleanup_monitor_set_detail_job(m, job);
	w.job = job;
	w.upto = -1;
	w.first = (int)newest + 1;
	s = drive_until(m, page_read, &w, 10000, "the job's steps");
	assert_true(s->nsteps >= 3);
	assert_int_equal(s->steps[0].runner_pid, 0);
	assert_string_equal(s->steps[0].runner_app, "");
	assert_int_equal(s->steps[1].step_no, newest);
	assert_int_equal(s->steps[1].runner_pid, pid);
	assert_string_equal(s->steps[1].runner_app, "cleanupctl:h11-stepper");
	assert_int_equal(s->steps[2].runner_pid, pid);
	assert_string_equal(s->steps[2].runner_app, "cleanupctl:h11-stepper");
	/* the job stays draining on its own library (deletion has started:
	 * it cannot be cancelled), as the pace test's does */
	cleanup_engine_close(e);
	cleanup_monitor_close(m);
	PQfinish(o);
}

PGTEST_MAIN(cmocka_unit_test(test_log_keeps_engine_events_under_a_rejection_storm),
            cmocka_unit_test(test_contention_list_holds_only_the_last_60_seconds),
            cmocka_unit_test(test_step_rate_counts_every_step),
            cmocka_unit_test(test_pace_window_of_a_draining_job),
            cmocka_unit_test(test_runner_shown_and_second_runner_refused_naming_it),
            cmocka_unit_test(test_monitor_says_where_it_is_connected),
            cmocka_unit_test(test_step_history_pages_back_to_the_first_step),
            cmocka_unit_test(test_step_rows_carry_their_runner),
            cmocka_unit_test(test_library_rows_carry_count_state_and_reason),
            cmocka_unit_test(test_refresh_query_timeout_keeps_previous_rows_marked_stale),
            cmocka_unit_test(test_cli_and_console_print_the_same_progress_and_eta))
