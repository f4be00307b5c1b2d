/* Drawing for the console: width-aware text, boxes, progress bars, the
 * header, the footer, and the overlays (help, confirmation dialog, "too
 * small"). Every colour comes from a theme role; phases are always written
 * as words. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>
#include "cmdline.h"
#include "numtext.h"
#include "console_int.h"
#include "progress.h"
#include "sanitize.h"

theme_role console_phase_role(const char *phase)
{
	char name[48];
	int role;

	/* the theme's role of each phase is named "phase.<phase>" */
	snprintf(name, sizeof name, "phase.%s", phase);
	role = theme_role_from_name(name);
	return role >= 0 ? (theme_role)role : ROLE_NORMAL;
}

/* Decodes one character of S (N bytes left) with the shared sanitizer's
 * rule (sanitize.h); *WIDTH gets its display width. Unsafe characters
 * (controls, bidi overrides) and bad bytes are *BAD, drawn as one '?'; so
 * is any non-ASCII character when the locale cannot show UTF-8. Returns
 * its length in bytes (>= 1). */
static size_t next_char(const char *s, size_t n, int *width, bool *bad)
{
	int32_t cp;
	size_t l = tui_utf8_next(s, n, &cp);

	*width = 1;
	*bad = tui_unsafe_codepoint(cp) || (cp >= 0x80 && MB_CUR_MAX == 1);
	if (*bad)
		return l;
	if (cp >= 0x80) {
		*width = wcwidth((wchar_t)cp);
		if (*width < 0) {
			*width = 1;
			*bad = true;
		}
	}
	return l;
}

int console_width(const char *s)
{
	size_t n = strlen(s), i = 0;
	int w = 0;

	while (i < n) {
		int cw;
		bool bad;

		i += next_char(s + i, n - i, &cw, &bad);
		w += cw;
	}
	return w;
}

int console_put(int y, int x, int w, theme_role role, const char *s)
{
	size_t n = strlen(s), i = 0;
	int used = 0;

	if (w <= 0 || y < 0 || x < 0)
		return 0;
	attrset(theme_attr(role));
	move(y, x);
	while (i < n) {
		int cw;
		bool bad;
		size_t l = next_char(s + i, n - i, &cw, &bad);

		if (used + cw > w)
			break;
		if (bad)
			addch('?');
		else
			addnstr(s + i, (int)l);
		used += cw;
		i += l;
	}
	attrset(A_NORMAL);
	return used;
}

int console_putf(int y, int x, int w, theme_role role, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return console_put(y, x, w, role, buf);
}

const char *console_count(char *buf, size_t len, int64_t n)
{
	return tui_count_text(buf, len, n);
}

const char *console_compact(char *buf, size_t len, int64_t n)
{
	if (n < 0)
		snprintf(buf, len, "-");
	else if (n < 100000)
		console_count(buf, len, n);
	else if (n < 1000000)
		snprintf(buf, len, "%" PRId64 "k", n / 1000);
	else if (n < 1000000000)
		snprintf(buf, len, "%.1fM", (double)n / 1e6);
	else
		snprintf(buf, len, "%.1fG", (double)n / 1e9);
	return buf;
}

const char *console_eta(char *buf, size_t len, double s)
{
	/* One definition for both front ends (tui/common/progress.h). */
	return tui_duration_text(buf, len, s);
}

void console_bar(int y, int x, int w, int64_t done, int64_t total)
{
	int cells, i;

	if (w < 3)
		return;
	if (total <= 0)
		cells = 0;
	else if (done >= total)
		cells = w - 2;
	else
		cells = (int)((double)done / (double)total * (w - 2));
	attrset(theme_attr(ROLE_DIM));
	mvaddch(y, x, '[');
	attrset(theme_attr(ROLE_PROGRESS));
	for (i = 0; i < w - 2; i++) {
		if (i < cells)
			addch('#');
		else {
			attrset(theme_attr(ROLE_DIM));
			addch('.');
		}
	}
	attrset(theme_attr(ROLE_DIM));
	addch(']');
	attrset(A_NORMAL);
}

void console_box(tui_rect r, const char *title, bool focused)
{
	int i;

	if (r.h < 2 || r.w < 2)
		return;
	attrset(theme_attr(ROLE_BORDER));
	mvaddch(r.y, r.x, ACS_ULCORNER);
	mvhline(r.y, r.x + 1, ACS_HLINE, r.w - 2);
	mvaddch(r.y, r.x + r.w - 1, ACS_URCORNER);
	for (i = 1; i < r.h - 1; i++) {
		mvaddch(r.y + i, r.x, ACS_VLINE);
		mvaddch(r.y + i, r.x + r.w - 1, ACS_VLINE);
	}
	mvaddch(r.y + r.h - 1, r.x, ACS_LLCORNER);
	mvhline(r.y + r.h - 1, r.x + 1, ACS_HLINE, r.w - 2);
	mvaddch(r.y + r.h - 1, r.x + r.w - 1, ACS_LRCORNER);
	attrset(A_NORMAL);
	if (title && r.w > 6) {
		char t[256];

		snprintf(t, sizeof t, focused ? "[%s]" : " %s ", title);
		console_put(r.y, r.x + 2, r.w - 4, focused ? ROLE_SELECTION : ROLE_TITLE, t);
	}
}

void console_scroll(console *c, tui_panel_id p, int nrows, int visible)
{
	if (c->sel[p] >= nrows)
		c->sel[p] = nrows - 1;
	if (c->sel[p] < 0)
		c->sel[p] = 0;
	if (visible < 1)
		visible = 1;
	if (c->top[p] > c->sel[p])
		c->top[p] = c->sel[p];
	if (c->sel[p] >= c->top[p] + visible)
		c->top[p] = c->sel[p] - visible + 1;
	if (c->top[p] > nrows - visible)
		c->top[p] = nrows - visible;
	if (c->top[p] < 0)
		c->top[p] = 0;
}

static const tui_panel_class *const classes[PANEL__COUNT] = {
	&panel_servers, &panel_libraries, &panel_jobs, &panel_detail, &panel_locks, &panel_log,
};

const char *console_clock(char *buf, size_t len, double wall)
{
	time_t t = (time_t)wall;
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
	return buf;
}

/* Shortens "user@/a/long/socket/dir:5432/db" to "user@…/socket/dir:5432/db"
 * (a host that is a path keeps its last two components). */
static void where_short(char *where, size_t len)
{
	char *at = strchr(where, '@'), *colon, *p, *cut = NULL, out[300];
	int slashes = 0;

	if (!at || at[1] != '/')
		return;
	colon = strchr(at, ':');
	if (!colon)
		return;
	for (p = colon - 1; p > at; p--)
		if (*p == '/' && ++slashes == 2) {
			cut = p + 1;
			break;
		}
	if (!cut)
		return;
	snprintf(out, sizeof out, "%.*s\xe2\x80\xa6/%s", (int)(at + 1 - where), where, cut);
	snprintf(where, len, "%s", out);
}

/* "15m", "42s", "2h05m": a short age for the header. */
static const char *short_age(char *buf, size_t len, double s)
{
	long v = s >= 0 && s < 360000 ? (long)(s + 0.5) : s >= 360000 ? 359999 : 0;

	if (v < 60)
		snprintf(buf, len, "%lds", v);
	else if (v < 3600)
		snprintf(buf, len, "%ldm", v / 60);
	else
		snprintf(buf, len, "%ldh%02ldm", v / 3600, (v % 3600) / 60);
	return buf;
}

/* The header's NO RUNNER badge (F3): the unfinished jobs
 * whose library (or server) is closed to writers and that nobody runs
 * (draining or finalizing, no session holds the runner lock), named by
 * the one closed longest: " 1 job NO RUNNER: library 11 closed 15m ",
 * " 3 jobs NO RUNNER: server 2 closed 1h05m, +2 "; then shorter, for a
 * narrow header: " NO RUNNER: lib 11 15m ", " NO RUNNER ". The whole
 * snapshot counts, whatever the jobs panel's filter. False when there is
 * none. */
static bool no_runner_badge(const console *c, char (*buf)[128])
{
	const cleanup_mon_snapshot *s = c->snap;
	const cleanup_mon_job *worst = NULL;
	size_t i;
	int n = 0;
	char age[32];

	for (i = 0; i < s->njobs; i++) {
		const cleanup_mon_job *v = &s->jobs[i];

		if (v->runner_pid > 0 || (strcmp(v->job.phase, "draining") != 0 && strcmp(v->job.phase, "finalizing") != 0))
			continue;
		n++;
		if (!worst || v->closed_s > worst->closed_s)
			worst = v;
	}
	if (!worst)
		return false;
	{
		bool server = strcmp(worst->job.kind, "remove-server") == 0;
		int64_t id = server ? worst->job.server_id : worst->job.library_id;
		char more[24] = "";

		if (n > 1)
			snprintf(more, sizeof more, ", +%d", n - 1);
		short_age(age, sizeof age, worst->closed_s);
		snprintf(buf[0], 128, " %d job%s NO RUNNER: %s %" PRId64 " closed %s%s ", n, n == 1 ? "" : "s",
		         server ? "server" : "library", id, age, more);
		snprintf(buf[1], 128, " NO RUNNER: %s %" PRId64 " %s%s ", server ? "srv" : "lib", id, age, n > 1 ? " +" : "");
		snprintf(buf[2], 128, " NO RUNNER ");
	}
	return true;
}

/* S drawn in W columns at (Y, X), cut from its start ("…" first) when
 * it is wider. */
static void put_tail(int y, int x, int w, theme_role role, const char *s)
{
	size_t n = strlen(s), i = 0;
	int width = console_width(s);

	if (width <= w) {
		console_put(y, x, w, role, s);
		return;
	}
	while (i < n && width > w - 1) {
		int cw;
		bool bad;

		i += next_char(s + i, n - i, &cw, &bad);
		width -= cw;
	}
	x += console_put(y, x, 1, role, MB_CUR_MAX > 1 ? "\xe2\x80\xa6" : "~");
	console_put(y, x, w - 1, role, s + i);
}

/* The header: the title, clock, refresh interval and query time, the
 * badges (NO RUNNER, PAUSED, READ-ONLY, RUNNING, stale since ...), where
 * the console is connected, and the command-line backend on the right.
 * At 80 columns the connection stays, whatever the
 * badges: the layout (layout.h, tui_header_layout) lets the query time,
 * the interval, the backend, the title, the clock and the less important
 * badges give way first, then shortens the badges, and cuts the
 * connection from its start last. */
static void draw_header(console *c, double now)
{
	static const theme_role role[HDR__COUNT] = {
		[HDR_NO_RUNNER] = ROLE_DANGER, [HDR_PAUSED] = ROLE_BADGE,   [HDR_READONLY] = ROLE_BADGE,
		[HDR_STANDBY] = ROLE_BADGE,    [HDR_POOLER] = ROLE_BADGE,   [HDR_RUNNING] = ROLE_BADGE,
		[HDR_THROTTLE] = ROLE_BADGE,   [HDR_STALE] = ROLE_STALE,    [HDR_LOADING] = ROLE_STALE,
	};
	const tui_rect *r = &c->layout.header;
	const cleanup_mon_snapshot *s = c->snap;
	static char t[HDR__COUNT][TUI_HDR_VARIANTS][400];
	int w[HDR__COUNT][TUI_HDR_VARIANTS], nvar[HDR__COUNT] = {0};
	tui_hdr_place at[HDR__COUNT];
	char clock[16], stale[64], where[300], version[40], alarm[3][128];
	double since;
	int i, k;
	cleanup_monitor_state st = cleanup_monitor_get_state(c->mon);

#define PART(id, v, ...) (snprintf(t[id][v], sizeof t[id][v], __VA_ARGS__), nvar[id] = (v) + 1)
	PART(HDR_TITLE, 0, "cleanupctl console");
	console_clock(clock, sizeof clock, now);
	PART(HDR_CLOCK, 0, "%s", clock);
	PART(HDR_REFRESH, 0, "refresh %gs", cleanup_monitor_interval(c->mon) / 1000.0);
	if (s->seq > 0)
		PART(HDR_DBMS, 0, "db %.1f ms", s->db_ms);
	if (no_runner_badge(c, alarm))
		for (k = 0; k < 3; k++)
			PART(HDR_NO_RUNNER, k, "%s", alarm[k]);
	if (c->paused)
		PART(HDR_PAUSED, 0, " PAUSED ");
	if (c->opts.readonly)
		PART(HDR_READONLY, 0, " READ-ONLY ");
	if (s->seq > 0 && s->standby) {
		/* A hot standby (F1): what it shows is what it replayed. */
		if (s->replay_lag_s >= 0)
			PART(HDR_STANDBY, 0, " standby, read-only, replay lag %.0f s ", s->replay_lag_s);
		else
			PART(HDR_STANDBY, 0, " standby, read-only ");
		PART(HDR_STANDBY, 1, " standby ");
	}
	if (s->seq > 0 && s->pooled)
		PART(HDR_POOLER, 0, " pooler: polling ");
	if (c->run_status[0] && c->run_status_action == ACT_RUN)
		PART(HDR_RUNNING, 0, " RUNNING ");
	if (actions_max_rate(c->act) > 0 && !c->opts.readonly)
		PART(HDR_THROTTLE, 0, " THROTTLE %g/s ", actions_max_rate(c->act));
	if (cleanup_monitor_stale(c->mon, &since)) {
		console_clock(stale, sizeof stale, since);
		if (cleanup_monitor_attempts(c->mon) > 1)
			PART(HDR_STALE, 0, " stale since %s: reconnecting, attempt %d ", stale, cleanup_monitor_attempts(c->mon));
		else
			PART(HDR_STALE, 0, " stale since %s: reconnecting ", stale);
		PART(HDR_STALE, 1, " stale since %s: reconnecting ", stale);
		PART(HDR_STALE, 2, " stale %s ", stale);
	} else if (s->stale_parts) {
		/* some refresh queries timed out: their panels show older rows */
		char parts[96] = "", tm[16];

		for (k = 0; k < CONSOLE_PARTS; k++)
			if (s->stale_parts & (1u << k))
				snprintf(parts + strlen(parts), sizeof parts - strlen(parts), "%s%s", parts[0] ? ", " : "",
				         console_part_name(k));
		console_clock(tm, sizeof tm, s->stale_parts_at);
		PART(HDR_STALE, 0, " stale %s since %s: database slow to answer ", parts, tm);
		PART(HDR_STALE, 1, " stale %s since %s ", parts, tm);
		PART(HDR_STALE, 2, " stale %s ", tm);
	} else if (s->seq == 0) {
		PART(HDR_LOADING, 0, " %s ",
		     st == CLEANUP_MON_READY        ? "loading..."
		     : st == CLEANUP_MON_CONNECTING ? "connecting..."
		                                    : "cannot connect, retrying");
	}
	/* Where: user@host:port/db and the server's version, as pg_activity
	 * shows them; two sandboxes on one port differ by
	 * their socket directory. Shorter: a long socket path keeps its last
	 * two components and "PG"; no version; no user; cut from its start
	 * (the end names the port and the database). The configured name
	 * until the first connection. */
	cleanup_monitor_server(c->mon, where, sizeof where, version, sizeof version);
	if (where[0]) {
		char *user_at;

		PART(HDR_WHERE, 0, "%s%s%s", where, version[0] ? "  PostgreSQL " : "", version);
		where_short(where, sizeof where);
		PART(HDR_WHERE, 1, "%s%s%s", where, version[0] ? "  PG " : "", version);
		PART(HDR_WHERE, 2, "%s", where);
		user_at = strchr(where, '@');
		PART(HDR_WHERE, 3, "%s", user_at ? user_at + 1 : where);
	} else {
		PART(HDR_WHERE, 0, "%s", c->opts.dbname ? c->opts.dbname : "-");
	}
	PART(HDR_CMDLINE, 0, "cmdline: %s", cmdline_backend());
#undef PART
	for (i = 0; i < HDR__COUNT; i++)
		for (k = 0; k < nvar[i]; k++)
			w[i][k] = console_width(t[i][k]);

	/* one column of margin on each side */
	tui_header_plan(at, w, nvar, r->w - 2);
	attrset(theme_attr(ROLE_HEADER));
	mvhline(r->y, r->x, ' ', r->w);
	for (i = 0; i < HDR__COUNT; i++) {
		theme_role ro = role[i] ? role[i] : ROLE_HEADER;

		if (at[i].var < 0)
			continue;
		if (i == HDR_WHERE)
			put_tail(r->y, r->x + 1 + at[i].x, at[i].w, ro, t[i][at[i].var]);
		else
			console_put(r->y, r->x + 1 + at[i].x, at[i].w, ro, t[i][at[i].var]);
	}
}

static int wrap(const char *text, int w, int y, int x, int maxlines, theme_role role);
static int wrap_skip(const char *text, int w, int skip, int y, int x, int maxlines, theme_role role);

static void draw_footer(console *c, double mono)
{
	const tui_rect *r = &c->layout.footer;
	int x = r->x;

	attrset(theme_attr(ROLE_NORMAL));
	mvhline(r->y, r->x, ' ', r->w);
	if (c->cmdline) {
		cmdline_render(stdscr, r->y, r->x, r->w, theme_attr(ROLE_PROMPT), theme_attr(ROLE_NORMAL));
		return;
	}
	if (c->filter_editing) {
		bool libs = c->filter_panel == PANEL_LIBRARIES, log = c->filter_panel == PANEL_LOG;

		x += console_putf(r->y, x, r->w, ROLE_PROMPT, "/%s", log ? c->log_filter : libs ? c->lib_filter : c->job_filter);
		console_put(r->y, x + 2, r->x + r->w - x - 2, ROLE_DIM,
		            log ? "search the log: words matched in time, kind, job and text; Enter keeps it, Esc clears it"
		            : libs ? "filter libraries: words matched in id, srv N, name, admission, count state, job; "
		                     "Enter keeps it, Esc clears it"
		                   : "filter jobs: words matched in id, kind, target, phase; Enter keeps it, Esc clears it");
		return;
	}
	/* A run's progress takes the footer as soon as it is newer than the
	 * message ("run job N..." hid it for 15 s); a warning
	 * keeps it for 3 s, a danger until replaced. */
	if (c->message[0] && (mono - c->message_at < 15.0 || c->message_role == ROLE_DANGER) &&
	    (!c->run_status[0] || c->message_at >= c->run_status_at || c->message_role == ROLE_DANGER ||
	     (c->message_role == ROLE_WARNING && mono - c->message_at < 3.0))) {
		/* A long message (an engine's explanation, a refusal saying how
		 * many rows are gone) takes the rows above, as many as it needs
		 * up to 5, so that it is read in full. */
		if (console_width(c->message) > r->w) {
			int n = wrap(c->message, r->w, -1, 0, 5, c->message_role), i;

			attrset(theme_attr(ROLE_NORMAL));
			for (i = 1; i < n; i++)
				mvhline(r->y - i, r->x, ' ', r->w);
			wrap(c->message, r->w, r->y - (n - 1), r->x, n, c->message_role);
		} else {
			console_put(r->y, r->x, r->w, c->message_role, c->message);
		}
		return;
	}
	if (c->run_status[0]) {
		console_put(r->y, r->x, r->w, ROLE_INFO, c->run_status);
		return;
	}
	{
		/* The keys, long labels when they all fit, else short ones (80
		 * columns, the documented minimum, shows every action key; issue
		 * 11, bug 8). */
		static const char *const hints[][3] = {
			{"q", "quit", "quit"},       {"?", "help", "help"},         {"Tab", "panel", "panel"},
			{"Enter", "open", "open"},   {"p", "pause", "freeze"},      {":", "command", "cmd"},
			{"s", "step", "step"},       {"r", "run", "run"},           {"t", "stop run", "stop"},
			{"P", "pause/resume job", "pause"}, {"x", "cancel", "cancel"}, {"S", "seal", "seal"},
			{"v", "preview", "preview"}, {"D", "remove", "remove"},
		};
		size_t i, n = sizeof hints / sizeof hints[0], first_action = 6;
		int need = 0, label;

		for (i = 0; i < n; i++)
			if (!c->opts.readonly || i < first_action)
				need += console_width(hints[i][0]) + console_width(hints[i][1]) + 3;
		label = need <= r->w ? 1 : 2;
		for (i = 0; i < n; i++) {
			if (c->opts.readonly && i >= first_action)
				break;
			if (label == 2 && i >= 2 && i < first_action) /* Tab, Enter, p, ':': in the help */
				continue;
			if (x + console_width(hints[i][0]) + console_width(hints[i][label]) + 2 > r->x + r->w)
				break;
			x += console_put(r->y, x, r->w - x, ROLE_KEY, hints[i][0]);
			x += 1;
			x += console_put(r->y, x, r->w - x, ROLE_DIM, hints[i][label]);
			x += label == 1 ? 2 : 1;
		}
	}
}

/* Wraps TEXT into lines of at most W columns (breaking at spaces), skips
 * the first SKIP of them and draws at most MAXLINES from row Y (Y < 0:
 * draws nothing). Returns the number of lines drawn (or, with Y < 0,
 * counted). */
static int wrap_skip(const char *text, int w, int skip, int y, int x, int maxlines, theme_role role)
{
	char buf[1200];
	int n = 0, k = 0;
	const char *p = text;

	while (*p && n < maxlines) {
		size_t len = strlen(p), cut = len, i, last_space = 0;
		int cols = 0;

		for (i = 0; i < len;) {
			int cw;
			bool bad;
			size_t l = next_char(p + i, len - i, &cw, &bad);

			if (cols + cw > w) {
				cut = last_space ? last_space : i;
				break;
			}
			if (p[i] == ' ')
				last_space = i;
			cols += cw;
			i += l;
		}
		if (cut == 0)
			cut = len < 1 ? len : 1;
		if (cut > sizeof buf - 1)
			cut = sizeof buf - 1;
		if (k++ >= skip) {
			memcpy(buf, p, cut);
			buf[cut] = '\0';
			if (y >= 0)
				console_put(y + n, x, w, role, buf);
			n++;
		}
		p += cut;
		while (*p == ' ')
			p++;
	}
	return n;
}

static int wrap(const char *text, int w, int y, int x, int maxlines, theme_role role)
{
	return wrap_skip(text, w, 0, y, x, maxlines, role);
}

static void clear_rect(int y, int x, int h, int w)
{
	int i;

	attrset(theme_attr(ROLE_NORMAL));
	for (i = 0; i < h; i++)
		mvhline(y + i, x, ' ', w);
}

/* A dialog box in the middle of the screen: TITLE, QUESTION wrapped (in
 * ROLE), then either the typed text on a prompt row (TYPED non-NULL) or
 * the y/N keys. The confirmations and the quit question share it. */
static void draw_dialog(console *c, const char *title, const char *question, theme_role role, const char *typed)
{
	int w = c->layout.cols - 8 < 78 ? c->layout.cols - 8 : 78;
	int maxl = c->layout.rows - 8 > 3 ? c->layout.rows - 8 : 3;
	int lines = wrap(question, w - 4, -1, 0, maxl > 16 ? 16 : maxl, ROLE_NORMAL);
	int h = lines + (typed ? 6 : 4);
	int y = (c->layout.rows - h) / 2, x = (c->layout.cols - w) / 2;
	tui_rect r = {y, x, h, w};

	if (y < 0)
		y = r.y = 0;
	clear_rect(y, x, h, w);
	console_box(r, title, true);
	wrap(question, w - 4, y + 1, x + 2, lines, role);
	if (typed) {
		int cx;

		console_put(y + lines + 2, x + 2, w - 4, ROLE_PROMPT, "> ");
		cx = x + 4 + console_put(y + lines + 2, x + 4, w - 6, ROLE_NORMAL, typed);
		console_put(y + lines + 4, x + 2, w - 4, ROLE_DIM, "Enter confirms, Esc cancels; anything else does nothing");
		move(y + lines + 2, cx);
	} else {
		console_put(y + lines + 2, x + 2, w - 4, ROLE_DIM, "y: yes   n / Enter / Esc: no");
	}
}

/* A log line shown whole (Enter in the log): TITLE, TEXT wrapped over as
 * many rows as the screen has, and how to close it. */
static void draw_note_box(console *c, const char *title, const char *text)
{
	int w = c->layout.cols - 4 < 100 ? c->layout.cols - 4 : 100;
	int maxl = c->layout.rows - 6 > 1 ? c->layout.rows - 6 : 1;
	int lines = wrap(text, w - 4, -1, 0, maxl, ROLE_NORMAL);
	int h = lines + 4;
	int y = (c->layout.rows - h) / 2, x = (c->layout.cols - w) / 2;
	tui_rect r = {y < 0 ? 0 : y, x, h, w};

	clear_rect(r.y, x, h, w);
	console_box(r, title, true);
	wrap(text, w - 4, r.y + 1, x + 2, lines, ROLE_NORMAL);
	console_put(r.y + lines + 2, x + 2, w - 4, ROLE_DIM, "any key closes");
}

static void draw_confirm(console *c)
{
	const confirm_state *cf = &c->confirm;
	char title[96];

	snprintf(title, sizeof title, "confirm: %s", tui_action_name(cf->target.action));
	draw_dialog(c, title, cf->question, cf->kind == CONFIRM_TYPED ? ROLE_WARNING : ROLE_NORMAL,
	            cf->kind == CONFIRM_TYPED ? cf->typed : NULL);
}

/* The help overlay: one row per key, then the commands; it scrolls
 * (j/k, arrows, PgUp/PgDn, Home/End) when the terminal is too short for it
 * (at 80x24 it lost t/P/x/S/v/D). */
static void draw_help(console *c)
{
	const key_help *t;
	size_t n, i;
	int w = c->layout.cols - 8 < 86 ? c->layout.cols - 8 : 86;
	int h = c->layout.rows - 4, y = 2, x = (c->layout.cols - w) / 2, row, visible = h - 2, total = 0, shown = 0;
	const char *cmds = c->opts.readonly
	                       ? "commands: show N, theme NAME, refresh SECONDS, help, quit (read-only: no actions)"
	                       : "commands: step N, run N, stop, pause N, resume N, cancel N, seal N COUNT, preview N, "
	                         "remove-library ID, remove-server ID, kill-runner N, show N, theme NAME, refresh SECONDS, "
	                         "throttle STEPS_PER_SECOND, wait SECONDS, help, quit";
	int cmd_lines = wrap(cmds, w - 4, -1, 0, 8, ROLE_DIM);
	const key_help *rowsv[64];
	char title[96];
	tui_rect r = {y, x, h, w};

	t = keys_help_table(&n);
	for (i = 0; i < n && total < 64; i++)
		if (!(c->opts.readonly && keys_is_action(t[i].cmd)))
			rowsv[total++] = &t[i];
	/* rows: the keys, a blank row, the commands */
	if (c->help_top > total + 1 + cmd_lines - visible)
		c->help_top = total + 1 + cmd_lines - visible;
	if (c->help_top < 0)
		c->help_top = 0;
	clear_rect(y, x, h, w);
	if (total + 1 + cmd_lines > visible)
		snprintf(title, sizeof title, "keys %d-%d/%d (j/k PgUp/PgDn scroll; other keys close)", c->help_top + 1,
		         c->help_top + visible < total + 1 + cmd_lines ? c->help_top + visible : total + 1 + cmd_lines,
		         total + 1 + cmd_lines);
	else
		snprintf(title, sizeof title, "keys (any key closes)");
	console_box(r, title, true);
	row = y + 1;
	for (i = (size_t)c->help_top; (int)i < total && shown < visible; i++, shown++) {
		console_put(row, x + 2, 14, ROLE_KEY, rowsv[i]->keys);
		console_put(row, x + 17, w - 19, ROLE_NORMAL, rowsv[i]->what);
		row++;
	}
	if (shown < visible && c->help_top <= total) {
		row++; /* the blank row */
		shown++;
	}
	if (shown < visible) {
		int skip = c->help_top > total + 1 ? c->help_top - total - 1 : 0;

		wrap_skip(cmds, w - 4, skip, row, x + 2, visible - shown, ROLE_DIM);
	}
}

/* Adds A_DIM to every cell of R, keeping each cell's character, other
 * attributes and colour: a stale panel reads as older (and says ~stale
 * in its title, for terminals without dim). */
static void dim_rect(tui_rect r)
{
	int y, x;

	for (y = r.y; y < r.y + r.h; y++)
		for (x = r.x; x < r.x + r.w; x++) {
			cchar_t cc;
			wchar_t wch[CCHARW_MAX + 1];
			attr_t a = 0;
			short pair = 0;

			if (mvin_wch(y, x, &cc) == ERR || getcchar(&cc, wch, &a, &pair, NULL) == ERR)
				continue;
			mvchgat(y, x, 1, a | A_DIM, pair, NULL);
		}
}

/* Adds a list's view to its TITLE: " /FILTER" (with "_" while it is
 * being typed), then " by SORT" (NULL: the default order). */
static void title_view(char *title, size_t len, const char *filter, bool editing, const char *sort)
{
	size_t l = strlen(title);

	if (filter[0] || editing)
		snprintf(title + l, len - l, " /%.40s%s", filter, editing ? "_" : "");
	l = strlen(title);
	if (sort)
		snprintf(title + l, len - l, " by %s", sort);
}

void console_draw(console *c, double now)
{
	double mono = cleanup_monitor_now(), since;
	unsigned stale = tui_stale_panels(c->snap->stale_parts, cleanup_monitor_stale(c->mon, &since),
	                                  c->snap->locks_valid && c->snap->locks_error[0]);
	int i;

	erase();
	if (c->layout.too_small) {
		char buf[160];

		snprintf(buf, sizeof buf, "terminal too small: %dx%d, the console needs at least %dx%d", c->layout.cols,
		         c->layout.rows, TUI_MIN_COLS, TUI_MIN_ROWS);
		if (c->layout.rows > 0)
			wrap(buf, c->layout.cols > 2 ? c->layout.cols - 1 : 1, c->layout.rows / 2 > 0 ? c->layout.rows / 2 - 1 : 0,
			     0, c->layout.rows, ROLE_WARNING);
		curs_set(0);
		refresh();
		return;
	}
	draw_header(c, now);
	for (i = 0; i < PANEL__COUNT; i++) {
		tui_rect r = c->layout.panels[i], in;
		char title[128];

		if (!tui_layout_visible(&c->layout, (tui_panel_id)i))
			continue;
		snprintf(title, sizeof title, "%s", tui_panel_name((tui_panel_id)i));
		if (i == PANEL_DETAIL && c->sel_job_id > 0)
			snprintf(title, sizeof title, "job %" PRId64 " detail", c->sel_job_id);
		if (i == PANEL_JOBS)
			title_view(title, sizeof title, c->job_filter, c->filter_editing && c->filter_panel == PANEL_JOBS,
			           c->job_sort != JOB_SORT_UNFINISHED ? tui_job_sort_name(c->job_sort) : NULL);
		if (i == PANEL_LIBRARIES)
			title_view(title, sizeof title, c->lib_filter, c->filter_editing && c->filter_panel == PANEL_LIBRARIES,
			           c->lib_sort != LIB_SORT_SERVER ? tui_lib_sort_name(c->lib_sort) : NULL);
		if (i == PANEL_LOG) {
			size_t l = strlen(title);

			if (c->log_kind != LOG_KIND_ALL)
				snprintf(title + l, sizeof title - l, " %s only", console_log_kind_name(c->log_kind));
			title_view(title, sizeof title, c->log_filter, c->filter_editing && c->filter_panel == PANEL_LOG, NULL);
		}
		{
			/* where the selection is: 10/12, in
			 * every list */
			int n = classes[i]->rows(c);
			size_t l = strlen(title);
			int at = c->sel[i] + 1;

			if (n > 0)
				snprintf(title + l, sizeof title - l, " %d/%d", at > n ? n : at, n);
		}
		if (stale & (1u << i)) {
			/* older rows: a part whose refresh query timed out, the lock
			 * query's last tree, or everything while reconnecting */
			size_t l = strlen(title);

			snprintf(title + l, sizeof title - l, " ~stale");
		}
		console_box(r, title, c->focus == (tui_panel_id)i);
		in.y = r.y + 1;
		in.x = r.x + 1;
		in.h = r.h - 2;
		in.w = r.w - 2;
		if (in.h > 0 && in.w > 0) {
			classes[i]->draw(c, in, c->focus == (tui_panel_id)i);
			if (stale & (1u << i))
				dim_rect(in);
		}
	}
	draw_footer(c, mono);
	curs_set(0);
	if (c->help)
		draw_help(c);
	if (c->log_open) {
		draw_note_box(c, c->log_open_title, c->log_open_text);
	} else if (c->quit_ask) {
		draw_dialog(c, "confirm: quit during a run", c->quit_question, ROLE_WARNING, NULL);
	} else if (c->stale_ask) {
		draw_dialog(c, "stale data: act anyway?", c->stale_question, ROLE_WARNING, NULL);
	} else if (c->confirm.active) {
		draw_confirm(c);
		if (c->confirm.kind == CONFIRM_TYPED)
			curs_set(1);
	} else if (c->cmdline) {
		const char *m = cmdline_message();

		if (m && *m) {
			attrset(theme_attr(ROLE_NORMAL));
			mvhline(c->layout.footer.y - 1, 0, ' ', c->layout.cols);
			console_put(c->layout.footer.y - 1, 0, c->layout.cols, ROLE_DIM, m);
		}
		cmdline_render(stdscr, c->layout.footer.y, c->layout.footer.x, c->layout.footer.w, theme_attr(ROLE_PROMPT),
		               theme_attr(ROLE_NORMAL));
		curs_set(1);
	}
	refresh();
}
