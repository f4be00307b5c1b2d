/* cleanupctl purge: the retention of finished jobs (docs/scaling.md,
 * cleanup/purge.h). Removes the manifests, retained rows and step records
 * of jobs that completed or were cancelled at least --older-than days ago,
 * oldest first, in transactions of at most --batch rows, and events as
 * old; each job is marked purged once nothing of it is left (its row and
 * counters stay). --dry-run reads what would go and changes nothing.
 * --max-rows stops after about that many rows (a run can be resumed any
 * time: it starts where the last one stopped). The first Ctrl-C stops
 * after the transaction in flight. One audit row records the run. Target
 * names come from any writer: sanitized. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cleanup/audit.h"
#include "cleanup/purge.h"
#include "cli.h"
#include "sanitize.h"

/* Declared here: cli.h is shared (cli_commands.c declares it too). */
extern const cli_command cmd_purge_entry;

typedef struct purge_opts {
	int64_t days, batch, max_rows;
	bool dry_run;
} purge_opts;

static const cli_option purge_options[] = {
	CLI_ROW_INT("--older-than", "DAYS",
	            "purge jobs that finished at least DAYS ago, and events as old (0 to 36500, default 30)", purge_opts,
	            days, 0, (int64_t)CLEANUP_PURGE_DAYS_MAX),
	CLI_ROW_INT("--batch", "N", "rows deleted per transaction (1 to 10000, default 1000)", purge_opts, batch, 1,
	            CLEANUP_PURGE_BUDGET_MAX),
	CLI_ROW_INT("--max-rows", "N", "stop after about N rows; a later run goes on (default: no limit)", purge_opts,
	            max_rows, 1, INT64_MAX),
	CLI_ROW_FLAG("--dry-run", "say what would be purged; change nothing", purge_opts, dry_run, 0),
	CLI_ROW_END,
};

/* At most this many jobs are listed by --dry-run and reported one by one
 * by a purge (the totals count them all). */
#define PURGE_LIST_MAX 1000

/* One job a purge worked on, summed over its transactions. */
typedef struct purged_job {
	int64_t id;
	char kind[24];
	char target[CLEANUP_NAME_SIZE];
	char finished_at[40];
	int64_t manifest, retained, steps;
	bool purged;
} purged_job;

typedef struct purge_run {
	purged_job *jobs;
	size_t n_jobs, jobs_seen;
	int64_t rows, events, transactions;
	const char *stopped; /* NULL, "max-rows" or "interrupted" */
} purge_run;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Adds one transaction's result R to RUN: the same job as the last one
 * listed, or a new one. */
static void run_add(purge_run *run, const cleanup_purge_result *r)
{
	purged_job *j = run->n_jobs ? &run->jobs[run->n_jobs - 1] : NULL;

	run->transactions++;
	run->rows += r->manifest + r->retained + r->steps + r->events;
	run->events += r->events;
	if (r->job_id == 0)
		return;
	if (!j || j->id != r->job_id) {
		run->jobs_seen++;
		if (run->n_jobs == PURGE_LIST_MAX)
			return;
		j = &run->jobs[run->n_jobs++];
		memset(j, 0, sizeof *j);
		j->id = r->job_id;
		snprintf(j->kind, sizeof j->kind, "%s", r->kind);
		cleanup_text_copy(j->target, sizeof j->target, r->target_name);
		snprintf(j->finished_at, sizeof j->finished_at, "%s", r->finished_at);
	}
	j->manifest += r->manifest;
	j->retained += r->retained;
	j->steps += r->steps;
	j->purged = j->purged || r->job_purged;
}

static void print_job_text(const purged_job *j)
{
	char name[CLEANUP_NAME_SIZE];

	tui_sanitize(name, sizeof name, j->target);
	printf("%s job %" PRId64 " (%s of \"%s\", finished %s): %" PRId64 " manifest IDs, %" PRId64
	       " retained rows, %" PRId64 " step records%s\n",
	       j->purged ? "purged" : "partly purged", j->id, j->kind, name, j->finished_at, j->manifest, j->retained,
	       j->steps, j->purged ? "" : " so far (run purge again for the rest)");
}

/* The keys a job has in both JSON documents (a run, a dry run): opens the
 * object and prints job_id, kind, target_name and finished_at. */
static void json_job_open(size_t i, int64_t id, const char *kind, const char *target, const char *finished_at)
{
	printf("%s{\"job_id\": %" PRId64 ", \"kind\": ", i ? ", " : "", id);
	cli_json_string(stdout, kind);
	printf(", \"target_name\": ");
	cli_json_string(stdout, target);
	printf(", \"finished_at\": ");
	cli_json_string(stdout, finished_at);
}

static void print_run_json(const purge_run *run, int64_t days, double secs)
{
	size_t i;

	printf("{\"older_than_days\": %" PRId64 ", \"dry_run\": false, \"jobs\": [", days);
	for (i = 0; i < run->n_jobs; i++) {
		const purged_job *j = &run->jobs[i];

		json_job_open(i, j->id, j->kind, j->target, j->finished_at);
		printf(", \"manifest\": %" PRId64 ", \"retained\": %" PRId64 ", \"steps\": %" PRId64 ", \"purged\": %s}",
		       j->manifest, j->retained, j->steps, j->purged ? "true" : "false");
	}
	printf("], \"jobs_total\": %zu, \"events\": %" PRId64 ", \"rows\": %" PRId64 ", \"transactions\": %" PRId64
	       ", \"seconds\": %.3f, \"stopped\": ",
	       run->jobs_seen, run->events, run->rows, run->transactions, secs);
	cli_json_string_or_null(stdout, run->stopped);
	printf("}\n");
}

static void print_plan(const cli_ctx *ctx, const cleanup_purge_plan *p, int64_t days)
{
	size_t i;

	if (ctx->json) {
		printf("{\"older_than_days\": %" PRId64 ", \"dry_run\": true, \"jobs\": [", days);
		for (i = 0; i < p->n_jobs; i++) {
			const cleanup_purge_job *j = &p->jobs[i];

			json_job_open(i, j->job_id, j->kind, j->target_name, j->finished_at);
			printf(", \"phase\": ");
			cli_json_string(stdout, j->phase);
			printf(", \"manifest\": %" PRId64 ", \"steps\": %" PRId64 "}", j->manifest, j->steps);
		}
		printf("], \"jobs_total\": %" PRId64 ", \"events\": %" PRId64 ", \"events_capped\": %s}\n", p->jobs_total,
		       p->events, p->events_capped ? "true" : "false");
		return;
	}
	for (i = 0; i < p->n_jobs; i++) {
		const cleanup_purge_job *j = &p->jobs[i];
		char name[CLEANUP_NAME_SIZE];

		tui_sanitize(name, sizeof name, j->target_name);
		printf("would purge job %" PRId64 " (%s of \"%s\", %s %s): %" PRId64 " manifest IDs, %" PRId64
		       " step records\n",
		       j->job_id, j->kind, name, j->phase, j->finished_at, j->manifest, j->steps);
	}
	if ((int64_t)p->n_jobs < p->jobs_total)
		printf("... and %" PRId64 " more jobs\n", p->jobs_total - (int64_t)p->n_jobs);
	printf("dry run: %" PRId64 " finished job%s and %s%" PRId64 " event%s older than %" PRId64
	       " day%s would be purged; nothing was changed\n",
	       p->jobs_total, p->jobs_total == 1 ? "" : "s", p->events_capped ? "more than " : "", p->events,
	       p->events == 1 ? "" : "s", days, days == 1 ? "" : "s");
}

/* The audit row of a run: what it removed, in one line. */
static void audit_run(cleanup_engine *e, const purge_run *run, int64_t days, int rc)
{
	char outcome[512];
	cleanup_audit_entry a = {NULL, "purge", -1, NULL, outcome};
	cleanup_error err;

	snprintf(outcome, sizeof outcome,
	         "%s: %zu finished job%s older than %" PRId64 " days, %" PRId64 " rows (%" PRId64
	         " events) in %" PRId64 " transactions%s%s",
	         rc == CLEANUP_OK ? "done" : "failed", run->jobs_seen, run->jobs_seen == 1 ? "" : "s", days, run->rows,
	         run->events, run->transactions,
	         run->stopped ? "; stopped: " : "", run->stopped ? run->stopped : "");
	(void)cleanup_audit_record(NULL, e, &a, &err);
}

static int exec_purge(cli_ctx *ctx, void *opts, const cli_args *a)
{
	const purge_opts *o = opts;
	int64_t days = o->days, batch = o->batch, max_rows = o->max_rows;
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_purge_result r;
	purge_run run = {0};
	double t0;
	int rc = CLEANUP_OK, code;

	(void)a;
	ctx->app_name = "cleanupctl:purge";
	if ((code = cli_connect(ctx, &e, true)))
		return code;

	if (o->dry_run) {
		cleanup_purge_plan plan;

		if (cleanup_purge_plan_read(&plan, e, (double)days, PURGE_LIST_MAX, &err) != CLEANUP_OK) {
			code = cli_fail(ctx, &err);
		} else {
			print_plan(ctx, &plan, days);
			cleanup_purge_plan_free(&plan);
			code = EXIT_DONE;
		}
		cleanup_engine_close(e);
		return code;
	}

	if (!(run.jobs = calloc(PURGE_LIST_MAX, sizeof *run.jobs))) {
		cleanup_error_set(&err, CLEANUP_ENOMEM, "out of memory");
		code = cli_fail(ctx, &err);
		cleanup_engine_close(e);
		return code;
	}
	t0 = now_s();
	/* Ctrl-C: the first stops after the transaction in flight, the second
	 * cancels it (it rolls back; what committed before stays purged). */
	cli_interrupt_begin(e, true);
	for (;;) {
		int64_t want = batch;

		if (*cli_interrupt_flag()) {
			run.stopped = "interrupted";
			break;
		}
		if (max_rows > 0 && run.rows >= max_rows) {
			run.stopped = "max-rows";
			break;
		}
		if (max_rows > 0 && max_rows - run.rows < want)
			want = max_rows - run.rows;
		if ((rc = cleanup_purge_step(&r, e, (double)days, (int)want, &err)) != CLEANUP_OK)
			break;
		run_add(&run, &r);
		/* A job's line once it is done (text, not --quiet). */
		if (!ctx->json && !ctx->quiet && r.job_purged && run.n_jobs > 0 && run.jobs[run.n_jobs - 1].id == r.job_id)
			print_job_text(&run.jobs[run.n_jobs - 1]);
		if (!r.more)
			break;
	}
	cli_interrupt_end();
	audit_run(e, &run, days, rc);
	if (rc != CLEANUP_OK) {
		if (run.transactions > 0)
			snprintf(err.detail, sizeof err.detail,
			         "%" PRId64 " earlier purge transactions (%" PRId64 " rows) committed before this failure; "
			         "run purge again to go on",
			         run.transactions, run.rows);
		code = cli_fail_or_interrupted(ctx, &err, "the purge transaction in flight");
	} else {
		double secs = now_s() - t0;

		code = cli_interrupts() > 0 ? EXIT_INTERRUPTED : EXIT_DONE;
		if (ctx->json) {
			print_run_json(&run, days, secs);
		} else {
			/* The job stopped in the middle (max-rows, Ctrl-C). */
			if (run.n_jobs > 0 && !run.jobs[run.n_jobs - 1].purged && !ctx->quiet)
				print_job_text(&run.jobs[run.n_jobs - 1]);
			printf("purge %s: %zu finished job%s older than %" PRId64 " day%s, %" PRId64 " rows (%" PRId64
			       " events) in %" PRId64 " transaction%s, %.1f s%s\n",
			       run.stopped ? "stopped" : "done", run.jobs_seen, run.jobs_seen == 1 ? "" : "s", days,
			       days == 1 ? "" : "s", run.rows, run.events, run.transactions, run.transactions == 1 ? "" : "s",
			       secs,
			       !run.stopped                          ? ""
			       : strcmp(run.stopped, "max-rows") == 0 ? "; --max-rows reached, run purge again for the rest"
			                                              : "; interrupted, run purge again for the rest");
		}
	}
	free(run.jobs);
	cleanup_engine_close(e);
	return code;
}

const cli_command cmd_purge_entry = {
	"purge", "", "remove finished jobs' manifests, step records and old events, in bounded transactions (retention)",
	exec_purge, purge_options, CLI_DEFAULTS(purge_opts, 30, 1000, 0, false),
};
