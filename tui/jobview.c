/* The jobs panel's filter and sort (jobview.h). */
#define _GNU_SOURCE /* qsort_r */
#include "jobview.h"
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "progress.h"

const char *tui_job_sort_name(tui_job_sort s)
{
	static const char *const names[JOB_SORT__COUNT] = {"newest", "phase", "progress"};

	return s >= 0 && s < JOB_SORT__COUNT ? names[s] : "?";
}

/* Case-insensitive (ASCII) search of NEEDLE (LEN bytes) in HAY. */
static bool contains(const char *hay, const char *needle, size_t len)
{
	size_t i, j, n = strlen(hay);

	if (len == 0)
		return true;
	for (i = 0; i + len <= n; i++) {
		for (j = 0; j < len; j++)
			if (tolower((unsigned char)hay[i + j]) != tolower((unsigned char)needle[j]))
				break;
		if (j == len)
			return true;
	}
	return false;
}

bool tui_job_matches(const cleanup_mon_job *v, const char *filter)
{
	const cleanup_job *j = &v->job;
	bool server = strcmp(j->kind, "remove-server") == 0;
	char text[512];
	const char *p = filter;

	if (!filter || !*filter)
		return true;
	snprintf(text, sizeof text, "%" PRId64 " %s %s %" PRId64 " %s %s %s", j->id, j->kind, server ? "srv" : "lib",
	         server ? j->server_id : j->library_id, j->target_name, j->phase, v->runner_app);
	while (*p) {
		size_t len;

		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		if (len > 0 && !contains(text, p, len))
			return false;
		p += len;
	}
	return true;
}

static int phase_rank(const char *phase)
{
	static const char *const order[] = {"finalizing", "draining", "collecting", "paused", "completed", "cancelled"};
	size_t i;

	for (i = 0; i < sizeof order / sizeof order[0]; i++)
		if (strcmp(phase, order[i]) == 0)
			return (int)i;
	return (int)(sizeof order / sizeof order[0]);
}

/* Settled share in [0, 1]; unknown totals and unfinished collecting sort as 0. */
static double share(const cleanup_job *j)
{
	int64_t total = tui_progress_total(j), done = tui_progress_done(j);

	if (total <= 0)
		return strcmp(j->phase, "completed") == 0 ? 1.0 : 0.0;
	return done >= total ? 1.0 : (double)done / (double)total;
}

typedef struct view_ctx {
	const cleanup_mon_job *jobs;
	tui_job_sort sort;
} view_ctx;

static int compare(const void *a, const void *b, void *arg)
{
	const view_ctx *ctx = arg;
	const cleanup_job *x = &ctx->jobs[*(const size_t *)a].job, *y = &ctx->jobs[*(const size_t *)b].job;

	if (ctx->sort == JOB_SORT_PHASE) {
		int rx = phase_rank(x->phase), ry = phase_rank(y->phase);

		if (rx != ry)
			return rx < ry ? -1 : 1;
	} else if (ctx->sort == JOB_SORT_PROGRESS) {
		double sx = share(x), sy = share(y);

		if (sx != sy)
			return sx < sy ? -1 : 1;
	}
	if (x->id != y->id)
		return x->id > y->id ? -1 : 1;
	return 0;
}

size_t tui_jobs_view(size_t *out, size_t max, const cleanup_mon_job *jobs, size_t n, const char *filter,
                     tui_job_sort sort)
{
	size_t i, k = 0;
	view_ctx ctx = {jobs, sort};

	for (i = 0; i < n && k < max; i++)
		if (tui_job_matches(&jobs[i], filter))
			out[k++] = i;
	qsort_r(out, k, sizeof *out, compare, &ctx);
	return k;
}
