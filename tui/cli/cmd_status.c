/* cleanupctl status: servers, libraries and jobs at a glance. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cleanup/report.h"
#include "cli.h"
#include "progress.h"
#include "sanitize.h"

static void print_jobs_table(const cleanup_job *jobs, size_t n)
{
	char a[32], b[32], c[32];
	size_t i;

	printf("%-6s %-15s %-8s %-24s %-11s %6s  %s\n", "JOB", "KIND", "SERVER", "TARGET", "PHASE", "STEP",
	       "PROGRESS");
	for (i = 0; i < n; i++) {
		const cleanup_job *j = &jobs[i];
		char target[CLEANUP_NAME_SIZE + 32], name[CLEANUP_NAME_SIZE], kind[64], phase[64];

		/* Names come from any writer: sanitized, cut by characters. */
		snprintf(target, sizeof target, "%s %" PRId64 " %s", strcmp(j->kind, "remove-server") == 0 ? "srv" : "lib",
		         strcmp(j->kind, "remove-server") == 0 ? j->server_id : j->library_id,
		         tui_sanitize_cell(name, sizeof name, j->target_name, 16));
		printf("%-6" PRId64 " %s %-8" PRId64 " %s %s %6d  ", j->id, tui_sanitize_cell(kind, sizeof kind, j->kind, 15),
		       j->server_id, tui_sanitize_cell(name, sizeof name, target, 24),
		       tui_sanitize_cell(phase, sizeof phase, j->phase, 11), j->step_no);
		if (strcmp(j->phase, "collecting") == 0 || strcmp(j->phase, "paused") == 0 ||
		    (strcmp(j->kind, "prune") == 0 && !j->sealed_at[0]))
			printf("manifest %s IDs\n", cli_count(a, sizeof a, j->manifest_count));
		else
			printf("examined %s of %s, deleted %s\n", cli_count(a, sizeof a, j->examined),
			       j->total_estimate >= 0 ? cli_count(b, sizeof b, j->total_estimate) : "?",
			       cli_count(c, sizeof c, j->deleted));
		/* Who runs it, its last step and ETA; NO RUNNER with
		 * how long its library has been closed (a line of its own). */
		{
			char live[CLEANUP_NAME_SIZE + 400];

			if (tui_job_live_text(live, sizeof live, j)[0])
				printf("%-6s %s\n", "", live);
		}
	}
	if (n == 0)
		printf("(no jobs)\n");
	/* T3: a job that cannot go on because a row or table is held says
	 * so, holder named (pid, role, application, client, state, age). */
	for (i = 0; i < n; i++) {
		const cleanup_job *j = &jobs[i];
		char since[64];

		if (!j->blocked_since[0] || strcmp(j->phase, "completed") == 0 || strcmp(j->phase, "cancelled") == 0)
			continue;
		printf("job %" PRId64 " blocked since %s: ", j->id, tui_sanitize(since, sizeof since, j->blocked_since));
		tui_fputs_safe(j->blocked_text[0] ? j->blocked_text : "(holder gone)", stdout);
		printf("\n");
	}
}

/* Prints one status report (table or JSON) from E. */
static int print_status(cli_ctx *ctx, cleanup_engine *e, cleanup_error *err)
{
	cleanup_server_row *sv = NULL;
	cleanup_library_row *lb = NULL;
	cleanup_job *jobs = NULL;
	size_t ns = 0, nl = 0, nj = 0, i, k;
	char *json = NULL;
	char a[32], name[CLEANUP_NAME_SIZE], adm[64];
	int rc;

	if (ctx->json) {
		if ((rc = cleanup_status_json(&json, e, err)) == CLEANUP_OK) {
			cli_json_doc(stdout, json);
			putchar('\n');
		}
		free(json);
		return rc;
	}
	if ((rc = cleanup_status_rows(&sv, &ns, &lb, &nl, e, err)) != CLEANUP_OK ||
	    (rc = cleanup_jobs_list(&jobs, &nj, e, 10, err)) != CLEANUP_OK)
		goto out;
	printf("database %s\n\n", tui_sanitize(name, sizeof name, cleanup_engine_dbname(e)));
	printf("%-7s %-24s %-10s %5s %12s  %s\n", "SERVER", "NAME", "ADMISSION", "LIBS", "ITEMS", "JOB");
	for (i = 0; i < ns; i++) {
		char job[24] = "-";

		if (sv[i].job_id > 0)
			snprintf(job, sizeof job, "%" PRId64, sv[i].job_id);
		printf("%-7" PRId64 " %s %s %5d %12s  %s\n", sv[i].id, tui_sanitize_cell(name, sizeof name, sv[i].name, 24),
		       tui_sanitize_cell(adm, sizeof adm, sv[i].admission, 10), sv[i].library_count,
		       cli_count(a, sizeof a, sv[i].item_count), job);
		for (k = 0; k < nl; k++) {
			if (lb[k].server_id != sv[i].id)
				continue;
			snprintf(job, sizeof job, "-");
			if (lb[k].job_id > 0)
				snprintf(job, sizeof job, "%" PRId64, lb[k].job_id);
			/* "  lib ID  " is 10 columns: a 22-column name puts
			 * ADMISSION under the server rows' (column 33). */
			printf("  lib %-4" PRId64 "%s %s %5s %12s  %s\n", lb[k].id,
			       tui_sanitize_cell(name, sizeof name, lb[k].name, 22),
			       tui_sanitize_cell(adm, sizeof adm, lb[k].admission, 10), "",
			       cli_count(a, sizeof a, lb[k].item_count), job);
		}
	}
	if (ns == 0)
		printf("(no servers: cleanupctl seed creates demo data)\n");
	printf("\n");
	print_jobs_table(jobs, nj);
out:
	free(sv);
	free(lb);
	cleanup_jobs_free(jobs, nj);
	return rc;
}

static volatile sig_atomic_t stop_watch;

static void on_stop(int sig)
{
	(void)sig;
	stop_watch = 1;
}

/* status --watch: a report every INTERVAL seconds, COUNT times (0: until
 * interrupted), as plain text for scripts and logs: no terminal control
 * codes, each report preceded by a "--- <time> ---" line, or with --json one
 * document a line. */
static int watch_status(cli_ctx *ctx, cleanup_engine *e, double interval, int64_t count)
{
	struct sigaction sa;
	cleanup_error err;
	int64_t n;
	int rc = CLEANUP_OK;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (n = 0; !stop_watch && (count == 0 || n < count); n++) {
		if (n > 0) {
			struct timespec t = {(time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9)};

			/* A signal ends the sleep early (no SA_RESTART). */
			nanosleep(&t, NULL);
			if (stop_watch)
				break;
		}
		if (!ctx->json) {
			char stamp[32];
			time_t now = time(NULL);

			strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", localtime(&now));
			printf("--- %s ---\n", stamp);
		}
		if ((rc = print_status(ctx, e, &err)) != CLEANUP_OK)
			return cli_fail(ctx, &err);
		fflush(stdout);
	}
	return EXIT_DONE;
}

typedef struct status_opts {
	double interval;
	int64_t count;
} status_opts;

static const cli_option status_options[] = {
	{"--watch", "SECONDS", "repeat as plain output every SECONDS (0.1 to 86400, default 2)", NULL, CLI_DECIMAL,
	 offsetof(status_opts, interval), 100, 86400000, CLI_OPTIONAL, "takes seconds from 0.1 to 86400", NULL},
	CLI_ROW_INT("--count", "N", "with --watch: stop after N refreshes", status_opts, count, 1, INT64_MAX),
	CLI_ROW_END,
};

static int exec_status(cli_ctx *ctx, void *opts, const cli_args *a)
{
	const status_opts *o = opts;
	bool watch = cli_given(a, status_options, "--watch");
	cleanup_engine *e = NULL;
	cleanup_error err;
	int rc;

	if (o->count > 0 && !watch)
		return cli_usage(ctx, &cmd_status_entry, "--count goes with --watch");
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	if (watch)
		rc = watch_status(ctx, e, o->interval, o->count);
	else
		rc = print_status(ctx, e, &err) == CLEANUP_OK ? EXIT_DONE : cli_fail(ctx, &err);
	cleanup_engine_close(e);
	return rc;
}

const cli_command cmd_status_entry = {
	"status", "", "servers, libraries, jobs at a glance; --watch repeats it as plain output", exec_status,
	status_options, CLI_DEFAULTS(status_opts, 2, 0),
};

static const cli_option jobs_options[] = {
	CLI_ROW_ONLY_INT("--limit", "N", "at most N jobs, newest first (1 to 1000, default 50)", 1, 1000),
	CLI_ROW_END,
};

static int exec_jobs(cli_ctx *ctx, void *opts, const cli_args *a)
{
	int64_t limit = *(const int64_t *)opts;
	cleanup_engine *e = NULL;
	cleanup_error err;
	int rc;

	(void)a;
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	if (ctx->json) {
		char *json = NULL;

		if ((rc = cleanup_jobs_json(&json, e, (int)limit, &err)) == CLEANUP_OK) {
			cli_json_doc(stdout, json);
			putchar('\n');
		}
		free(json);
	} else {
		cleanup_job *jobs = NULL;
		size_t n = 0;

		if ((rc = cleanup_jobs_list(&jobs, &n, e, (int)limit, &err)) == CLEANUP_OK)
			print_jobs_table(jobs, n);
		cleanup_jobs_free(jobs, n);
	}
	rc = rc == CLEANUP_OK ? EXIT_DONE : cli_fail(ctx, &err);
	cleanup_engine_close(e);
	return rc;
}

const cli_command cmd_jobs_entry = {
	"jobs", "", "unfinished jobs and the most recent ones", exec_jobs, jobs_options, CLI_DEFAULTS(int64_t, 50),
};
