/* cleanupctl writer: a simulated sync writer (lab/src/writer.c) that
 * inserts, updates and moves items across the libraries of one server (or
 * all) at a rate, through the count cache's mutation gateway when its role
 * may (else plain SQL), prints each rejection as it happens and a summary at the
 * end (--json: one summary document on stdout; rejections then go to
 * stderr). Stops cleanly on SIGINT and SIGTERM. application_name
 * "cleanupctl:writer:<server|all>". */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/count_cache.h"
#include "cleanup/writer.h"
#include "cli.h"
#include "sanitize.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

typedef struct report_ctx {
	FILE *out;  /* where rejections go; NULL: nowhere */
} report_ctx;

/* Prints one rejection or lost connection of the writer to ARG's stream.
 * The SQLSTATE and the message come from the server (a trigger's text may
 * quote library names any writer wrote): sanitized. */
static void report(const cleanup_writer_event *ev, void *arg)
{
	report_ctx *rc = arg;
	char when[32], job[40] = "", state[16], msg[1024];
	struct tm tm;
	time_t secs;

	if (!rc->out || (ev->outcome != CLEANUP_WRITER_REJECTED && ev->outcome != CLEANUP_WRITER_LOST &&
	                 ev->outcome != CLEANUP_WRITER_RECONNECTED))
		return;
	secs = (time_t)ev->at;
	localtime_r(&secs, &tm);
	strftime(when, sizeof when, "%H:%M:%S", &tm);
	if (ev->job_id > 0)
		snprintf(job, sizeof job, " [job %" PRId64 "]", ev->job_id);
	tui_sanitize(state, sizeof state, ev->sqlstate);
	tui_sanitize(msg, sizeof msg, ev->message);
	if (ev->outcome == CLEANUP_WRITER_RECONNECTED) {
		fprintf(rc->out, "%s.%03d reconnected: %s; writing again\n", when, (int)((ev->at - floor(ev->at)) * 1000),
		        msg);
	} else if (ev->outcome == CLEANUP_WRITER_LOST) {
		fprintf(rc->out, "%s.%03d connection lost during %s; reconnecting: %s\n", when,
		        (int)((ev->at - floor(ev->at)) * 1000), cleanup_writer_op_name(ev->op), msg);
	} else if (ev->op == CLEANUP_WRITER_MOVE) {
		fprintf(rc->out, "%s.%03d rejected move from library %" PRId64 " to library %" PRId64 "%s: %s %s\n", when,
		        (int)((ev->at - floor(ev->at)) * 1000), ev->library_id, ev->to_library_id, job, state,
		        msg);
	} else {
		fprintf(rc->out, "%s.%03d rejected %s %s library %" PRId64 "%s: %s %s\n", when,
		        (int)((ev->at - floor(ev->at)) * 1000), cleanup_writer_op_name(ev->op),
		        ev->op == CLEANUP_WRITER_INSERT ? "into" : "in", ev->library_id, job, state, msg);
	}
	fflush(rc->out);
}

static void print_summary_json(const cleanup_writer_stats *s, const cleanup_writer_opts *o, bool gateway,
                               int64_t dependents)
{
	size_t i;

	printf("{\"server_id\": ");
	if (o->server_id > 0)
		printf("%" PRId64, o->server_id);
	else
		printf("null");
	printf(", \"rate\": %g, \"seed\": %" PRIu64 ", \"duration_s\": ", o->rate, o->seed);
	if (o->duration_s > 0)
		printf("%g", o->duration_s);
	else
		printf("null");
	printf(", \"elapsed_s\": %.3f, \"stopped_by\": ", s->elapsed_s);
	cli_json_string(stdout, s->stopped ? "signal" : o->max_ops > 0 && s->ops >= o->max_ops ? "ops" : "duration");
	printf(", \"ops\": %" PRId64 ", \"ok\": %" PRId64 ", \"inserted\": %" PRId64 ", \"updated\": %" PRId64
	       ", \"moved\": %" PRId64 ", \"noop\": %" PRId64 ", \"rejected\": %" PRId64 ", \"rejections\": {",
	       s->ops, s->inserted + s->updated + s->moved, s->inserted, s->updated, s->moved, s->noop, s->rejected);
	for (i = 0; i < s->nrejections; i++) {
		if (i)
			printf(", ");
		cli_json_string(stdout, s->rejections[i].sqlstate);
		printf(": %" PRId64, s->rejections[i].n);
	}
	printf("}, \"gateway\": %s, \"dependents\": ", gateway ? "true" : "false");
	if (dependents >= 0)
		printf("%" PRId64, dependents);
	else
		printf("null");
	printf(", \"logged\": %" PRId64 ", \"log_failures\": %" PRId64 ", \"lost\": %" PRId64
	       ", \"reconnects\": %" PRId64 ", \"avg_ms\": %.3f, \"max_ms\": %.3f}\n",
	       s->logged, s->log_failures, s->lost, s->reconnects,
	       s->ops ? s->total_ms / (double)s->ops : 0.0, s->max_ms);
}

static void print_summary(const cleanup_writer_stats *s, int64_t dependents)
{
	size_t i;

	printf("writer: %" PRId64 " operations in %.1f s (%.1f/s): %" PRId64 " inserted, %" PRId64 " updated, %" PRId64
	       " moved, %" PRId64 " without an item, %" PRId64 " rejected",
	       s->ops, s->elapsed_s, s->elapsed_s > 0 ? (double)s->ops / s->elapsed_s : 0.0, s->inserted, s->updated,
	       s->moved, s->noop, s->rejected);
	if (s->nrejections) {
		printf(" (");
		for (i = 0; i < s->nrejections; i++) {
			char state[16];

			printf("%s%s %" PRId64, i ? ", " : "", tui_sanitize(state, sizeof state, s->rejections[i].sqlstate),
			       s->rejections[i].n);
		}
		printf(")");
	}
	if (dependents >= 0)
		printf("; %" PRId64 " dependent rows", dependents);
	printf("; %" PRId64 " logged to cleanup.events", s->logged);
	if (s->reconnects)
		printf("; %" PRId64 " reconnects", s->reconnects);
	printf("; writes took %.1f ms on average, %.1f ms at most\n", s->ops ? s->total_ms / (double)s->ops : 0.0,
	       s->max_ms);
}

static const cli_option writer_options[] = {
	{"--rate", "OPS_PER_SECOND", "operations per second, 0 (as fast as possible) to 100000 (default 10)", NULL,
	 CLI_DECIMAL, offsetof(cleanup_writer_opts, rate), 0, 100000000, 0,
	 "must be a number of operations per second from 0 (as fast as possible) to 100000", NULL},
	{"--server", "ID", "write to the libraries of server ID only", NULL, CLI_INT,
	 offsetof(cleanup_writer_opts, server_id), 1, INT64_MAX, 0, NULL, NULL},
	{"--duration", "SECONDS", "stop after SECONDS (0 to 2678400; default: until stopped)", NULL, CLI_DECIMAL,
	 offsetof(cleanup_writer_opts, duration_s), 0, 31 * 86400 * 1000LL, 0, "takes seconds from 0 to 2678400", NULL},
	CLI_ROW_INT("--ops", "N", "stop after N operations (0: no limit)", cleanup_writer_opts, max_ops, 0, INT64_MAX),
	{"--seed", "N", "the random seed, for a repeatable run", NULL, CLI_INT, offsetof(cleanup_writer_opts, seed), 0,
	 INT64_MAX, 0, NULL, NULL},
	CLI_ROW_FLAG("--no-log", "do not log each rejection to cleanup.events", cleanup_writer_opts, no_log, 0),
	CLI_ROW_END,
};

static int exec_writer(cli_ctx *ctx, void *opts, const cli_args *a)
{
	cleanup_writer_opts *o = opts;
	bool seeded = cli_given(a, writer_options, "--seed");
	static char app_name[64];
	cleanup_writer *w = NULL;
	cleanup_engine *e = NULL;
	cleanup_error err;
	struct sigaction sa, old_int, old_term;
	report_ctx rep;
	int rc;

	if (!seeded) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		o->seed = ((uint64_t)t.tv_sec * 1000000007ULL) ^ (uint64_t)t.tv_nsec ^ ((uint64_t)getpid() << 32);
		o->seed &= (uint64_t)INT64_MAX; /* printable as the --seed that repeats the run */
	}
	if (o->server_id > 0)
		snprintf(app_name, sizeof app_name, "cleanupctl:writer:%" PRId64, o->server_id);
	else
		snprintf(app_name, sizeof app_name, "cleanupctl:writer:all");
	ctx->app_name = app_name;
	/* The handlers come before the connection: the writer shows in
	 * pg_stat_activity as soon as it has connected, and a SIGTERM sent on
	 * seeing it must stop it cleanly (a summary, exit 0), not kill it
	 * while it reads its libraries. No SA_RESTART: a signal ends the
	 * pacing sleep at once (libpq retries its own waits on EINTR). */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	stop_requested = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	/* The schema check is the writer's own (cleanup_writer_new): a sync
	 * writer's role has no access to schema cleanup (docs/roles.md). */
	if ((rc = cli_connect(ctx, &e, false)))
		goto out;
	/* A writer that starts while its tables are locked (lock_timeout:
	 * busy) tries again every 200 ms until it gets in or is stopped; a
	 * stop while it waits is a clean stop with nothing done. */
	while (cleanup_writer_new(&w, e, o, &err) != CLEANUP_OK) {
		int nap_no;

		if (err.status != CLEANUP_EBUSY) {
			rc = cli_fail(ctx, &err);
			goto out;
		}
		if (!stop_requested && !ctx->quiet)
			fprintf(stderr, "cleanupctl: writer: busy while starting (%s); trying again\n", err.message);
		for (nap_no = 0; nap_no < 20 && !stop_requested; nap_no++) {
			struct timespec nap = {0, 10 * 1000 * 1000};

			nanosleep(&nap, NULL);
		}
		if (stop_requested) {
			cleanup_writer_stats none;

			memset(&none, 0, sizeof none);
			none.stopped = true;
			if (ctx->json)
				print_summary_json(&none, o, false, 0);
			else if (!ctx->quiet)
				print_summary(&none, 0);
			rc = EXIT_DONE;
			goto out;
		}
	}

	rep.out = ctx->quiet ? NULL : ctx->json ? stderr : stdout;
	if (!ctx->quiet && !ctx->json) {
		char pace[48];

		if (o->rate > 0)
			snprintf(pace, sizeof pace, "%g operations per second", o->rate);
		else
			snprintf(pace, sizeof pace, "as fast as possible");
		printf("writer %s: %zu libraries, %s, %s, seed %" PRIu64 "; Ctrl-C stops\n", app_name,
		       cleanup_writer_library_count(w), pace,
		       cleanup_writer_uses_gateway(w) ? "through the mutation gateway" : "plain SQL", o->seed);
		fflush(stdout);
	}
	rc = cleanup_writer_run(w, &stop_requested, report, &rep, &err);
	if (rc != CLEANUP_OK) {
		rc = cli_fail(ctx, &err);
	} else {
		if (ctx->json)
			print_summary_json(cleanup_writer_get_stats(w), o, cleanup_writer_uses_gateway(w),
			                   cleanup_writer_dependents(w));
		else
			print_summary(cleanup_writer_get_stats(w), cleanup_writer_dependents(w));
		rc = EXIT_DONE;
	}
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	cleanup_writer_free(w);
	cleanup_engine_close(e);
	return rc;
}

const cli_command cmd_writer_entry = {
	"writer", "", "simulated sync writer: inserts, updates and moves items, reports rejections", exec_writer,
	writer_options, CLI_DEFAULTS(cleanup_writer_opts, 10.0, -1, 0, 0, 0, false),
};
