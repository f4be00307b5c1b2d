/* cleanupctl worker: a long-running runner of cleanup jobs across servers
 * (docs/fleet.md).
 *
 * N runners (threads), each a loop: list the runnable jobs that no runner
 * holds (cleanup_worker_candidates), open a connection for one of them
 * named "cleanupctl:job:<id>:worker/<k>", open the job driver on it
 * (cleanup_runner_open: the job's runner lease, without waiting: a job held
 * by `job run`, the console or another worker is skipped; theirs is refused
 * naming this one; a lost runner's lease is taken over), run it to the end
 * (cleanup_runner_run), close the runner (the lease ends) and the
 * connection. Between jobs a runner keeps one idle connection
 * ("cleanupctl:worker/<k>") to poll.
 *
 * Busy is not a failure for a worker: cleanup_job_run() retries busy steps
 * with bounded backoff; a job still busy after --max-busy answers in a row
 * is released and set aside for a doubling while (1 s to 30 s). A job that
 * fails otherwise is set aside for longer (30 s to 10 min), or, with
 * --idle-exit, for the rest of the worker's life. SIGTERM, SIGHUP or SIGINT: no
 * runner starts another step; the steps in flight commit (with the run
 * loop's pipeline, the one running and at most one already sent); every
 * runner lease is ended; exit 0. One log line (or JSON line) per claimed and
 * per finished job. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/job.h"
#include "cleanup/runner.h"
#include "cleanup/step.h"
#include "cleanup/worker.h"
#include "cli.h"
#include "sanitize.h"

#define WORKER_MAX_RUNNERS 64
#define WORKER_MAX_SERVERS 1000
#define WORKER_CANDIDATES 64
#define SETASIDE_MAX 256
#define BUSY_RETRY_BASE_MS 1000
#define BUSY_RETRY_MAX_MS 30000
#define FAIL_RETRY_BASE_MS 30000
#define FAIL_RETRY_MAX_MS 600000
#define RECONNECT_MAX_MS 30000

extern const cli_command cmd_worker_entry;

/* Set when SIGTERM, SIGHUP or SIGINT arrives; every runner polls it
 * (cleanup_run_opts.interrupt). The signals are blocked in every thread
 * and taken by the main thread with sigtimedwait(), so no handler runs
 * and the main thread can say at once that it is stopping. */
static volatile sig_atomic_t stop_flag;

/* A job this worker set aside after a busy or failed run. */
typedef struct setaside {
	int64_t job_id;
	int failures;    /* runs in a row that ended busy or failed */
	double retry_at; /* monotonic seconds; never again when forever */
	bool forever;    /* failed under --idle-exit */
	bool failed;     /* the last run ended in an error (not busy) */
} setaside;

typedef struct worker {
	cli_ctx *ctx;
	int64_t servers[WORKER_MAX_SERVERS];
	size_t nservers;
	int concurrency;
	double poll_s;
	bool idle_exit;
	int max_busy, backoff_max_ms, timeout_s, sync;
	pthread_mutex_t mu; /* guards what follows, and stdout */
	setaside aside[SETASIDE_MAX];
	size_t naside;
	int completed, interrupted, busy, lost, failed, steps;
	int live; /* runners still in their loop */
	bool standby_said; /* "waiting: a standby" printed, not yet "promoted" */
	bool standby_exit; /* --idle-exit on a standby: exit 5 */
} worker;

typedef struct runner {
	worker *w;
	int k; /* 1..concurrency */
	int claimed;
} runner;

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps up to SECONDS in short slices, ending early on a stop. */
static void nap(double seconds)
{
	double end = mono_s() + seconds;

	while (!stop_flag && mono_s() < end) {
		struct timespec ts = {0, 50 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
}

/* The wall-clock time for log lines, "YYYY-MM-DD HH:MM:SS". */
static const char *stamp(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}

/* The wall-clock time for JSON lines, ISO 8601 with the offset as every
 * document has it (docs/json.md): "YYYY-MM-DDTHH:MM:SS+HH:MM". */
static const char *stamp_json(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	char z[8];
	size_t n;

	localtime_r(&t, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (strftime(z, sizeof z, "%z", &tm) == 5) /* +hhmm -> +hh:mm */
		snprintf(buf + n, len - n, "%.3s:%.2s", z, z + 3);
	return buf;
}

/* --- the set-aside table (under w->mu) ----------------------------------- */

static setaside *aside_find(worker *w, int64_t id)
{
	size_t i;

	for (i = 0; i < w->naside; i++)
		if (w->aside[i].job_id == id)
			return &w->aside[i];
	return NULL;
}

/* True when a runner may try job ID now. *LATER becomes true when the job
 * is set aside only for a while. */
static bool aside_may_try(worker *w, int64_t id, double now, bool *later)
{
	setaside *a = aside_find(w, id);

	if (!a || (!a->forever && a->retry_at <= now))
		return true;
	if (!a->forever)
		*later = true;
	return false;
}

/* Records the end of a run of job ID: BUSY, FAILED, or neither (done or
 * interrupted: forgotten). */
static void aside_note(worker *w, int64_t id, bool busy, bool failed)
{
	setaside *a = aside_find(w, id);

	if (!busy && !failed) {
		if (a)
			*a = w->aside[--w->naside];
		return;
	}
	if (!a) {
		if (w->naside == SETASIDE_MAX) {
			/* Full: forget the oldest entry (it is tried again; no harm). */
			memmove(&w->aside[0], &w->aside[1], (SETASIDE_MAX - 1) * sizeof w->aside[0]);
			w->naside--;
		}
		a = &w->aside[w->naside++];
		memset(a, 0, sizeof *a);
		a->job_id = id;
	}
	a->failures++;
	a->failed = failed;
	a->forever = failed && w->idle_exit;
	a->retry_at = mono_s() + cleanup_worker_retry_ms(a->failures, failed ? FAIL_RETRY_BASE_MS : BUSY_RETRY_BASE_MS,
	                                                 failed ? FAIL_RETRY_MAX_MS : BUSY_RETRY_MAX_MS) / 1000.0;
}

/* --- log lines ----------------------------------------------------------- */

static void log_claimed(runner *r, const cleanup_job *j, int pid)
{
	worker *w = r->w;
	char t[32], kind[48], phase[32];

	pthread_mutex_lock(&w->mu);
	if (w->ctx->json) {
		printf("{\"event\": \"claimed\", \"at\": ");
		cli_json_string(stdout, stamp_json(t, sizeof t));
		printf(", \"runner\": %d, \"job\": {\"id\": %" PRId64 ", \"kind\": ", r->k, j->id);
		cli_json_string(stdout, j->kind);
		printf(", \"server_id\": %" PRId64 ", \"phase\": ", j->server_id);
		cli_json_string(stdout, j->phase);
		printf(", \"step_no\": %d}, \"backend_pid\": %d}\n", j->step_no, pid);
	} else {
		printf("%s worker/%d: claimed job %" PRId64 " (%s, server %" PRId64 ", %s at step %d), backend %d\n",
		       stamp(t, sizeof t), r->k, j->id, tui_sanitize(kind, sizeof kind, j->kind), j->server_id,
		       tui_sanitize(phase, sizeof phase, j->phase), j->step_no, pid);
	}
	fflush(stdout);
	pthread_mutex_unlock(&w->mu);
}

/* RESULT: completed, interrupted, busy, lost (the connection), error. */
static void log_finished(runner *r, int64_t id, const char *result, const cleanup_run_summary *s,
                         const cleanup_error *err, int code)
{
	worker *w = r->w;
	char t[32], a[32], phase[32], msg[1024];

	pthread_mutex_lock(&w->mu);
	if (w->ctx->json) {
		printf("{\"event\": \"finished\", \"at\": ");
		cli_json_string(stdout, stamp_json(t, sizeof t));
		printf(", \"runner\": %d, \"job\": ", r->k);
		if (s->job.json && *s->job.json)
			cli_json_doc(stdout, s->job.json);
		else
			printf("{\"id\": %" PRId64 "}", id);
		printf(", \"result\": ");
		cli_json_string(stdout, result);
		printf(", \"steps_taken\": %d, \"busy_retries\": %d, \"reconnects\": %d, \"elapsed_s\": %.3f", s->steps,
		       s->busy_retries, s->reconnects, s->elapsed_s);
		if (err) {
			printf(", \"error\": ");
			cli_json_error(stdout, err, code, NULL);
		}
		printf("}\n");
	} else {
		printf("%s worker/%d: finished job %" PRId64 ": %s, %d step%s, %s deleted in all, phase %s at step %d, "
		       "%.1f s",
		       stamp(t, sizeof t), r->k, id, result, s->steps, s->steps == 1 ? "" : "s",
		       cli_count(a, sizeof a, s->job.deleted), tui_sanitize(phase, sizeof phase, s->job.phase),
		       s->job.step_no, s->elapsed_s);
		if (s->busy_retries > 0)
			printf(", %d busy answer%s", s->busy_retries, s->busy_retries == 1 ? "" : "s");
		if (err)
			printf(": %s", tui_sanitize(msg, sizeof msg, err->message));
		printf("\n");
	}
	fflush(stdout);
	pthread_mutex_unlock(&w->mu);
}

/* A runner's note that is not about a job (a lost connection). */
static void log_note(runner *r, const char *what, const cleanup_error *err)
{
	worker *w = r->w;
	char t[32], msg[1024];

	pthread_mutex_lock(&w->mu);
	if (w->ctx->json) {
		printf("{\"event\": \"note\", \"at\": ");
		cli_json_string(stdout, stamp_json(t, sizeof t));
		printf(", \"runner\": %d, \"what\": ", r->k);
		cli_json_string(stdout, what);
		printf(", \"error\": ");
		cli_json_error(stdout, err, EXIT_ERROR, NULL);
		printf("}\n");
	} else {
		printf("%s worker/%d: %s: %s\n", stamp(t, sizeof t), r->k, what, tui_sanitize(msg, sizeof msg, err->message));
	}
	fflush(stdout);
	pthread_mutex_unlock(&w->mu);
}

/* The job's lease was taken over from a lost runner (its event row says
 * so too: "runner lost: ..."). */
static void log_took_over(runner *r, int64_t job_id, const cleanup_runner_holder *h)
{
	worker *w = r->w;
	char t[32], host[64], app[64];

	tui_sanitize(host, sizeof host, h->host);
	tui_sanitize(app, sizeof app, h->app);
	pthread_mutex_lock(&w->mu);
	if (w->ctx->json) {
		printf("{\"event\": \"took_over\", \"at\": ");
		cli_json_string(stdout, stamp_json(t, sizeof t));
		printf(", \"runner\": %d, \"job\": %" PRId64 ", \"lost\": {\"host\": ", r->k, job_id);
		cli_json_string(stdout, host);
		printf(", \"os_pid\": %d, \"application\": ", h->os_pid);
		cli_json_string(stdout, app);
		printf(", \"last_step\": %d}}\n", h->last_step);
	} else {
		printf("%s worker/%d: job %" PRId64 ": runner lost: %s:%d (%s), last step %d; taken over\n", stamp(t, sizeof t),
		       r->k, job_id, host, h->os_pid, app, h->last_step);
	}
	fflush(stdout);
	pthread_mutex_unlock(&w->mu);
}

/* A hot standby runs no job (every step writes): the worker waits for a
 * promotion, saying so once (stderr, and a note event with --json), and
 * that it goes on when the server is promoted. With --idle-exit it stops
 * at once (exit 5). Returns true while E is a standby. */
static bool standby_wait(runner *r, cleanup_engine *e)
{
	worker *w = r->w;
	cleanup_error err;
	char t[32];
	bool standby;

	if (cleanup_engine_recheck(e, &err) != CLEANUP_OK)
		return false; /* the candidates query will say what is wrong */
	standby = cleanup_engine_standby(e);
	pthread_mutex_lock(&w->mu);
	if (standby && !w->standby_said) {
		w->standby_said = true;
		fprintf(stderr, "cleanupctl: worker: the server is a hot standby (read-only, in recovery): no job runs here; %s\n",
		        w->idle_exit ? "stopping (--idle-exit)" : "waiting until it is promoted (checked every --poll)");
		if (w->ctx->json) {
			printf("{\"event\": \"standby\", \"at\": ");
			cli_json_string(stdout, stamp_json(t, sizeof t));
			printf(", \"runner\": %d, \"waiting\": %s}\n", r->k, w->idle_exit ? "false" : "true");
		} else {
			printf("%s worker: waiting: the server is a hot standby (read-only)\n", stamp(t, sizeof t));
		}
		fflush(stdout);
	} else if (!standby && w->standby_said) {
		w->standby_said = false;
		fprintf(stderr, "cleanupctl: worker: the server was promoted: claiming jobs again\n");
	}
	if (standby && w->idle_exit)
		w->standby_exit = true;
	pthread_mutex_unlock(&w->mu);
	return standby;
}

/* --- one runner ---------------------------------------------------------- */

/* Runs job C on a connection of its own if this runner can claim it.
 * Returns true when it claimed the job (whatever the run's end). */
static bool try_job(runner *r, const cleanup_worker_candidate *c)
{
	worker *w = r->w;
	char app[64];
	cleanup_engine *e = NULL;
	cleanup_runner_holder holder;
	cleanup_runner_opts ro;
	cleanup_runner *run = NULL;
	cleanup_run_summary sum;
	cleanup_run_opts opts;
	cleanup_error err;
	cleanup_job job;
	bool claimed = false, busy = false, failed = false;
	const char *result;
	int rc;

	memset(&sum, 0, sizeof sum);
	memset(&job, 0, sizeof job);
	snprintf(app, sizeof app, "cleanupctl:job:%" PRId64 ":worker/%d", c->job_id, r->k);
	if (cleanup_engine_open(&e, w->ctx->db, app, &err) != CLEANUP_OK) {
		log_note(r, "connecting", &err);
		return false;
	}
	if (w->timeout_s >= 0 && cleanup_engine_set_timeout(e, w->timeout_s * 1000, &err) != CLEANUP_OK) {
		log_note(r, "setting the statement timeout", &err);
		goto out;
	}
	/* The job driver (cleanup/runner.h): its lease without waiting (a job
	 * another runner took since the list was read is skipped), the job
	 * read once under it, the step commit mode. */
	memset(&ro, 0, sizeof ro);
	ro.claim_grace_s = -1;
	ro.announce = true;
	ro.interrupt = &stop_flag;
	ro.step_commit = w->sync == 1 ? CLEANUP_STEP_COMMIT_SYNC : CLEANUP_STEP_COMMIT_ASYNC;
	rc = cleanup_runner_open(&run, e, c->job_id, &ro, &holder, &err);
	if (rc == CLEANUP_EBUSY)
		goto out; /* another runner holds it */
	if (rc != CLEANUP_OK) {
		log_note(r, "claiming a job", &err);
		goto out;
	}
	/* Still runnable (another runner may have completed it between the
	 * list and the claim)? */
	job = *cleanup_runner_job(run);
	job.json = NULL;
	if (strcmp(job.phase, "draining") != 0 && strcmp(job.phase, "finalizing") != 0)
		goto release;
	claimed = true;
	r->claimed++;
	log_claimed(r, &job, cleanup_engine_backend_pid(e));
	if (cleanup_runner_took_over(run, &holder))
		log_took_over(r, c->job_id, &holder);
	memset(&opts, 0, sizeof opts);
	opts.max_busy_retries = w->max_busy;
	opts.backoff_max_ms = w->backoff_max_ms;
	/* A lost connection (a failover too) or a lost lease ends the run
	 * (the step in flight rolled back) and sets the job aside for a short
	 * while, like busy: a runner killed from the console (K) stops, and
	 * the job is resumed from its last committed step by the next runner
	 * that claims it, this worker's included, a second later, on the
	 * server its conninfo reaches then. A lease this process could not end
	 * (the connection was gone) is taken over at once by its next claim
	 * (cleanup/runner.h). */
	opts.max_reconnects = 0;
	opts.interrupt = &stop_flag;
	rc = cleanup_runner_run(run, &sum, &opts, &err);
	if (rc == CLEANUP_OK && sum.completed)
		result = "completed";
	else if (rc == CLEANUP_OK)
		result = "interrupted";
	else if (rc == CLEANUP_EBUSY) {
		result = "busy";
		busy = true;
	} else if (rc == CLEANUP_ECONN || !cleanup_engine_ok(e) || strcmp(err.sqlstate, "CU470") == 0) {
		/* the connection, or the runner lease (stopped from a console,
		 * taken over after it expired) */
		result = "lost";
		busy = true; /* set aside briefly; not a failure */
	} else {
		result = "error";
		failed = true;
	}
	log_finished(r, c->job_id, result, &sum, failed || busy ? &err : NULL,
	             rc == CLEANUP_EBUSY ? EXIT_BUSY : rc == CLEANUP_EREFUSED ? EXIT_REFUSED : EXIT_ERROR);
	pthread_mutex_lock(&w->mu);
	w->steps += sum.steps;
	if (busy && strcmp(result, "lost") == 0)
		w->lost++;
	else if (busy)
		w->busy++;
	else if (failed)
		w->failed++;
	else if (sum.completed)
		w->completed++;
	else
		w->interrupted++;
	aside_note(w, c->job_id, busy, failed);
	pthread_mutex_unlock(&w->mu);
release:
	/* The lease ends with the run ("runner ended" in the job's events). */
	cleanup_runner_close(run, sum.stop_reason[0] ? sum.stop_reason : NULL, NULL);
out:
	cleanup_job_reset(&sum.job);
	cleanup_engine_close(e);
	return claimed;
}

static void *runner_main(void *arg)
{
	runner *r = arg;
	worker *w = r->w;
	cleanup_engine *poll = NULL;
	char app[64];
	double reconnect_wait = 1;

	snprintf(app, sizeof app, "cleanupctl:worker/%d", r->k);
	while (!stop_flag) {
		cleanup_worker_candidate *c = NULL;
		cleanup_error err;
		size_t n = 0, i, start;
		bool later = false, ran = false, any = false;
		double now;

		if (!poll || !cleanup_engine_ok(poll)) {
			cleanup_engine_close(poll);
			poll = NULL;
			if (cleanup_engine_open(&poll, w->ctx->db, app, &err) != CLEANUP_OK) {
				log_note(r, "connecting", &err);
				nap(reconnect_wait);
				reconnect_wait = reconnect_wait * 2 > RECONNECT_MAX_MS / 1000.0 ? RECONNECT_MAX_MS / 1000.0
				                                                                  : reconnect_wait * 2;
				continue;
			}
			reconnect_wait = 1;
		}
		if (standby_wait(r, poll)) {
			if (w->idle_exit)
				break;
			nap(w->poll_s);
			continue;
		}
		if (cleanup_worker_candidates(&c, &n, poll, w->servers, w->nservers, WORKER_CANDIDATES, &err) !=
		    CLEANUP_OK) {
			log_note(r, "listing runnable jobs", &err);
			nap(w->poll_s);
			continue;
		}
		/* Runners start at different places in the list, so that N of
		 * them reading it at once mostly try different jobs. */
		start = n > 0 ? (size_t)(r->k - 1) % n : 0;
		now = mono_s();
		for (i = 0; i < n && !stop_flag; i++) {
			const cleanup_worker_candidate *cand = &c[(start + i) % n];
			bool may;

			pthread_mutex_lock(&w->mu);
			may = aside_may_try(w, cand->job_id, now, &later);
			pthread_mutex_unlock(&w->mu);
			if (!may)
				continue;
			any = true;
			if (try_job(r, cand)) {
				ran = true;
				break;
			}
		}
		free(c);
		if (ran)
			continue;
		/* Nothing claimed: with --idle-exit, stop when there is nothing
		 * left to try now or later; else look again after --poll. */
		if (w->idle_exit && !any && !later)
			break;
		nap(w->poll_s);
	}
	cleanup_engine_close(poll);
	pthread_mutex_lock(&w->mu);
	w->live--;
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static const char *signal_name(int sig)
{
	return sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGINT";
}

/* Waits until every runner has left its loop, taking SIGTERM, SIGHUP and SIGINT
 * (blocked in SET) meanwhile: the first sets the stop flag and says so. */
static void supervise(worker *w, const sigset_t *set)
{
	const struct timespec slice = {0, 100 * 1000 * 1000};
	char t[32];

	for (;;) {
		siginfo_t info;
		int sig, live;

		pthread_mutex_lock(&w->mu);
		live = w->live;
		pthread_mutex_unlock(&w->mu);
		if (live == 0)
			return;
		sig = sigtimedwait(set, &info, &slice);
		if (sig != SIGTERM && sig != SIGINT && sig != SIGHUP)
			continue;
		if (!stop_flag) {
			stop_flag = 1;
			pthread_mutex_lock(&w->mu);
			if (w->ctx->json) {
				printf("{\"event\": \"stopping\", \"at\": ");
				cli_json_string(stdout, stamp_json(t, sizeof t));
				printf(", \"signal\": \"%s\"}\n", signal_name(sig));
			} else {
				printf("%s worker: %s: stopping; the steps in flight finish, no runner starts another\n",
				       stamp(t, sizeof t), signal_name(sig));
			}
			fflush(stdout);
			pthread_mutex_unlock(&w->mu);
		}
	}
}

/* --- the command --------------------------------------------------------- */

typedef struct worker_opts {
	cli_step_opts so;
	int64_t concurrency;
	cli_ints servers;
	bool idle_exit;
	double poll;
} worker_opts;

static const cli_option worker_options[] = {
	CLI_ROW_INT("--concurrency", "N", "runners, each stepping one job on a connection of its own (1 to 64, default 1)",
	            worker_opts, concurrency, 1, WORKER_MAX_RUNNERS),
	{"--server", "ID", "run only the jobs of server ID (repeat for more servers; default every server)", NULL,
	 CLI_INTS, offsetof(worker_opts, servers), 1, INT64_MAX, 0, NULL, NULL},
	CLI_ROW_FLAG("--idle-exit", "exit when no runnable job is left that no runner holds (exit 1 if a job failed)",
	             worker_opts, idle_exit, 0),
	{"--poll", "SECONDS", "how often an idle runner looks for work, 0.1 to 3600 (default 2)", NULL, CLI_DECIMAL,
	 offsetof(worker_opts, poll), 100, 3600000, 0, "must be a number of seconds from 0.1 to 3600", NULL},
	CLI_STEP_BUSY_ROWS(worker_opts, "busy answers in a row before a job is set aside for a while (default 100)",
	                   "cap of the doubling wait after a busy step (default 1000)"),
	CLI_STEP_TIMEOUT_ROW(worker_opts),
	CLI_STEP_SYNC_ROW(worker_opts, "drain steps wait for their WAL flush (default off, as job run)"),
	CLI_ROW_END,
};

static int exec_worker(cli_ctx *ctx, void *opts, const cli_args *a)
{
	static worker w; /* large (the server list): not on the stack */
	const worker_opts *o = opts;
	runner runners[WORKER_MAX_RUNNERS];
	pthread_t threads[WORKER_MAX_RUNNERS];
	sigset_t set, old_set;
	cleanup_engine *e = NULL;
	int64_t concurrency = o->concurrency;
	cli_step_opts so = o->so;
	double poll = o->poll;
	int i, started = 0, code;
	size_t j, m;
	char t[32];

	(void)a;
	memset(&w, 0, sizeof w);
	w.idle_exit = o->idle_exit;
	/* --server may repeat, a server given twice counts once */
	for (j = 0; j < o->servers.n; j++) {
		for (m = 0; m < w.nservers && w.servers[m] != o->servers.v[j]; m++)
			;
		if (m == w.nservers)
			w.servers[w.nservers++] = o->servers.v[j];
	}

	/* One connection first: a bad --db or schema fails here, at once. */
	if (!ctx->app_name)
		ctx->app_name = "cleanupctl:worker";
	if ((code = cli_connect(ctx, &e, true)))
		return code;
	if (w.nservers > 0) {
		cleanup_error err;
		int64_t missing_id = 0;

		if (cleanup_worker_servers_missing(&missing_id, e, w.servers, w.nservers, &err) != CLEANUP_OK) {
			cleanup_engine_close(e);
			return cli_fail(ctx, &err);
		}
		if (missing_id > 0) {
			cleanup_engine_close(e);
			cleanup_error_set(&err, CLEANUP_EINVAL, "--server %" PRId64 ": no such media server", missing_id);
			return cli_fail(ctx, &err);
		}
	}
	cleanup_engine_close(e);

	w.ctx = ctx;
	w.concurrency = (int)concurrency;
	w.poll_s = poll;
	w.max_busy = (int)so.max_busy;
	w.backoff_max_ms = (int)so.backoff_max;
	w.timeout_s = (int)(ctx->timeout_s >= 0 ? ctx->timeout_s : so.timeout);
	w.sync = so.sync;
	pthread_mutex_init(&w.mu, NULL);

	stop_flag = 0;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	/* Blocked before the runners start: they inherit the mask. */
	pthread_sigmask(SIG_BLOCK, &set, &old_set);

	if (ctx->json) {
		printf("{\"event\": \"started\", \"at\": ");
		cli_json_string(stdout, stamp_json(t, sizeof t));
		printf(", \"concurrency\": %d, \"servers\": [", w.concurrency);
		for (i = 0; i < (int)w.nservers; i++)
			printf("%s%" PRId64, i ? ", " : "", w.servers[i]);
		printf("], \"idle_exit\": %s, \"pid\": %ld}\n", w.idle_exit ? "true" : "false", (long)getpid());
	} else if (!ctx->quiet) {
		printf("%s worker: %d runner%s, %s%s, process %ld\n", stamp(t, sizeof t), w.concurrency,
		       w.concurrency == 1 ? "" : "s", w.nservers ? "the servers given" : "every server",
		       w.idle_exit ? ", until idle" : ", until SIGTERM or Ctrl-C", (long)getpid());
	}
	fflush(stdout);

	for (i = 0; i < w.concurrency; i++) {
		int prc;

		runners[i].w = &w;
		runners[i].k = i + 1;
		runners[i].claimed = 0;
		pthread_mutex_lock(&w.mu);
		w.live++;
		pthread_mutex_unlock(&w.mu);
		if ((prc = pthread_create(&threads[i], NULL, runner_main, &runners[i])) != 0) {
			fprintf(stderr, "cleanupctl: worker: starting runner %d: %s\n", i + 1, strerror(prc));
			pthread_mutex_lock(&w.mu);
			w.live--;
			pthread_mutex_unlock(&w.mu);
			stop_flag = 1;
			break;
		}
		started++;
	}
	supervise(&w, &set);
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	pthread_sigmask(SIG_SETMASK, &old_set, NULL);

	code = started < w.concurrency ? EXIT_ERROR : EXIT_DONE;
	/* With --idle-exit the worker's end is a verdict: a job it gave up on
	 * after an error is an error. A stop by signal is the operator's. */
	if (code == EXIT_DONE && w.idle_exit && !stop_flag) {
		size_t k;

		for (k = 0; k < w.naside; k++)
			if (w.aside[k].failed)
				code = EXIT_ERROR;
	}
	if (code == EXIT_DONE && w.standby_exit && !stop_flag)
		code = EXIT_READONLY; /* --idle-exit on a standby */
	if (ctx->json) {
		printf("{\"event\": \"stopped\", \"at\": ");
		cli_json_string(stdout, stamp_json(t, sizeof t));
		printf(", \"reason\": \"%s\", \"jobs_completed\": %d, \"jobs_interrupted\": %d, \"jobs_busy\": %d, "
		       "\"jobs_lost\": %d, \"jobs_failed\": %d, \"steps_taken\": %d, \"exit_code\": %d}\n",
		       stop_flag ? "signal" : "idle", w.completed, w.interrupted, w.busy, w.lost, w.failed, w.steps, code);
	} else if (!ctx->quiet) {
		printf("%s worker: stopped (%s): %d job%s completed, %d interrupted, %d busy, %d lost, %d failed, %d steps\n",
		       stamp(t, sizeof t), stop_flag ? "signal" : "idle", w.completed, w.completed == 1 ? "" : "s",
		       w.interrupted, w.busy, w.lost, w.failed, w.steps);
	}
	fflush(stdout);
	pthread_mutex_destroy(&w.mu);
	return code;
}

/* --server's values: the process runs one command. */
static int64_t worker_server_args[WORKER_MAX_SERVERS];
/* so: --timeout, --synchronous-commit, --max-busy, --backoff-max, the
 * rows job run has too (CLI_STEP_*_ROW) */
const cli_command cmd_worker_entry = {
	"worker", "", "run draining jobs across servers with N runners, one runner per job, until SIGTERM or Ctrl-C",
	exec_worker, worker_options,
	CLI_DEFAULTS(worker_opts, {TUI_OP_STATEMENT_TIMEOUT_S, 0, 100, 1000}, 1,
	             {worker_server_args, 0, WORKER_MAX_SERVERS}, false, 2),
};
