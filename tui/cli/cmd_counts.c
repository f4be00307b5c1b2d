/* cleanupctl counts: the per-library item counts of the count cache
 * (docs/count-cache.md), each with its state: fresh, dirty (stale),
 * expired, withheld (and why) or unwatched. `--library ID` (repeatable)
 * visits those libraries until their count is fresh or withheld (a first
 * visit starts the watch); without it every watched library gets one
 * visit (repairing its oldest dirty page); `--no-visit` only reads.
 * Library names come from any writer: sanitized. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/count_cache.h"
#include "cli.h"
#include "sanitize.h"

/* Declared here until cli.h lists it beside the other commands. */
extern const cli_command cmd_counts_entry;

#define COUNTS_MAX_LIBRARIES 64

typedef struct counts_visit {
	cleanup_count_visit v;
	int visits;
} counts_visit;

static void json_int_or_null(int64_t v)
{
	if (v < 0)
		printf("null");
	else
		printf("%" PRId64, v);
}

static void print_json(const cleanup_count_row *rows, size_t n, const counts_visit *vs, size_t nv)
{
	size_t i;

	printf("{\"libraries\": [");
	for (i = 0; i < n; i++) {
		const cleanup_count_row *r = &rows[i];

		printf("%s{\"library_id\": %" PRId64 ", \"server_id\": %" PRId64 ", \"name\": ", i ? ", " : "",
		       r->library_id, r->server_id);
		cli_json_string(stdout, r->name);
		printf(", \"slot\": ");
		json_int_or_null(r->slot > 0 ? r->slot : -1);
		printf(", \"state\": ");
		cli_json_string(stdout, r->state);
		printf(", \"reason\": ");
		cli_json_string_or_null(stdout, r->reason[0] ? r->reason : NULL);
		printf(", \"count\": ");
		json_int_or_null(r->count);
		printf(", \"published_count\": ");
		json_int_or_null(r->published_count);
		printf(", \"revision\": %" PRId64 ", \"applied_revision\": %" PRId64 ", \"epoch\": %" PRId64
		       ", \"pages\": %" PRId64 ", \"dirty_pages\": %" PRId64 ", \"visit_age_s\": ",
		       r->revision, r->applied_revision, r->epoch, r->pages, r->dirty_pages);
		if (r->visit_age_s < 0)
			printf("null");
		else
			printf("%.3f", r->visit_age_s);
		printf(", \"last_restart\": ");
		cli_json_string_or_null(stdout, r->last_restart[0] ? r->last_restart : NULL);
		printf("}");
	}
	printf("], \"visits\": [");
	for (i = 0; i < nv; i++) {
		printf("%s{\"library_id\": %" PRId64 ", \"visits\": %d, \"action\": ", i ? ", " : "", vs[i].v.library_id,
		       vs[i].visits);
		cli_json_string(stdout, vs[i].v.action);
		printf(", \"state\": ");
		cli_json_string(stdout, vs[i].v.state);
		printf(", \"reason\": ");
		cli_json_string_or_null(stdout, vs[i].v.reason[0] ? vs[i].v.reason : NULL);
		printf("}");
	}
	printf("]}\n");
}

static void print_text(const cleanup_count_row *rows, size_t n)
{
	size_t i;

	printf("%7s %6s  %-24s %-9s %10s %8s %5s %5s  %s\n", "LIBRARY", "SERVER", "NAME", "STATE", "COUNT", "REVISION",
	       "EPOCH", "PAGES", "REASON");
	for (i = 0; i < n; i++) {
		const cleanup_count_row *r = &rows[i];
		char name[CLEANUP_NAME_SIZE], reason[CLEANUP_COUNT_REASON_LEN * 4], count[32];

		if (r->count >= 0)
			snprintf(count, sizeof count, "%" PRId64, r->count);
		else if (r->published_count >= 0)
			snprintf(count, sizeof count, "(%" PRId64 ")", r->published_count);
		else
			snprintf(count, sizeof count, "-");
		tui_sanitize_cell(name, sizeof name, r->name, 24);
		tui_sanitize(reason, sizeof reason, r->reason);
		if (r->slot > 0)
			printf("%7" PRId64 " %6" PRId64 "  %s %-9s %10s %8" PRId64 " %5" PRId64 " %5" PRId64 "  %s\n",
			       r->library_id, r->server_id, name, r->state, count, r->revision, r->epoch, r->pages, reason);
		else
			printf("%7" PRId64 " %6" PRId64 "  %s %-9s %10s %8s %5s %5s  %s\n", r->library_id, r->server_id, name,
			       r->state, count, "-", "-", "-", reason);
	}
}

typedef struct counts_opts {
	cli_ints libs;
	int64_t visits;
	bool no_visit;
} counts_opts;

static const cli_option counts_options[] = {
	{"--library", "ID", "visit this library until its count is fresh or withheld (repeatable; starts a watch)", NULL,
	 CLI_INTS, offsetof(counts_opts, libs), 1, INT64_MAX, 0, NULL, NULL},
	CLI_ROW_INT("--visits", "N", "at most N visits per library (1-10000, default 200)", counts_opts, visits, 1, 10000),
	CLI_ROW_FLAG("--no-visit", "only read the cache's state", counts_opts, no_visit, 0),
	CLI_ROW_END,
};

static int exec_counts(cli_ctx *ctx, void *opts, const cli_args *a)
{
	const counts_opts *o = opts;
	int64_t *libs = o->libs.v;
	counts_visit visits[COUNTS_MAX_LIBRARIES];
	size_t nlibs = o->libs.n, nvisits = 0, nrows = 0, i;
	cleanup_count_row *rows = NULL;
	cleanup_engine *e = NULL;
	cleanup_error err;
	bool no_visit = o->no_visit;
	int max_visits = (int)o->visits, rc = EXIT_DONE;

	(void)a;
	if (no_visit && nlibs > 0)
		return cli_usage(ctx, &cmd_counts_entry, "--no-visit and --library exclude each other");
	ctx->app_name = "cleanupctl:counts";
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	if (!no_visit && nlibs == 0 && cleanup_engine_standby(e)) {
		/* A hot standby takes no visit (a visit writes): the plain
		 * `counts` only reads there, and says so (F1). --library
		 * asks for visits: exit 5 as any write. */
		if (!ctx->quiet)
			fprintf(stderr, "cleanupctl: counts: the server is a hot standby (read-only): no visits, "
			                "the cache's state as replayed\n");
		no_visit = true;
	}
	if (!no_visit && nlibs == 0) {
		/* One visit for every watched library. */
		if (cleanup_count_report(&rows, &nrows, e, NULL, &err) != CLEANUP_OK)
			goto fail;
		for (i = 0; i < nrows && nlibs < COUNTS_MAX_LIBRARIES; i++)
			if (rows[i].slot > 0)
				libs[nlibs++] = rows[i].library_id;
		free(rows);
		rows = NULL;
		max_visits = 1;
	}
	for (i = 0; i < nlibs && !no_visit; i++) {
		counts_visit *cv = &visits[nvisits];

		if (cleanup_count_settle(&cv->v, &cv->visits, e, libs[i], max_visits, NULL, &err) != CLEANUP_OK)
			goto fail;
		nvisits++;
	}
	if (cleanup_count_report(&rows, &nrows, e, NULL, &err) != CLEANUP_OK)
		goto fail;
	if (ctx->json)
		print_json(rows, nrows, visits, nvisits);
	else
		print_text(rows, nrows);
	rc = EXIT_DONE;
	goto out;
fail:
	rc = cli_fail(ctx, &err);
out:
	free(rows);
	cleanup_engine_close(e);
	return rc;
}

/* --library's values: the process runs one command. */
static int64_t counts_libs[COUNTS_MAX_LIBRARIES];
const cli_command cmd_counts_entry = {
	"counts", "",
	"per-library item counts from the count cache, with their state (fresh, dirty, expired, withheld, unwatched)",
	exec_counts, counts_options, CLI_DEFAULTS(counts_opts, {counts_libs, 0, COUNTS_MAX_LIBRARIES}, 200, false),
};
