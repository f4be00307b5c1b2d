/* Progress, pace, ETA, connection names and busy wording shared by the CLI
 * and the console (progress.h). */
#include "progress.h"
#include "sanitize.h"
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

/* ---- one progress line for both front ends ---------------------------- */

double tui_job_pace(const cleanup_mon_job *v)
{
	tui_pace_window w = {v->window_steps, v->window_rows, v->window_first_start, v->window_last_end};

	if (v->runner_pid > 0 && v->last_step_age_s > 0 && w.last_end > 0)
		w.last_end += v->last_step_age_s;
	return tui_pace_rows_per_s(&w);
}

const char *tui_job_eta(char *buf, size_t len, const cleanup_mon_job *v)
{
	if (v->runner_pid > 0 && v->last_step_age_s > 30 &&
	    (phase_is(&v->job, "draining") || phase_is(&v->job, "finalizing"))) {
		snprintf(buf, len, "stalled");
		return buf;
	}
	return tui_eta_text(buf, len, &v->job, tui_job_pace(v), v->runner_pid > 0);
}

const char *tui_job_live_text(char *buf, size_t len, const cleanup_job *j)
{
	char age[16], closed[16], eta[16], host[64], app[64], step[48] = "no step yet";
	bool server = strcmp(j->kind, "remove-server") == 0;

	buf[0] = '\0';
	if (!phase_is(j, "draining") && !phase_is(j, "finalizing"))
		return buf;
	if (j->live_last_step_age_s >= 0)
		snprintf(step, sizeof step, "last step %s ago", tui_duration_text(age, sizeof age, j->live_last_step_age_s));
	if (j->live_runner_pid <= 0) {
		snprintf(buf, len, "NO RUNNER: %s %" PRId64 " closed to writers for %s, %s (cleanupctl job run %" PRId64 ")",
		         server ? "server" : "library", server ? j->server_id : j->library_id,
		         tui_duration_text(closed, sizeof closed, j->live_closed_s), step, j->id);
		return buf;
	}
	if (j->live_eta_s >= 0)
		tui_duration_text(eta, sizeof eta, j->live_eta_s);
	else
		snprintf(eta, sizeof eta, "?");
	/* host:pid of the runner's process (what to stop); the backend pid
	 * for a runner recorded without one */
	if (j->live_pace >= 0)
		snprintf(buf, len, "runner %s:%d (%s), %s, pace %.0f rows/s, ETA %s", tui_sanitize(host, sizeof host, j->live_runner_host),
		         j->live_runner_os_pid > 0 ? j->live_runner_os_pid : j->live_runner_pid,
		         tui_sanitize(app, sizeof app, j->live_runner_app), step, j->live_pace, eta);
	else
		snprintf(buf, len, "runner %s:%d (%s), %s, ETA %s", tui_sanitize(host, sizeof host, j->live_runner_host),
		         j->live_runner_os_pid > 0 ? j->live_runner_os_pid : j->live_runner_pid,
		         tui_sanitize(app, sizeof app, j->live_runner_app), step, eta);
	return buf;
}

/* N with thousands separators: 1,234,567. */
static const char *grouped(char *buf, size_t len, int64_t n)
{
	char digits[32];
	size_t nd, i, o = 0;
	bool neg = n < 0;

	snprintf(digits, sizeof digits, "%" PRIu64, neg ? (uint64_t)0 - (uint64_t)n : (uint64_t)n);
	nd = strlen(digits);
	if (neg && o + 1 < len)
		buf[o++] = '-';
	for (i = 0; i < nd && o + 2 < len; i++) {
		if (i > 0 && (nd - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o < len ? o : len - 1] = '\0';
	return buf;
}

const char *tui_job_progress_line(char *buf, size_t len, const cleanup_mon_job *v)
{
	const cleanup_job *j = &v->job;
	int64_t done = tui_progress_done(j), total = tui_progress_total(j);
	double pace = tui_job_pace(v);
	char a[32], b[32], pct[24], rate[32], eta[32];

	if (total > 0)
		snprintf(pct, sizeof pct, " (%.1f%%)", 100.0 * (double)(done < total ? done : total) / (double)total);
	else
		pct[0] = '\0';
	if (pace >= 0)
		snprintf(rate, sizeof rate, "%.0f/s", pace);
	else
		snprintf(rate, sizeof rate, "?/s");
	snprintf(buf, len, "%s of %s%s, %s", grouped(a, sizeof a, done), total >= 0 ? grouped(b, sizeof b, total) : "?",
	         pct, rate);
	if (phase_is(j, "draining") || phase_is(j, "finalizing")) {
		size_t l = strlen(buf);

		snprintf(buf + l, len - l, ", ETA %s", tui_job_eta(eta, sizeof eta, v));
	}
	return buf;
}

void tui_step_window_add(tui_step_window *w, double start, double end, int64_t rows)
{
	int k;

	if (w->n == TUI_STEP_WINDOW_MAX) {
		w->first = (w->first + 1) % TUI_STEP_WINDOW_MAX;
		w->n--;
	}
	k = (w->first + w->n) % TUI_STEP_WINDOW_MAX;
	w->start[k] = start;
	w->end[k] = end;
	w->rows[k] = rows;
	w->n++;
}

void tui_step_window_view(cleanup_mon_job *v, const tui_step_window *w, double now, int runner_pid)
{
	int i;

	if (w->n > 0)
		v->last_step_age_s = now - w->end[(w->first + w->n - 1) % TUI_STEP_WINDOW_MAX];

	v->window_steps = 0;
	v->window_rows = 0;
	v->window_first_start = -1;
	v->window_last_end = -1;
	if (w->n == 0)
		v->last_step_age_s = -1;
	v->runner_pid = runner_pid;
	if (!phase_is(&v->job, "draining") && !phase_is(&v->job, "finalizing"))
		return; /* as mon_jobs.sql: a pace only while there is work left */
	for (i = 0; i < w->n; i++) {
		int k = (w->first + i) % TUI_STEP_WINDOW_MAX;

		if (!(w->start[k] > now - 60.0))
			continue;
		if (v->window_steps == 0 || w->start[k] < v->window_first_start)
			v->window_first_start = w->start[k];
		if (v->window_steps == 0 || w->end[k] > v->window_last_end)
			v->window_last_end = w->end[k];
		v->window_steps++;
		v->window_rows += w->rows[k];
	}
}

const char *tui_run_progress_text(char *buf, size_t len, const cleanup_job *job, const tui_step_window *w,
                                  double now, int runner_pid)
{
	cleanup_mon_job v;

	memset(&v, 0, sizeof v);
	v.job = *job;
	v.job.json = NULL; /* not ours */
	tui_step_window_view(&v, w, now, runner_pid);
	return tui_job_progress_line(buf, len, &v);
}

double tui_throttle_wait(double *next_at, double now, double rate)
{
	if (!(rate > 0)) {
		*next_at = 0;
		return 0;
	}
	if (*next_at < now)
		*next_at = now;
	*next_at += 1.0 / rate;
	return *next_at - now;
}
