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
#include "console_int.h"

/* The holders listed below the tree (T3): sessions idle in
 * a transaction for more than 10 s on our tables that the tree does not
 * show already. Their indexes into snap->holders go to IDX (at most MAX);
 * returns how many. */
static size_t extra_holders(const cleanup_mon_snapshot *s, size_t *idx, size_t max)
{
	size_t i, k, n = 0;

	if (!s->locks_valid)
		return 0;
	for (i = 0; i < s->nholders && n < max; i++) {
		bool listed = false;

		if (!s->holders[i].idle)
			continue;
		for (k = 0; k < s->nlocks && !listed; k++)
			listed = s->locks[k].pid == s->holders[i].pid;
		if (!listed)
			idx[n++] = i;
	}
	return n;
}

void console_locks_sync(console *c)
{
	const cleanup_mon_snapshot *s = c->snap;
	console_locks *l = &c->locks;
	int was = 0, k = c->sel[PANEL_LOCKS];
	size_t i;

	if (l->seq == s->seq && s->seq != 0)
		return;
	if (k >= 0 && (size_t)k < l->n + l->nx)
		was = l->pid[k];
	l->seq = s->seq;
	l->n = s->nlocks > CONSOLE_LOCK_TREE ? CONSOLE_LOCK_TREE : s->nlocks;
	l->blocked = cleanup_locks_tree(l->order, l->depth, s->locks, l->n);
	l->nx = extra_holders(s, l->idx, CONSOLE_LOCK_HOLDERS);
	for (i = 0; i < l->n; i++)
		l->pid[i] = s->locks[l->order[i]].pid;
	for (i = 0; i < l->nx; i++)
		l->pid[l->n + i] = s->holders[l->idx[i]].pid;
	/* the highlight stays on the backend the operator chose */
	c->sel[PANEL_LOCKS] = tui_follow_row(l->pid, (int)(l->n + l->nx), was, k);
}

static int rows(const console *c)
{
	return (int)(c->locks.n + c->locks.nx);
}

/* "1m31s" / "12s" / "0.4s" / "2h05m". */
static void age_text(char *buf, size_t len, double ms)
{
	if (ms < 0)
		snprintf(buf, len, "-");
	else if (ms < 10000)
		snprintf(buf, len, "%.1fs", ms / 1000.0);
	else if (ms < 60000)
		snprintf(buf, len, "%ds", (int)(ms / 1000));
	else if (ms < 3600000)
		snprintf(buf, len, "%dm%02ds", (int)(ms / 60000), (int)(ms / 1000) % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)(ms / 3600000), (int)(ms / 60000) % 60);
}

static const cleanup_mon_holder *find_holder(const cleanup_mon_snapshot *s, int pid)
{
	size_t i;

	for (i = 0; i < s->nholders; i++)
		if (s->holders[i].pid == pid)
			return &s->holders[i];
	return NULL;
}

/* The holder text of terminate-holder's dialog, in the engine's words
 * (cleanup.holders_text): "pid 4411 (role r, application psql, client
 * local, idle in transaction, transaction 91.2 s old) holds ...". */
static void holder_text(char *buf, size_t len, const cleanup_mon_holder *h)
{
	char age[24];

	if (h->xact_age_ms >= 0)
		snprintf(age, sizeof age, "%.1f s old", h->xact_age_ms / 1000.0);
	else
		snprintf(age, sizeof age, "none");
	snprintf(buf, len, "pid %d (role %s, application %s, client %s, %s, transaction %s) holds %s", h->pid, h->role,
	         h->application[0] ? h->application : "none", h->client, h->state, age,
	         h->holds[0] ? h->holds : "no lock on a table of ours");
}

bool console_locks_holder_target(const console *c, int k, confirm_target *t)
{
	const cleanup_mon_snapshot *s = c->snap;
	const console_locks *ls = &c->locks;
	const cleanup_mon_holder *h;

	if (k < 0 || !s->locks_valid || ls->seq != s->seq)
		return false;
	if ((size_t)k < ls->n) {
		const cleanup_lock_row *l = &s->locks[ls->order[k]];

		t->holder_pid = l->pid;
		if ((h = find_holder(s, l->pid)))
			holder_text(t->holder_text, sizeof t->holder_text, h);
		else
			snprintf(t->holder_text, sizeof t->holder_text, "pid %d (application %s, %s)%s", l->pid,
			         l->application_name[0] ? l->application_name : "none", l->state,
			         l->nblocked_by > 0 ? ", itself waiting for a lock" : "");
		return true;
	}
	if ((size_t)k - ls->n >= ls->nx)
		return false;
	h = &s->holders[ls->idx[(size_t)k - ls->n]];
	t->holder_pid = h->pid;
	holder_text(t->holder_text, sizeof t->holder_text, h);
	return true;
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

/* Row RI of the locks list: a backend of the blocking tree, indented by
 * its depth, or (past the tree) a session idle in a transaction. */
static void row(console *c, int ri, int y, tui_rect r, bool sel, void *ctx)
{
	const console_locks *lay = &c->locks;
	const cleanup_mon_snapshot *s = c->snap;
	const cleanup_lock_row *l;
	int ind, x;
	char name[128];

	(void)ctx;
	if (ri >= (int)lay->n) {
		/* An idle-in-transaction holder nobody waits for yet. */
		const cleanup_mon_holder *h = &s->holders[lay->idx[ri - (int)lay->n]];
		char age[24];

		age_text(age, sizeof age, h->xact_age_ms);
		console_putf(y, r.x, r.w, console_row_role(sel, ROLE_WARNING), "%d %s idle %s (role %s, %s) in xact: %s", h->pid,
		             h->application[0] ? h->application : "(no application_name)", age, h->role, h->client, h->holds);
		return;
	}
	l = &s->locks[lay->order[ri]];
	ind = lay->depth[ri] * 2;
	if (ind > 12)
		ind = 12;
	who(name, sizeof name, l);
	x = r.x + ind;
	x += console_putf(y, x, r.x + r.w - x, console_row_role(sel, ROLE_NORMAL), "%s%d %s ", lay->depth[ri] ? "└ " : "",
	                  l->pid, name);
	if (l->nblocked_by > 0)
		console_putf(y, x, r.x + r.w - x, console_row_role(sel, ROLE_DANGER), "waits %.1fs %s %s %s",
		             l->wait_ms >= 0 ? l->wait_ms / 1000.0 : 0.0, l->mode, l->locktype, l->relation);
	else
		console_putf(y, x, r.x + r.w - x, console_row_role(sel, ROLE_DIM), "%s%s%s", l->state,
		             l->xact_age_ms >= 0 ? " in xact " : "",
		             l->xact_age_ms >= 0 ? (l->xact_age_ms >= 1000 ? "≥1s" : "<1s") : "");
}

static void draw(console *c, tui_rect r, bool focused)
{
	const cleanup_mon_snapshot *s = c->snap;
	const console_locks *l = &c->locks;
	size_t i;
	int y = r.y, shown, contention_rows = 0;
	char at[16];
	tui_rect list;

	for (i = 0; i < s->ncontention; i++)
		contention_rows++;
	if (!s->locks_valid) {
		console_put(y, r.x, r.w, s->locks_error[0] ? ROLE_WARNING : ROLE_DIM,
		            s->locks_error[0] ? s->locks_error : "locks: waiting for the first lock query");
		y++;
	} else {
		console_clock(at, sizeof at, s->locks_at);
		if (s->locks_error[0])
			console_putf(y, r.x, r.w, ROLE_WARNING, "%s; showing %s", s->locks_error, at);
		else if (l->nx)
			/* the count first: the panel is narrow at 80 columns */
			console_putf(y, r.x, r.w, ROLE_WARNING, "%zu idle in xact >10s, %zu blocked  %s  %.1f ms  %zu backends",
			             l->nx, l->blocked, at, s->locks_ms, l->n);
		else
			console_putf(y, r.x, r.w, l->blocked ? ROLE_WARNING : ROLE_DIM, "%s  %.1f ms  %zu backends, %zu blocked",
			             at, s->locks_ms, l->n, l->blocked);
		y++;
		/* Keep room for the contention summary below the tree. */
		shown = r.y + r.h - y - (contention_rows > 0 ? (contention_rows < 4 ? contention_rows : 4) + 1 : 0);
		list = r;
		list.y = y;
		list.h = shown;
		y += shown > 0 ? console_list(c, PANEL_LOCKS, list, rows(c), focused ? c->sel[PANEL_LOCKS] : -1, row, NULL)
		               : 0;
		if (l->n == 0 && l->nx == 0 && y < r.y + r.h)
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
	const console_locks *l = &c->locks;
	int k = c->sel[PANEL_LOCKS];
	int64_t job;

	if (k < 0 || (size_t)k >= l->n || l->seq != c->snap->seq)
		return;
	job = c->snap->locks[l->order[k]].job_id;
	if (job > 0) {
		console_select_job(c, job);
		c->focus = PANEL_JOBS;
	}
}

const tui_panel_class panel_locks = {PANEL_LOCKS, rows, draw, open_row, NULL};
