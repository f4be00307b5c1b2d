/* The job detail panel: the selected job's manifest (count, expected,
 * sealed, high-water ID), counters, pace, sparklines of step rate and lock
 * hold over time, and its step history with cursors, gaps and lock holds.
 * Each step names its runner (pid and application of the session that
 * committed it) when the panel is wide enough.
 * The history scrolls from the newest step back to the first:
 * one row per step number; the monitor reads the page of steps
 * around the rows shown (mon_steps.sql), and the panel asks for another
 * page when the operator scrolls out of it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "console_int.h"
#include "progress.h"
#include "sanitize.h"
#include "sparkline.h"

/* The RUNNER column's width (tui_step_columns decides when it shows). */
#define RUNNER_W TUI_STEP_RUNNER_W

/* Step S's runner for the RUNNER column: "pid application" sanitized, cut
 * and padded to RUNNER_W display columns; "-" when the step was recorded
 * without one. Returns BUF. */
static const char *runner_cell(char *buf, size_t len, const cleanup_mon_step *s)
{
	char raw[16 + sizeof s->runner_app];

	if (s->runner_pid > 0)
		snprintf(raw, sizeof raw, "%d %s", (int)s->runner_pid, s->runner_app);
	else
		snprintf(raw, sizeof raw, "-");
	return tui_sanitize_cell(buf, len, raw, RUNNER_W);
}

/* Step S's CURSOR cell: "  LIB: FROM > TO" (ids, or the external-ID
 * range of a drain in key order), "" when it has none. */
static void cursor_text(char *cursor, size_t len, const cleanup_mon_step *s)
{
	char a[32], b[32];

	if (s->library_id > 0 && strcmp(s->action, "drain") == 0 && s->key_to[0]) {
		/* Pass 1 of a prune in external-ID order (schema 12): the
		 * batch's key range. */
		char k1[80], k2[80];

		snprintf(cursor, len, "  %" PRId64 ": %s > %s", s->library_id,
		         s->key_from[0] ? tui_sanitize_cut(k1, sizeof k1, s->key_from, 16) : "start",
		         tui_sanitize_cut(k2, sizeof k2, s->key_to, 16));
	} else if (s->library_id > 0 && (s->cursor_from >= 0 || s->cursor_to >= 0))
		snprintf(cursor, len, "  %" PRId64 ": %s > %s", s->library_id,
		         s->cursor_from >= 0 ? console_count(a, sizeof a, s->cursor_from) : "start",
		         s->cursor_to >= 0 ? console_count(b, sizeof b, s->cursor_to) : "-");
	else
		cursor[0] = '\0';
}

/* Step S's cursor end: "  > TO" (the id, or the key of a drain in key
 * order), "" when it has none. */
static void cursor_end_text(char *out, size_t len, const cleanup_mon_step *s)
{
	char b[80];

	if (s->library_id > 0 && strcmp(s->action, "drain") == 0 && s->key_to[0])
		snprintf(out, len, "  > %s", tui_sanitize_cut(b, sizeof b, s->key_to, 16));
	else if (s->library_id > 0 && s->cursor_to >= 0)
		snprintf(out, len, "  > %s", console_count(b, sizeof b, s->cursor_to));
	else
		out[0] = '\0';
}

static bool have_steps(const console *c)
{
	return c->snap->detail_job_id == c->sel_job_id && c->sel_job_id > 0;
}

/* The job's steps: 1 .. its step number (the newest page may be ahead of
 * the job row). */
static int total_steps(const console *c)
{
	const cleanup_mon_job *v = console_selected_job(c);
	int n = v ? v->job.step_no : 0;

	if (have_steps(c) && c->snap->nsteps > 0 && c->snap->steps[0].step_no > n)
		n = c->snap->steps[0].step_no;
	return n;
}

static int rows(const console *c)
{
	return have_steps(c) ? total_steps(c) : 0;
}

/* The step numbered NO in the snapshot's page, NULL when not read. */
static const cleanup_mon_step *page_step(const console *c, int no)
{
	const cleanup_mon_snapshot *s = c->snap;
	int64_t idx;
	size_t i;

	if (s->nsteps == 0)
		return NULL;
	idx = (int64_t)s->steps[0].step_no - no;
	if (idx >= 0 && (size_t)idx < s->nsteps && s->steps[idx].step_no == no)
		return &s->steps[idx];
	for (i = 0; i < s->nsteps; i++) /* a page with a hole */
		if (s->steps[i].step_no == no)
			return &s->steps[i];
	return NULL;
}

/* Chooses the page the monitor reads for rows TOP .. TOP+VISIBLE-1 (row 0
 * the newest of N steps): the newest page while the top row is shown,
 * else one that starts a little above the rows shown, when the current
 * page lacks one of them. */
static void want_page(console *c, int n, int top, int visible)
{
	int first = n - top, last = n - top - visible + 1;

	if (top == 0) {
		c->steps_want = -1;
		return;
	}
	if (last < 1)
		last = 1;
	if (page_step(c, first) && page_step(c, last))
		return;
	c->steps_want = first + 20 >= n ? -1 : first + 20;
}

static void sparks(console *c, tui_rect r, int y)
{
	const cleanup_mon_snapshot *s = c->snap;
	double vals[CLEANUP_MON_RATE_SECONDS > CLEANUP_MON_STEPS_PAGE ? CLEANUP_MON_RATE_SECONDS : CLEANUP_MON_STEPS_PAGE];
	double max = 0;
	char line[1024];
	int w = r.w - 40, i, n = (int)s->nsteps;

	if (w < 8)
		w = 8;
	if (w > CLEANUP_MON_RATE_SECONDS)
		w = CLEANUP_MON_RATE_SECONDS;
	/* steps per second over the last W seconds, counted by the monitor
	 * from every step record, not from the page shown */
	for (i = 0; i < w; i++) {
		vals[i] = s->rate_job_id == s->detail_job_id ? (double)s->rate[CLEANUP_MON_RATE_SECONDS - w + i] : 0;
		if (vals[i] > max)
			max = vals[i];
	}
	sparkline_render(line, sizeof line, vals, (size_t)w, w, c->utf8, NULL);
	console_put(y, r.x, 11, ROLE_DIM, "step rate");
	console_put(y, r.x + 11, w, ROLE_SPARK, line);
	console_putf(y, r.x + 12 + w, r.w - 12 - w, ROLE_DIM, "max %.0f/s, last %ds", max, w);
	/* lock hold per step of the page shown, oldest first */
	if (n > CLEANUP_MON_STEPS_PAGE)
		n = CLEANUP_MON_STEPS_PAGE;
	for (i = 0; i < n; i++)
		vals[i] = s->steps[n - 1 - i].lock_hold_ms;
	sparkline_render(line, sizeof line, vals, (size_t)n, w, c->utf8, &max);
	console_put(y + 1, r.x, 11, ROLE_DIM, "lock hold");
	console_put(y + 1, r.x + 11, w, ROLE_SPARK, line);
	if (n > 0)
		console_putf(y + 1, r.x + 12 + w, r.w - 12 - w, ROLE_DIM, "max %.2f ms, steps %d-%d", max,
		             s->steps[(n < w ? n : w) - 1].step_no, s->steps[0].step_no);
}

/* The runner line: who holds the job's runner lease (its backend, and the
 * host and OS pid of the process to stop), or, loudly, that nobody does
 * while the job keeps its target closed to writers. */
static void draw_runner(const cleanup_mon_job *v, tui_rect r, int y)
{
	const cleanup_job *j = &v->job;
	char age[16], last[16], text[400];

	if (v->runner_pid > 0) {
		snprintf(text, sizeof text, "runner: backend %d  last step %s ago  %s  on %s:%d  since %s (%s)", v->runner_pid,
		         v->last_step_age_s >= 0 ? tui_duration_text(last, sizeof last, v->last_step_age_s) : "-",
		         v->runner_app[0] ? v->runner_app : "(application not visible)",
		         v->runner_client[0] ? v->runner_client : "?", v->runner_os_pid, v->runner_since[0] ? v->runner_since : "?",
		         tui_duration_text(age, sizeof age, v->runner_age_s));
		console_put(y, r.x, r.w, ROLE_OK, text);
		return;
	}
	console_put(y, r.x, r.w, ROLE_DANGER, console_unattended_text(text, sizeof text, v));
	(void)j;
}

/* The counters' headings, in tui_step_cols' bit order. */
static const char *const counter_head[TUI_STEP_COUNTERS] = {"VIS", "DEL", "MOV", "ABS", "RET", "KEPT", "DEP", "CLM"};

/* The step history's heading for the columns SC (CW: the whole cursor's
 * width; WIDE: the cursor explained). */
static void head_row(char *buf, size_t len, const tui_step_cols *sc, int cw, bool wide)
{
	size_t l;
	int k;

	snprintf(buf, len, "%6s %-*s", "STEP", sc->action_w, "ACTION");
	for (k = 0; k < TUI_STEP_COUNTERS; k++)
		if (sc->counters & (1u << k)) {
			l = strlen(buf);
			snprintf(buf + l, len - l, " %4s", counter_head[k]);
		}
	l = strlen(buf);
	snprintf(buf + l, len - l, "%s%s %8s %6s", sc->lock ? " LOCK ms" : "", sc->dur ? "  DUR ms" : "", "AT", "GAP");
	l = strlen(buf);
	if (sc->runner)
		snprintf(buf + l, len - l, " %-*s", RUNNER_W, "RUNNER");
	else if (sc->tag)
		snprintf(buf + l, len - l, " %-*s", TUI_RUNNER_TAG_W, "RUNNER");
	l = strlen(buf);
	if (sc->cursor)
		snprintf(buf + l, len - l, "%s", wide ? "  CURSOR (lib: id from > to)" : "  CURSOR");
	else if (sc->cursor_end)
		snprintf(buf + l, len - l, "  END");
	(void)cw;
}

/* Step S's row up to AT (the gap, runner and cursor are drawn apart, in
 * their roles); MARK: a '*' before the number. */
static void step_row(char *buf, size_t len, const tui_step_cols *sc, const cleanup_mon_step *s, bool mark)
{
	const int32_t counter[TUI_STEP_COUNTERS] = {s->visited,  s->deleted, s->moved,
	                                            s->absent,   s->retained, s->kept,
	                                            s->dependent_mutations, s->claims_in_flight};
	size_t l;
	int k;

	snprintf(buf, len, "%c%5d %-*.*s", mark ? '*' : ' ', s->step_no, sc->action_w, sc->action_w, s->action);
	if (s->step_no > 99999)
		snprintf(buf, len, "%6d %-*.*s", s->step_no, sc->action_w, sc->action_w, s->action);
	for (k = 0; k < TUI_STEP_COUNTERS; k++)
		if (sc->counters & (1u << k)) {
			l = strlen(buf);
			snprintf(buf + l, len - l, " %4d", counter[k]);
		}
	l = strlen(buf);
	if (sc->lock)
		snprintf(buf + l, len - l, " %7.2f", s->lock_hold_ms);
	l = strlen(buf);
	if (sc->dur)
		snprintf(buf + l, len - l, " %7.2f", s->duration_ms);
	l = strlen(buf);
	snprintf(buf + l, len - l, " %8s", s->started);
}

/* Row K of the step history (step number total - K) in the columns
 * CTX (tui_step_cols). */
static void step_line(console *c, int k, int y, tui_rect r, bool sel, void *ctx)
{
	const tui_step_cols *sc = ctx;
	int no = total_steps(c) - k, x;
	const cleanup_mon_step *s = page_step(c, no);
	char gap[16], cursor[200], runner[4 * RUNNER_W + 1], line_buf[600];
	unsigned why;

	if (!s) {
		console_putf(y, r.x, r.w, console_row_role(sel, ROLE_DIM), "%6d (reading...)", no);
		return;
	}
	why = tui_step_gap(tui_step_prev(c->snap->steps, c->snap->nsteps, s), s, TUI_GAP_THRESHOLD_S);
	/* a gap of at least 2 s before the step: a stop, a dead runner */
	if (s->gap_s >= TUI_GAP_THRESHOLD_S) {
		gap[0] = '+';
		tui_duration_text(gap + 1, sizeof gap - 1, s->gap_s);
	} else {
		gap[0] = '\0';
	}
	step_row(line_buf, sizeof line_buf, sc, s, why != 0);
	x = r.x + console_put(y, r.x, r.w, console_row_role(sel, ROLE_NORMAL), line_buf);
	if (why && !sel)
		console_put(y, r.x, 1, ROLE_WARNING, "*");
	x += console_putf(y, x, r.x + r.w - x, console_row_role(sel, ROLE_WARNING), " %6s", gap);
	if (sc->runner)
		x += console_putf(y, x, r.x + r.w - x, console_row_role(sel, ROLE_NORMAL), " %s",
		                  runner_cell(runner, sizeof runner, s));
	else if (sc->tag) {
		char t[40];

		tui_runner_tag(t, sizeof t, s->runner_pid, s->runner_app);
		x += console_putf(y, x, r.x + r.w - x, console_row_role(sel, why & TUI_GAP_RUNNER ? ROLE_WARNING : ROLE_NORMAL),
		                  " %-*.*s", TUI_RUNNER_TAG_W, TUI_RUNNER_TAG_W, t);
	}
	if (sc->cursor || sc->cursor_end) {
		if (sc->cursor)
			cursor_text(cursor, sizeof cursor, s);
		else
			cursor_end_text(cursor, sizeof cursor, s);
		console_put(y, x, r.x + r.w - x, console_row_role(sel, why & TUI_GAP_CURSOR ? ROLE_WARNING : ROLE_DIM), cursor);
	}
}

static void draw(console *c, tui_rect r, bool focused)
{
	const cleanup_mon_job *v = console_selected_job(c);
	const cleanup_job *j;
	char a[32], b[32], d[32], line[160], line_buf[600];
	int y = r.y, n, x, cw, ew;
	bool wide_head = false, active;
	tui_step_cols sc;
	tui_rect list;

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
	/* Seed 001: dependents and claims, when the job has any. */
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
	/* The progress line `job run` prints too (progress.h): settled of in
	 * scope, pace, ETA. */
	x = r.x + console_putf(y, r.x, r.w, ROLE_NORMAL, "progress %s  ", tui_job_progress_line(line, sizeof line, v));
	x += console_putf(y, x, r.x + r.w - x, j->busy_retries ? ROLE_WARNING : ROLE_NORMAL, "busy retries %" PRId64 "  ",
	                  j->busy_retries);
	if (j->key_order && j->pass_no == 1 && strcmp(j->phase, "draining") == 0) {
		/* Pass 1 of a prune in external-ID order (schema 12). */
		char key[128];

		console_putf(y, x, r.x + r.w - x, ROLE_DIM, "cursor lib %" PRId64 " key %s", j->cursor_library_id,
		             j->key_cursor[0] ? tui_sanitize_cut(key, sizeof key, j->key_cursor, 32) : "(start)");
	} else {
		console_putf(y, x, r.x + r.w - x, ROLE_DIM, "cursor lib %" PRId64 " id %" PRId64, j->cursor_library_id,
		             j->cursor_id);
	}
	if (active || v->runner_pid > 0) {
		if (++y >= r.y + r.h)
			return;
		draw_runner(v, r, y);
	}
	{
		/* The target library's count, when the count cache watches it
		 * (seed 002): fresh, ~stale, expired, building, restart, withheld,
		 * with the reason. */
		const cleanup_mon_library *l = strcmp(j->kind, "remove-server") == 0 ? NULL
		                                                                    : console_find_library(c, j->library_id);
		tui_count_kind ck = l ? tui_count_kind_of(l->count_state, l->count_reason) : COUNT_COUNTER;

		if (l && ck != COUNT_COUNTER) {
			char st[48], num[40];

			if (++y >= r.y + r.h)
				return;
			console_putf(y, r.x, r.w, ck == COUNT_FRESH ? ROLE_NORMAL : ck == COUNT_RESTART ? ROLE_DANGER : ROLE_WARNING,
			             "library count (cache): %s %s%s%s", tui_count_items_text(num, sizeof num, l, console_compact),
			             tui_count_state_text(st, sizeof st, l), l->count_reason[0] ? " - " : "", l->count_reason);
		}
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
	/* The columns by width (jobview.h, tui_step_columns): a
	 * short runner tag and the cursor, the duration giving way
	 * first, then the whole cursor to its end, then the counters but VIS
	 * and DEL: "step 123 resumed where 122 ended, under another runner"
	 * stays readable, zoomed at 120 and beside the locks panel (74). The
	 * cursor cells of the rows in view decide their widths. A step that
	 * did not resume where the one before ended (a gap: time, runner,
	 * cursor; ] and [ jump to them) is marked '*' before its number. */
	n = rows(c);
	{
		int k;
		char cb[200];

		cw = 8; /* at least the heading's "  CURSOR" */
		ew = 5; /* "  END" */
		for (k = c->top[PANEL_DETAIL]; k < n && k < c->top[PANEL_DETAIL] + r.h; k++) {
			const cleanup_mon_step *ps = page_step(c, n - k);

			if (ps) {
				cursor_text(cb, sizeof cb, ps);
				if (console_width(cb) > cw)
					cw = console_width(cb);
				cursor_end_text(cb, sizeof cb, ps);
				if (console_width(cb) > ew)
					ew = console_width(cb);
			}
		}
		sc = tui_step_columns(r.w, cw, ew);
		/* the heading explains the cursor when there is room for it */
		wide_head = sc.cursor && sc.width - cw + 28 <= r.w;
	}
	head_row(line_buf, sizeof line_buf, &sc, cw, wide_head);
	console_put(y, r.x, r.w, ROLE_DIM, line_buf);
	if (n == 0 && ++y < r.y + r.h)
		console_put(y, r.x, r.w, ROLE_DIM,
		            j->purged_at[0] ? "(step records removed by cleanupctl purge)"
		            : j->step_no    ? ""
		                            : "(no steps yet)");
	list = r;
	list.y = y + 1;
	list.h = r.y + r.h - y - 1;
	if (list.h > 0)
		console_list(c, PANEL_DETAIL, list, n, focused ? c->sel[PANEL_DETAIL] : -1, step_line, &sc);
	want_page(c, n, c->top[PANEL_DETAIL], list.h);
}

/* ] (DIR < 0: down, older steps) and [ (DIR > 0): the selection to the
 * next step that did not resume where the one before ended (jobview.h,
 * tui_step_find_gap), among the steps read; the footer says what the
 * gap was. */
static void gap_key(console *c, int dir)
{
	const cleanup_mon_snapshot *s = c->snap;
	int n, from, i;
	unsigned why;
	char text[600];

	if (!have_steps(c) || s->nsteps == 0) {
		console_message(c, ROLE_INFO, "%s: no steps read yet", dir < 0 ? "]" : "[");
		return;
	}
	n = total_steps(c);
	from = n - c->sel[PANEL_DETAIL];
	i = tui_step_find_gap(s->steps, s->nsteps, from, dir, TUI_GAP_THRESHOLD_S, &why);
	if (i < 0) {
		int lo = s->steps[s->nsteps - 1].step_no, hi = s->steps[0].step_no;

		console_message(c, ROLE_INFO, "no gap %s step %d in the steps read (%d-%d)%s", dir < 0 ? "below" : "above",
		                from, lo, hi,
		                dir < 0 && lo > 1 ? ": PgDn reads older ones" : dir > 0 && hi < n ? ": PgUp reads newer ones" : "");
		return;
	}
	c->sel[PANEL_DETAIL] = n - s->steps[i].step_no;
	console_message(c, ROLE_WARNING, "step %d: %s", s->steps[i].step_no,
	                tui_step_gap_text(text, sizeof text, tui_step_prev(s->steps, s->nsteps, &s->steps[i]), &s->steps[i],
	                                  why));
}

/* Enter in the detail: back to the dashboard. */
static void open_row(console *c)
{
	c->zoom = false;
	c->focus = PANEL_JOBS;
	console_relayout(c);
}

/* The detail's own keys: ] and [ (the step history's gaps). */
static bool key(console *c, tui_cmd cmd)
{
	if (cmd != CMD_NEXT_GAP && cmd != CMD_PREV_GAP)
		return false;
	gap_key(c, cmd == CMD_NEXT_GAP ? -1 : 1);
	return true;
}

const tui_panel_class panel_detail = {PANEL_DETAIL, rows, draw, open_row, key};
