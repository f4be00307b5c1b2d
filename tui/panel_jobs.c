/* The jobs panel: kind, target, phase (always a word), a progress bar with
 * done of total and ETA, counters, step number, busy retries and the last
 * error. Columns drop from the right as the panel narrows; the detail panel
 * always has them all. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "console.h"

static int rows(const console *c)
{
	return (int)c->snap->njobs;
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

/* The ETA of a draining job from the pace of its recent steps; "idle" when
 * nobody has stepped it for half a minute. */
static const char *eta_text(char *buf, size_t len, const cleanup_mon_job *v)
{
	const cleanup_job *j = &v->job;

	if (!phase_is(j, "draining") && !phase_is(j, "finalizing"))
		return "-";
	if (v->rows_per_s <= 0 || v->last_step_age_s < 0 || v->last_step_age_s > 30)
		return "idle";
	if (j->total_estimate < 0)
		return "?";
	return console_eta(buf, len, j->total_estimate > j->examined
	                                 ? (double)(j->total_estimate - j->examined) / v->rows_per_s
	                                 : 0);
}

static void draw(console *c, tui_rect r, bool focused)
{
	const cleanup_mon_snapshot *s = c->snap;
	bool narrow = r.w < 150;
	int kw = narrow ? 6 : 14, n = rows(c), i;
	/* marker, id, kind, target (tw), phase, step, progress, ETA; then the
	 * counters and busy retries (45 columns) when the target keeps 12. */
	int fixed = 6 + (kw + 1) + 1 + 11 + 6 + 23 + 6;
	bool counters = r.w - fixed - 45 >= 12;
	int tw = r.w - fixed - (counters ? 45 : 0);
	char a[32], b[32];

	if (tw > 28)
		tw = 28;
	if (tw < 8)
		tw = 8;
	console_putf(r.y, r.x, r.w, ROLE_DIM, " %4s %-*s %-*s %-10s %5s %-22s %6s%s", "JOB", kw, "KIND", tw, "TARGET",
	             "PHASE", "STEP", "PROGRESS", "ETA",
	             counters ? " VISITED DELETED  MOVED ABSENT RETAIN  BUSY  LAST ERROR" : "");
	console_scroll(c, PANEL_JOBS, n, r.h - 1);
	if (n == 0 && s->seq)
		console_put(r.y + 1, r.x, r.w, ROLE_DIM, "(no jobs: cleanupctl job create prune --library ID)");
	for (i = 0; i < r.h - 1 && c->top[PANEL_JOBS] + i < n; i++) {
		int k = c->top[PANEL_JOBS] + i, y = r.y + 1 + i, x, right = r.x + r.w;
		const cleanup_mon_job *v = &s->jobs[k];
		const cleanup_job *j = &v->job;
		bool chosen = j->id == c->sel_job_id, sel = focused && chosen;
		theme_role base = sel ? ROLE_SELECTION : ROLE_NORMAL;
		char target[64], eta[16], n1[16], n2[16], n3[16], n4[16], n5[16];

		if (sel) {
			attrset(theme_attr(ROLE_SELECTION));
			mvhline(y, r.x, ' ', r.w);
		}
		snprintf(target, sizeof target, "%s %" PRId64 " %.40s", strcmp(j->kind, "remove-server") == 0 ? "srv" : "lib",
		         strcmp(j->kind, "remove-server") == 0 ? j->server_id : j->library_id, j->target_name);
		x = r.x + console_putf(y, r.x, r.w, base, "%s%4" PRId64 " %-*s %-*.*s ", chosen ? ">" : " ", j->id, kw,
		                       short_kind(j->kind, narrow), tw, tw, target);
		/* The phase as a word, in its colour. */
		console_put(y, x, right - x, sel ? base : console_phase_role(j->phase), j->phase);
		x += 11;
		x += console_putf(y, x, right - x, base, "%5d ", j->step_no);
		if (phase_is(j, "collecting") || phase_is(j, "paused")) {
			console_putf(y, x, 22, sel ? base : ROLE_DIM, "manifest %s IDs", console_count(a, sizeof a, j->manifest_count));
		} else if (phase_is(j, "cancelled")) {
			console_put(y, x, 22, sel ? base : ROLE_DIM, "cancelled, none deleted");
		} else {
			int64_t total = j->total_estimate > 0 ? j->total_estimate : 0;

			if (phase_is(j, "completed"))
				total = j->examined > 0 ? j->examined : 1;
			/* Progress: rows examined (visited candidates and kept seen
			 * rows) of the rows in scope when the job was sealed. */
			console_bar(y, x, 8, j->examined, total);
			console_putf(y, x + 9, 13, base, "%s/%s", console_compact(a, sizeof a, j->examined),
			             j->total_estimate >= 0 ? console_compact(b, sizeof b, j->total_estimate) : "?");
		}
		x += 23;
		x += console_putf(y, x, right - x, base, "%6s", eta_text(eta, sizeof eta, v));
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

const tui_panel_class panel_jobs = {PANEL_JOBS, rows, draw, open_row};
