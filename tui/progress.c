/* Progress, pace, ETA, connection names and busy wording shared by the CLI
 * and the console (progress.h). */
#include "progress.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool phase_is(const cleanup_job *j, const char *p)
{
	return strcmp(j->phase, p) == 0;
}

int64_t tui_progress_done(const cleanup_job *j)
{
	return j->deleted + j->moved + j->absent + j->kept;
}

int64_t tui_progress_total(const cleanup_job *j)
{
	if (phase_is(j, "completed")) {
		int64_t d = tui_progress_done(j);

		return d > 0 ? d : 1;
	}
	return j->total_estimate >= 0 ? j->total_estimate : -1;
}

double tui_pace_rows_per_s(const tui_pace_window *w)
{
	double span;

	if (!w || w->steps < 2 || w->rows < 0)
		return -1;
	span = w->last_end - w->first_start;
	if (!(span > 0))
		return -1;
	return (double)w->rows / span;
}

double tui_eta_s(const cleanup_job *j, double rows_per_s)
{
	int64_t total, done;

	if (!phase_is(j, "draining") && !phase_is(j, "finalizing"))
		return -1;
	total = tui_progress_total(j);
	done = tui_progress_done(j);
	if (total < 0)
		return -1;
	if (done >= total)
		return 0;
	if (!(rows_per_s > 0))
		return -1;
	return (double)(total - done) / rows_per_s;
}

const char *tui_duration_text(char *buf, size_t len, double s)
{
	long v;

	if (!(s >= 0)) {
		snprintf(buf, len, "-");
		return buf;
	}
	v = (long)(s + 0.5);
	if (v < 60)
		snprintf(buf, len, "%lds", v);
	else if (v < 3600)
		snprintf(buf, len, "%ldm%02lds", v / 60, v % 60);
	else if (v < 100 * 3600)
		snprintf(buf, len, "%ldh%02ldm", v / 3600, (v % 3600) / 60);
	else
		snprintf(buf, len, ">99h");
	return buf;
}

const char *tui_eta_text(char *buf, size_t len, const cleanup_job *j, double rows_per_s, bool runner)
{
	double eta;

	if (!phase_is(j, "draining") && !phase_is(j, "finalizing")) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (!runner) {
		snprintf(buf, len, "no runner");
		return buf;
	}
	eta = tui_eta_s(j, rows_per_s);
	if (eta < 0) {
		snprintf(buf, len, "?");
		return buf;
	}
	return tui_duration_text(buf, len, eta);
}

void tui_job_app_name(char *buf, size_t len, int64_t job_id, const char *origin)
{
	if (job_id >= 0)
		snprintf(buf, len, "cleanupctl:job:%" PRId64 ":%s", job_id, origin);
	else
		snprintf(buf, len, "cleanupctl:%s", origin);
}
