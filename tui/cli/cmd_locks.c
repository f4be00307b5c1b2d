/* cleanupctl locks: lock contention now, as a blocking tree (each blocker,
 * then indented the backends it blocks) of the backends that are blocked
 * or blocking plus every cleanupctl backend of the database. --json prints
 * the document PostgreSQL builds (cleanup_locks_json), with what a terminal
 * would act on escaped (cli_json_doc). Any login role sets its own
 * application_name and runs its own query text, so every text column is
 * sanitized (sanitize.h) before it reaches the terminal. Below the tree:
 * the runners, which session holds which job's runner lease since when. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/locks.h"
#include "cli.h"
#include "sanitize.h"

/* The statement_timeout of the lock query: it reads only catalog views. */
#define LOCKS_TIMEOUT_MS 5000

static const char *ms_text(char *buf, size_t len, double ms)
{
	if (ms < 0)
		snprintf(buf, len, "-");
	else if (ms < 1000)
		snprintf(buf, len, "%.0fms", ms);
	else if (ms < 600000)
		snprintf(buf, len, "%.1fs", ms / 1000);
	else
		snprintf(buf, len, "%.0fm", ms / 60000);
	return buf;
}

/* Prints S sanitized, at most WIDTH characters, padded to WIDTH when PAD.
 * Runs of ASCII white space (a query's line breaks and indentation) become
 * one space first, so a multi-line query stays one readable line. */
static void put_cut(const char *s, size_t width, bool pad)
{
	char folded[512], cell[2048];
	size_t i = 0, n;

	for (; *s && i + 1 < sizeof folded; s++) {
		bool space = *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v';

		if (space && (i == 0 || folded[i - 1] == ' '))
			continue;
		folded[i++] = space ? ' ' : *s;
	}
	folded[i] = '\0';
	tui_sanitize_cell(cell, sizeof cell, folded, width);
	if (!pad) {
		n = strlen(cell);
		while (n > 0 && cell[n - 1] == ' ')
			cell[--n] = '\0';
	}
	fputs(cell, stdout);
}

/* Which session runs which job: the holders of the jobs' runner leases
 * (job run, each runner of cleanupctl worker, the console's run), one line
 * each, by job. */
static void print_runners(const cleanup_lock_row *rows, size_t n)
{
	size_t i, shown = 0;
	unsigned char *done = calloc(n ? n : 1, 1);

	if (!done)
		return;
	for (;;) {
		size_t best = n;

		for (i = 0; i < n; i++)
			if (!done[i] && rows[i].runs_job > 0 && (best == n || rows[i].runs_job < rows[best].runs_job))
				best = i;
		if (best == n)
			break;
		done[best] = 1;
		if (shown++ == 0)
			printf("\nrunners (one per job; a second runner of a job is refused naming this one):\n");
		printf("  job %-8" PRId64 " backend %-8d ", rows[best].runs_job, rows[best].pid);
		put_cut(rows[best].application_name[0] ? rows[best].application_name : "-", 34, true);
		printf(" since ");
		put_cut(rows[best].runner_since[0] ? rows[best].runner_since : "-", 19, false);
		printf("\n");
	}
	free(done);
}

static void print_tree(const cleanup_lock_row *rows, size_t n, const char *db)
{
	size_t *order = NULL, i, blocked;
	int *depth = NULL;
	char dbname[256];

	if (n == 0) {
		printf("database %s: no backend is blocked or blocking, and no cleanupctl backend is connected\n",
		       tui_sanitize(dbname, sizeof dbname, db));
		return;
	}
	order = malloc(n * sizeof *order);
	depth = malloc(n * sizeof *depth);
	if (!order || !depth) {
		free(order);
		free(depth);
		fprintf(stderr, "cleanupctl: out of memory\n");
		return;
	}
	blocked = cleanup_locks_tree(order, depth, rows, n);
	printf("database %s: %zu backend%s, %zu blocked\n\n", tui_sanitize(dbname, sizeof dbname, db), n,
	       n == 1 ? "" : "s", blocked);
	printf("%-16s %-34s %-19s %7s  %-54s %s\n", "PID", "APPLICATION", "STATE", "XACT", "WAITING FOR", "QUERY");
	for (i = 0; i < n; i++) {
		const cleanup_lock_row *r = &rows[order[i]];
		char pid[64], app[96], xact[16], wait[16], what[256];
		int d = depth[i] > 6 ? 6 : depth[i], pad;

		if (d == 0)
			snprintf(pid, sizeof pid, "%d", r->pid);
		else
			snprintf(pid, sizeof pid, "%*s\u2514\u2500 %d", 2 * (d - 1), "", r->pid);
		if (r->job_id > 0)
			snprintf(app, sizeof app, "%s [job %" PRId64 "]", r->application_name, r->job_id);
		else
			snprintf(app, sizeof app, "%s", r->application_name[0] ? r->application_name : "-");
		if (r->mode[0])
			snprintf(what, sizeof what, "%s on %s%s%s%s, %s", r->mode, r->locktype, r->relation[0] ? " (" : "",
			         r->relation, r->relation[0] ? ")" : "", ms_text(wait, sizeof wait, r->wait_ms));
		else if (r->wait_event_type[0])
			snprintf(what, sizeof what, "(%s: %s)", r->wait_event_type, r->wait_event);
		else
			snprintf(what, sizeof what, "-");
		/* The tree characters take 2 columns but 6 bytes: pad by hand. */
		pad = 16 - ((int)strlen(pid) - (d > 0 ? 4 : 0));
		printf("%s%*s ", pid, pad > 0 ? pad : 0, "");
		put_cut(app, 34, true);
		putchar(' ');
		put_cut(r->state[0] ? r->state : "-", 19, true);
		printf(" %7s  ", ms_text(xact, sizeof xact, r->xact_age_ms));
		put_cut(what, 54, true);
		putchar(' ');
		put_cut(r->query, 60, false);
		printf("\n");
		if (r->nblocked_by > 1) {
			int b;

			printf("%*s also blocked by", 16 + 2 * d, "");
			for (b = 1; b < r->nblocked_by; b++)
				printf(" %d", r->blocked_by[b]);
			printf("\n");
		}
	}
	free(order);
	free(depth);
	print_runners(rows, n);
}

static int exec_locks(cli_ctx *ctx, void *opts, const cli_args *a)
{
	cleanup_lock_row *rows = NULL;
	cleanup_engine *e = NULL;
	cleanup_error err;
	char *json = NULL;
	size_t n = 0;
	int rc;

	(void)opts;
	(void)a;
	if (!ctx->app_name)
		ctx->app_name = "cleanupctl:locks";
	/* The lock view reads only catalog views: no schema needed. */
	if ((rc = cli_connect(ctx, &e, false)))
		return rc;
	if (cleanup_engine_set_timeout(e, LOCKS_TIMEOUT_MS, &err) != CLEANUP_OK)
		goto fail;
	if (ctx->json) {
		if (cleanup_locks_json(&json, e, &err) != CLEANUP_OK)
			goto fail;
		cli_json_doc(stdout, json);
		putchar('\n');
		free(json);
	} else {
		if (cleanup_locks_snapshot(&rows, &n, e, &err) != CLEANUP_OK)
			goto fail;
		print_tree(rows, n, cleanup_engine_dbname(e));
		free(rows);
	}
	cleanup_engine_close(e);
	return EXIT_DONE;
fail:
	rc = cli_fail(ctx, &err);
	cleanup_engine_close(e);
	return rc;
}

const cli_command cmd_locks_entry = {
	"locks", "", "lock contention now: a blocking tree of backends, cleanupctl jobs and writers", exec_locks,
	.options = NULL,
};
