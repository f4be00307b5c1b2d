/* The jobs panel: kind, target, phase (always a word), a progress bar with
 * done of total and ETA ("no runner" when nobody runs a draining job), counters, step number, busy retries and the last
 * error. Columns drop from the right as the panel narrows; the detail panel
 * always has them all. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "console_int.h"
#include "progress.h"
#include "sanitize.h"

static int rows(const console *c)
{
	return c->njobs_view;
}

static const char *short_kind(const char *kind, bool narrow)
{
	if (!narrow)
		return kind;
	if (strcmp(kind, "remove-library") == 0)
		return "rm-lib";
	if (strcmp(kind, "remove-server") == 0)
		return "rm-srv";
	return kind;
}

static bool phase_is(const cleanup_job *j, const char *p)
{
	return strcmp(j->phase, p) == 0;
}

double console_job_pace(const cleanup_mon_job *v)
{
	return tui_job_pace(v); /* progress.h: the CLI's definition too */
}

const char *console_job_eta(char *buf, size_t len, const cleanup_mon_job *v)
{
	return tui_job_eta(buf, len, v);
}

const char *console_unattended_text(char *buf, size_t len, const cleanup_mon_job *v)
{
	const cleanup_job *j = &v->job;
	char age[16], closed[32] = "", name[CLEANUP_NAME_SIZE];
	bool server = strcmp(j->kind, "remove-server") == 0;

	/* How long it has been closed: from the seal or the
	 * removal's creation, however many runners came and went since. */
	if (v->closed_s >= 0) {
		char d[16];

		snprintf(closed, sizeof closed, " for %s", tui_duration_text(d, sizeof d, v->closed_s));
	}
	/* The name cut at 60 columns on a character boundary, not 60 bytes. */
	snprintf(buf, len,
	         "NO RUNNER for %s: %s %" PRId64 " \"%s\" closed to writers%s (r runs it; or cleanupctl job run %" PRId64 ")",
	         tui_duration_text(age, sizeof age, v->unattended_s), server ? "server" : "library",
	         server ? j->server_id : j->library_id, tui_sanitize_cut(name, sizeof name, j->target_name, 60), closed,
	         j->id);
	return buf;
}

/* The columns' layout (draw's choice) for row(). */
typedef struct jobs_lay {
	int kw, tw;
	bool narrow, counters;
} jobs_lay;

/* Row K of the jobs view: '>' marks the chosen job (the detail's). */
static void row(console *c, int k, int y, tui_rect r, bool sel, void *ctx)
{
	const jobs_lay *lay = ctx;
	int x, right = r.x + r.w, kw = lay->kw, tw = lay->tw;
	bool narrow = lay->narrow, counters = lay->counters;
	const cleanup_mon_job *v = console_view_job(c, k);
	const cleanup_job *j = &v->job;
	bool chosen = j->id == c->sel_job_id;
	theme_role base = console_row_role(sel, ROLE_NORMAL);
	char a[32], b[32];
	char target[CLEANUP_NAME_SIZE + 32], cell[CLEANUP_NAME_SIZE + 32], eta[16], n1[16], n2[16], n3[16], n4[16],
	    n5[16];

	snprintf(target, sizeof target, "%s %" PRId64 " %s", strcmp(j->kind, "remove-server") == 0 ? "srv" : "lib",
	         strcmp(j->kind, "remove-server") == 0 ? j->server_id : j->library_id, j->target_name);
	/* By display width, at a character boundary (sanitize.h). */
	x = r.x + console_putf(y, r.x, r.w, base, "%s%4" PRId64 " %-*s %s ", chosen ? ">" : " ", j->id, kw,
	                       short_kind(j->kind, narrow), tui_sanitize_cell(cell, sizeof cell, target, (size_t)tw));
	/* The phase as a word, in its colour. */
	console_put(y, x, right - x, sel ? base : console_phase_role(j->phase), j->phase);
	x += 11;
	x += console_putf(y, x, right - x, base, "%5d ", j->step_no);
	if (phase_is(j, "collecting") || phase_is(j, "paused")) {
		console_putf(y, x, 20, sel ? base : ROLE_DIM, "manifest %s IDs", console_count(a, sizeof a, j->manifest_count));
	} else if (phase_is(j, "cancelled")) {
		console_put(y, x, 20, sel ? base : ROLE_DIM, "cancelled, 0 deleted");
	} else {
		int64_t total = tui_progress_total(j), done = tui_progress_done(j);

		/* Progress (progress.h): rows settled of the rows in scope
		 * when the job was sealed, as `job run` shows it. */
		console_bar(y, x, 6, done, total > 0 ? total : 0);
		console_putf(y, x + 7, 13, base, "%s/%s", console_compact(a, sizeof a, done),
		             total >= 0 ? console_compact(b, sizeof b, total) : "?");
	}
	x += 21;
	console_job_eta(eta, sizeof eta, v);
	x += console_putf(y, x, right - x,
	                  sel ? base : strcmp(eta, "no runner") == 0 ? ROLE_DANGER
	                             : strcmp(eta, "stalled") == 0 ? ROLE_WARNING : ROLE_NORMAL,
	                  "%9s", eta);
	if (counters) {
		x += console_putf(y, x, right - x, base, " %7s %7s %6s %6s %6s ", console_compact(n1, sizeof n1, j->visited),
		                  console_compact(n2, sizeof n2, j->deleted), console_compact(n3, sizeof n3, j->moved),
		                  console_compact(n4, sizeof n4, j->absent), console_compact(n5, sizeof n5, j->retained));
		x += console_putf(y, x, right - x, sel ? base : j->busy_retries ? ROLE_WARNING : ROLE_NORMAL, "%5s  ",
		                  console_compact(n1, sizeof n1, j->busy_retries));
		if (j->last_error[0])
			console_putf(y, x, right - x, sel ? base : ROLE_DANGER, "%s %s", v->last_error_at, j->last_error);
	}
}

static void draw(console *c, tui_rect r, bool focused)
{
	const cleanup_mon_snapshot *s = c->snap;
	bool narrow = r.w < 150;
	int kw = narrow ? 6 : 14, n = rows(c), i, chosen = -1;
	jobs_lay lay;
	/* marker, id, kind, target (tw), phase, step, progress, ETA; then the
	 * counters and busy retries (45 columns) when the target keeps 12 (at
	 * 120 columns, and so at every width from there on). */
	int fixed = 6 + (kw + 1) + 1 + 11 + 6 + 21 + 9;
	bool counters = r.w - fixed - 45 >= 12;
	int tw = r.w - fixed - (counters ? 45 : 0);

	if (tw > 28)
		tw = 28;
	if (tw < 8)
		tw = 8;
	console_putf(r.y, r.x, r.w, ROLE_DIM, " %4s %-*s %-*s %-10s %5s %-20s %9s%s", "JOB", kw, "KIND", tw, "TARGET",
	             "PHASE", "STEP", "PROGRESS", "ETA",
	             counters ? " VISITED DELETED  MOVED ABSENT RETAIN  BUSY  LAST ERROR" : "");
	if (n == 0 && s->seq && s->njobs > 0)
		console_putf(r.y + 1, r.x, r.w, ROLE_DIM, "(no job matches \"%s\": / edits the filter, Esc in it clears it)",
		             c->job_filter);
	else if (n == 0 && s->seq)
		console_put(r.y + 1, r.x, r.w, ROLE_DIM, "(no jobs: cleanupctl job create prune --library ID)");
	lay.kw = kw;
	lay.tw = tw;
	lay.narrow = narrow;
	lay.counters = counters;
	/* the chosen job is highlighted (it may be filtered out: none) */
	for (i = 0; i < n; i++)
		if (focused && console_view_job(c, i)->job.id == c->sel_job_id)
			chosen = i;
	r.y++;
	r.h--;
	console_list(c, PANEL_JOBS, r, n, chosen, row, &lay);
}

/* Enter: the job's detail fills the screen (Esc returns). */
static void open_row(console *c)
{
	if (c->sel_job_id > 0) {
		c->focus = PANEL_DETAIL;
		c->zoom = true;
		console_relayout(c);
	}
}

const tui_panel_class panel_jobs = {PANEL_JOBS, rows, draw, open_row, NULL};
