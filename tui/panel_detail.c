/* The job detail panel: the selected job's manifest (count, expected,
 * sealed, high-water ID), counters, pace, sparklines of step rate and lock
 * hold over time, and its recent steps with their lock holds. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "console.h"
#include "progress.h"
#include "sparkline.h"

static bool have_steps(const console *c)
{
	return c->snap->detail_job_id == c->sel_job_id && c->sel_job_id > 0;
}

static int rows(const console *c)
{
	return have_steps(c) ? (int)c->snap->nsteps : 0;
}

static void sparks(console *c, tui_rect r, int y)
{
	const cleanup_mon_snapshot *s = c->snap;
	double vals[256], times[256], max = 0;
	char line[1024];
	int w = r.w - 40, i, n = (int)s->nsteps;

	if (w < 8)
		w = 8;
	if (w > 120)
		w = 120;
	if (n > 256)
		n = 256;
	/* steps per second over the last W seconds */
	for (i = 0; i < n; i++)
		times[i] = s->steps[i].started_epoch;
	sparkline_rate_buckets(vals, w, times, (size_t)n, s->taken_at, 1.0);
	for (i = 0; i < w; i++)
		if (vals[i] > max)
			max = vals[i];
	sparkline_render(line, sizeof line, vals, (size_t)w, w, c->utf8, NULL);
	console_put(y, r.x, 11, ROLE_DIM, "step rate");
	console_put(y, r.x + 11, w, ROLE_SPARK, line);
	console_putf(y, r.x + 12 + w, r.w - 12 - w, ROLE_DIM, "max %.0f/s, last %ds", max, w);
	/* lock hold per step, oldest first */
	for (i = 0; i < n; i++)
		vals[i] = s->steps[n - 1 - i].lock_hold_ms;
	sparkline_render(line, sizeof line, vals, (size_t)n, w, c->utf8, &max);
	console_put(y + 1, r.x, 11, ROLE_DIM, "lock hold");
	console_put(y + 1, r.x + 11, w, ROLE_SPARK, line);
	console_putf(y + 1, r.x + 12 + w, r.w - 12 - w, ROLE_DIM, "max %.2f ms, last %d steps", max, n < w ? n : w);
}

/* The runner line: who holds the job's runner lock, or, loudly, that
 * nobody does while the job keeps its target closed to writers. */
static void draw_runner(const cleanup_mon_job *v, tui_rect r, int y)
{
	const cleanup_job *j = &v->job;
	char age[16], last[16], text[400];

	if (v->runner_pid > 0) {
		snprintf(text, sizeof text, "runner: backend %d  last step %s ago  %s  from %s  since %s (%s)", v->runner_pid,
		         v->last_step_age_s >= 0 ? tui_duration_text(last, sizeof last, v->last_step_age_s) : "-",
		         v->runner_app[0] ? v->runner_app : "(application not visible)",
		         v->runner_client[0] ? v->runner_client : "?", v->runner_since[0] ? v->runner_since : "?",
		         tui_duration_text(age, sizeof age, v->runner_age_s));
		console_put(y, r.x, r.w, ROLE_OK, text);
		return;
	}
	console_put(y, r.x, r.w, ROLE_DANGER, console_unattended_text(text, sizeof text, v));
	(void)j;
}

static void draw(console *c, tui_rect r, bool focused)
{
	const cleanup_mon_job *v = console_selected_job(c);
	const cleanup_job *j;
	char a[32], b[32], d[32], eta[16];
	int y = r.y, i, n, x;
	bool dur, active;
	double pace;

	if (!v) {
		console_put(y, r.x, r.w, ROLE_DIM, c->snap->njobs ? "no job selected: choose one in the jobs panel"
		                                                  : "no jobs yet");
		return;
	}
	j = &v->job;
	active = strcmp(j->phase, "draining") == 0 || strcmp(j->phase, "finalizing") == 0;
	x = r.x + console_putf(y, r.x, r.w, ROLE_TITLE, "job %" PRId64 "  %s of %s %" PRId64 " \"%s\"  ", j->id, j->kind,
	                       strcmp(j->kind, "remove-server") == 0 ? "server" : "lib",
	                       strcmp(j->kind, "remove-server") == 0 ? j->server_id : j->library_id, j->target_name);
	x += console_put(y, x, r.x + r.w - x, ROLE_DIM, "phase ");
	x += console_put(y, x, r.x + r.w - x, console_phase_role(j->phase), j->phase);
	console_putf(y, x, r.x + r.w - x, ROLE_NORMAL, "  step %d  pass %d", j->step_no, j->pass_no);
	if (++y >= r.y + r.h)
		return;
	if (strcmp(j->kind, "prune") == 0)
		console_putf(y, r.x, r.w, ROLE_NORMAL, "manifest %s IDs, %s%s%s  high-water %s",
		             console_count(a, sizeof a, j->manifest_count),
		             j->expected_count >= 0 ? "expected " : "not sealed",
		             j->expected_count >= 0 ? console_count(b, sizeof b, j->expected_count) : "",
		             j->sealed_at[0] ? ", sealed" : "", j->high_water_id >= 0 ? console_count(d, sizeof d, j->high_water_id) : "-");
	else
		console_putf(y, r.x, r.w, ROLE_NORMAL, "no manifest (removes everything); closed %s  high-water %s",
		             j->sealed_at, j->high_water_id >= 0 ? console_count(d, sizeof d, j->high_water_id) : "-");
	if (++y >= r.y + r.h)
		return;
	console_putf(y, r.x, r.w, ROLE_NORMAL,
	             "examined %" PRId64 "  visited %" PRId64 "  deleted %" PRId64 "  moved %" PRId64 "  absent %" PRId64
	             "  retained %" PRId64 "  kept %" PRId64,
	             j->examined, j->visited, j->deleted, j->moved, j->absent, j->retained, j->kept);
	/* Issue 7: dependents and claims, when the job has any. */
	if (j->claimed > 0 || j->retries_deleted > 0 || j->previews_deleted > 0 || j->collections_deleted > 0 ||
	    j->sync_status_deleted > 0 || j->history_detached > 0) {
		if (++y >= r.y + r.h)
			return;
		console_putf(y, r.x, r.w, j->claimed > j->released ? ROLE_WARNING : ROLE_NORMAL,
		             "dependents: retries %" PRId64 "  previews %" PRId64 "  collections %" PRId64 "  sync %" PRId64
		             "  history detached %" PRId64 "  claims %" PRId64 " in flight (%" PRId64 " claimed)",
		             j->retries_deleted, j->previews_deleted, j->collections_deleted, j->sync_status_deleted,
		             j->history_detached, j->claimed - j->released, j->claimed);
	}
	if (strcmp(j->kind, "prune") != 0) {
		if (++y >= r.y + r.h)
			return;
		console_putf(y, r.x, r.w, ROLE_NORMAL, "libraries deleted %d  servers deleted %d", j->libraries_deleted,
		             j->servers_deleted);
	}
	if (++y >= r.y + r.h)
		return;
	x = r.x + console_putf(y, r.x, r.w, ROLE_NORMAL, "in scope %s  settled %s  cursor lib %" PRId64 " id %" PRId64 "  ",
	                       j->total_estimate >= 0 ? console_count(a, sizeof a, j->total_estimate) : "?",
	                       console_count(b, sizeof b, tui_progress_done(j)), j->cursor_library_id, j->cursor_id);
	pace = console_job_pace(v);
	if (pace > 0)
		x += console_putf(y, x, r.x + r.w - x, ROLE_NORMAL, "pace %.0f rows/s  ", pace);
	x += console_putf(y, x, r.x + r.w - x, j->busy_retries ? ROLE_WARNING : ROLE_NORMAL, "busy retries %" PRId64 "  ",
	                  j->busy_retries);
	if (active)
		console_putf(y, x, r.x + r.w - x, ROLE_NORMAL, "ETA %s", console_job_eta(eta, sizeof eta, v));
	if (active || v->runner_pid > 0) {
		if (++y >= r.y + r.h)
			return;
		draw_runner(v, r, y);
	}
	if (j->last_error[0]) {
		if (++y >= r.y + r.h)
			return;
		console_putf(y, r.x, r.w, ROLE_DANGER, "last error %s: %s", v->last_error_at, j->last_error);
	}
	if (!have_steps(c)) {
		if (++y < r.y + r.h)
			console_put(y, r.x, r.w, ROLE_DIM, "loading steps...");
		return;
	}
	if (y + 3 < r.y + r.h) {
		sparks(c, r, y + 1);
		y += 2;
	}
	if (++y >= r.y + r.h)
		return;
	dur = r.w >= 74; /* the step's duration goes first when narrow */
	console_putf(y, r.x, r.w, ROLE_DIM, "%5s %-12s %4s %4s %4s %4s %4s %4s %4s %4s %7s %s%8s", "STEP", "ACTION", "VIS",
	             "DEL", "MOV", "ABS", "RET", "KEPT", "DEP", "CLM", "LOCK ms", dur ? " DUR ms " : "", "AT");
	n = rows(c);
	if (n == 0 && ++y < r.y + r.h)
		console_put(y, r.x, r.w, ROLE_DIM, j->step_no ? "" : "(no steps yet)");
	console_scroll(c, PANEL_DETAIL, n, r.y + r.h - y - 1);
	for (i = 0; y + 1 < r.y + r.h && c->top[PANEL_DETAIL] + i < n; i++) {
		int k = c->top[PANEL_DETAIL] + i;
		const cleanup_mon_step *s = &c->snap->steps[k];
		bool sel = focused && k == c->sel[PANEL_DETAIL];
		char durbuf[24];

		snprintf(durbuf, sizeof durbuf, "%7.2f ", s->duration_ms);
		y++;
		if (sel) {
			attrset(theme_attr(ROLE_SELECTION));
			mvhline(y, r.x, ' ', r.w);
		}
		console_putf(y, r.x, r.w, sel ? ROLE_SELECTION : ROLE_NORMAL,
		             "%5d %-12.12s %4d %4d %4d %4d %4d %4d %4d %4d %7.2f %s%8s", s->step_no, s->action, s->visited,
		             s->deleted, s->moved, s->absent, s->retained, s->kept, s->dependent_mutations, s->claims_in_flight,
		             s->lock_hold_ms, dur ? durbuf : "", s->started);
	}
}

/* Enter in the detail: back to the dashboard. */
static void open_row(console *c)
{
	c->zoom = false;
	c->focus = PANEL_JOBS;
	console_relayout(c);
}

const tui_panel_class panel_detail = {PANEL_DETAIL, rows, draw, open_row};
