/* The locks panel: the blocking tree (pg_blocking_pids over pg_locks and
 * pg_stat_activity, refreshed on its own slower schedule), application
 * names mapped to jobs and writers, and the recent NOWAIT rejections and
 * busy retries. Says so, and keeps the last tree, when the lock query times
 * out. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "console.h"

static int rows(const console *c)
{
	return (int)c->snap->nlocks;
}

static void hhmmss(char *buf, size_t len, double wall)
{
	time_t t = (time_t)wall;
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

static void who(char *buf, size_t len, const cleanup_lock_row *l)
{
	if (l->job_id > 0)
		snprintf(buf, len, "job %" PRId64 " (%s)", l->job_id, l->application_name);
	else if (strncmp(l->application_name, "cleanupctl:writer:", 18) == 0)
		snprintf(buf, len, "writer %s", l->application_name + 18);
	else
		snprintf(buf, len, "%s", l->application_name[0] ? l->application_name : "(no application_name)");
}

static void draw(console *c, tui_rect r, bool focused)
{
	const cleanup_mon_snapshot *s = c->snap;
	size_t order[512];
	int depth[512];
	size_t n = s->nlocks > 512 ? 512 : s->nlocks, blocked, i;
	int y = r.y, shown, contention_rows = 0, k;
	char at[16];

	for (i = 0; i < s->ncontention; i++)
		contention_rows++;
	if (!s->locks_valid) {
		console_put(y, r.x, r.w, s->locks_error[0] ? ROLE_WARNING : ROLE_DIM,
		            s->locks_error[0] ? s->locks_error : "locks: waiting for the first lock query");
		y++;
	} else {
		blocked = cleanup_locks_tree(order, depth, s->locks, n);
		hhmmss(at, sizeof at, s->locks_at);
		if (s->locks_error[0])
			console_putf(y, r.x, r.w, ROLE_WARNING, "%s; showing %s", s->locks_error, at);
		else
			console_putf(y, r.x, r.w, blocked ? ROLE_WARNING : ROLE_DIM, "%s  %.1f ms  %zu backends, %zu blocked", at,
			             s->locks_ms, n, blocked);
		y++;
		/* Keep room for the contention summary below the tree. */
		shown = r.y + r.h - y - (contention_rows > 0 ? (contention_rows < 4 ? contention_rows : 4) + 1 : 0);
		console_scroll(c, PANEL_LOCKS, (int)n, shown);
		for (k = 0; k < shown && c->top[PANEL_LOCKS] + k < (int)n; k++) {
			int idx = c->top[PANEL_LOCKS] + k;
			const cleanup_lock_row *l = &s->locks[order[idx]];
			bool sel = focused && idx == c->sel[PANEL_LOCKS];
			int ind = depth[idx] * 2, x;
			char name[128];

			if (ind > 12)
				ind = 12;
			who(name, sizeof name, l);
			if (sel) {
				attrset(theme_attr(ROLE_SELECTION));
				mvhline(y, r.x, ' ', r.w);
			}
			x = r.x + ind;
			x += console_putf(y, x, r.x + r.w - x, sel ? ROLE_SELECTION : ROLE_NORMAL, "%s%d %s ", depth[idx] ? "└ " : "",
			                  l->pid, name);
			if (l->nblocked_by > 0)
				console_putf(y, x, r.x + r.w - x, sel ? ROLE_SELECTION : ROLE_DANGER, "waits %.1fs %s %s %s",
				             l->wait_ms >= 0 ? l->wait_ms / 1000.0 : 0.0, l->mode, l->locktype, l->relation);
			else
				console_putf(y, x, r.x + r.w - x, sel ? ROLE_SELECTION : ROLE_DIM, "%s%s%s", l->state,
				             l->xact_age_ms >= 0 ? " in xact " : "",
				             l->xact_age_ms >= 0 ? (l->xact_age_ms >= 1000 ? "≥1s" : "<1s") : "");
			y++;
		}
		if (n == 0 && y < r.y + r.h)
			console_put(y++, r.x, r.w, ROLE_DIM, "(no cleanupctl backend and no lock waits)");
	}
	if (contention_rows > 0 && y < r.y + r.h) {
		console_put(y++, r.x, r.w, ROLE_DIM, "rejections and busy retries, last 60 s:");
		for (i = 0; i < s->ncontention && y < r.y + r.h; i++) {
			const cleanup_mon_contention *e = &s->contention[i];

			if (e->count)
				console_putf(y++, r.x, r.w, ROLE_WARNING, "%5" PRId64 " %s %s (last %s)", e->n, e->kind,
				             strncmp(e->source, "cleanupctl:", 11) == 0 ? e->source + 11 : e->source, e->at);
			else
				console_putf(y++, r.x, r.w, ROLE_DIM, "%s %s: %s", e->at, e->kind, e->message);
		}
	}
}

/* Enter on a backend of a job: select that job. */
static void open_row(console *c)
{
	const cleanup_mon_snapshot *s = c->snap;
	size_t order[512];
	int depth[512];
	size_t n = s->nlocks > 512 ? 512 : s->nlocks;
	int k = c->sel[PANEL_LOCKS];

	if (k < 0 || (size_t)k >= n)
		return;
	cleanup_locks_tree(order, depth, s->locks, n);
	if (s->locks[order[k]].job_id > 0) {
		console_select_job(c, s->locks[order[k]].job_id);
		c->focus = PANEL_JOBS;
	}
}

const tui_panel_class panel_locks = {PANEL_LOCKS, rows, draw, open_row};
