/* The event and audit log: engine events (created, sealed, busy, ...) and
 * operator actions from cleanup.audit, newest first, merged with the
 * console's own notes (what could not be recorded in the database).
 *
 * The log is a tool in an incident: `/` searches it
 * (every word, ignoring case, in the time, kind, job and text), `f` shows
 * one kind only, consecutive busy retries of one job collapse into one
 * line ("busy x37 since 02:14:05, held by pid 4411 ..."), and Enter opens
 * the selected line whole. The monitor loads lifecycle events, audit rows
 * and busy retries apart, so busy retries never push the others out. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "console_int.h"
#include "jobview.h"

#define LOG_MAX 1024

typedef struct log_line {
	double at;
	const cleanup_mon_event *ev;   /* the newest event of the line */
	const console_note *note;
	int count;                     /* busy retries collapsed into it (1: one line) */
	char since[16];                /* HH:MM:SS of the oldest of them */
} log_line;

const char *console_log_kind_name(console_log_kind k)
{
	static const char *const names[LOG_KIND__COUNT] = {"all", "lifecycle", "audit", "busy", "console"};

	return k >= 0 && k < LOG_KIND__COUNT ? names[k] : "?";
}

static bool is_busy(const cleanup_mon_event *e)
{
	return e && !e->audit && strcmp(e->kind, "busy") == 0;
}

static bool kind_matches(console_log_kind k, const log_line *l)
{
	switch (k) {
	case LOG_KIND_LIFECYCLE:
		return l->ev && !l->ev->audit && !is_busy(l->ev);
	case LOG_KIND_AUDIT:
		return l->ev && l->ev->audit;
	case LOG_KIND_BUSY:
		return is_busy(l->ev);
	case LOG_KIND_CONSOLE:
		return l->note != NULL;
	default:
		return true;
	}
}

/* The line's searchable text: time, kind, "job N", message. */
static void line_text(char *buf, size_t len, const log_line *l)
{
	char hh[16];

	if (l->note) {
		console_clock(hh, sizeof hh, l->note->at);
		snprintf(buf, len, "%s console %s", hh, l->note->text);
	} else {
		char job[40] = "";

		if (l->ev->job_id > 0)
			snprintf(job, sizeof job, "job %" PRId64 " ", l->ev->job_id);
		snprintf(buf, len, "%s %s %s%s %s", l->ev->at, l->ev->audit ? "audit" : l->ev->kind, job, l->ev->source,
		         l->ev->message);
	}
}

/* The log's rows into LINES (room for MAX), newest first: events and notes
 * merged, the kind filter and the search applied, consecutive busy
 * retries of one job collapsed. Returns their number. */
static int collect(const console *c, log_line *lines, int max)
{
	const cleanup_mon_snapshot *s = c->snap;
	int n = 0, ni = 0, ei = 0;

	while (n < max && (ei < (int)s->nevents || ni < c->nnotes)) {
		const console_note *note = NULL;
		log_line l;
		char text[1200];

		memset(&l, 0, sizeof l);
		l.count = 1;
		if (ni < c->nnotes)
			note = &c->notes[(c->note_head - 1 - ni + CONSOLE_NOTES) % CONSOLE_NOTES];
		if (note && (ei >= (int)s->nevents || note->at >= s->events[ei].at_epoch)) {
			l.at = note->at;
			l.note = note;
			ni++;
		} else {
			l.at = s->events[ei].at_epoch;
			l.ev = &s->events[ei];
			snprintf(l.since, sizeof l.since, "%s", l.ev->at);
			ei++;
		}
		if (!kind_matches(c->log_kind, &l))
			continue;
		if (c->log_filter[0]) {
			line_text(text, sizeof text, &l);
			if (!tui_words_in(text, c->log_filter))
				continue;
		}
		if (n > 0 && is_busy(l.ev) && is_busy(lines[n - 1].ev) && lines[n - 1].ev->job_id == l.ev->job_id) {
			/* older than the line above: it extends the run backwards */
			lines[n - 1].count++;
			snprintf(lines[n - 1].since, sizeof lines[n - 1].since, "%s", l.ev->at);
			continue;
		}
		lines[n++] = l;
	}
	return n;
}

static int rows(const console *c)
{
	static log_line lines[LOG_MAX];

	return collect(c, lines, LOG_MAX);
}

/* "held by pid 4411 (role ...) holds ..." of a busy message, or the
 * message itself when it names no holder. */
static const char *holder_part(const char *msg)
{
	const char *h = strstr(msg, "held by ");

	return h ? h : msg;
}

/* Row K of the log: the lines collected by draw (CTX). */
static void row(console *c, int k, int y, tui_rect r, bool sel, void *ctx)
{
	const log_line *l = &((const log_line *)ctx)[k];
	int x;

	(void)c;
	if (l->note) {
		char hh[16];

		console_clock(hh, sizeof hh, l->note->at);
		x = r.x + console_putf(y, r.x, r.w, console_row_role(sel, ROLE_DIM), "%s %-9s ", hh, "console");
		console_put(y, x, r.x + r.w - x, console_row_role(sel, l->note->role), l->note->text);
	} else {
		const cleanup_mon_event *e = l->ev;
		theme_role role = ROLE_NORMAL;
		char job[40] = "";

		if (e->job_id > 0)
			snprintf(job, sizeof job, "job %" PRId64 " ", e->job_id);
		if (e->audit)
			role = strstr(e->message, "refused") || strstr(e->message, "not confirmed") ? ROLE_WARNING : ROLE_INFO;
		else if (is_busy(e))
			role = ROLE_WARNING;
		x = r.x + console_putf(y, r.x, r.w, console_row_role(sel, ROLE_DIM), "%s %-9s ", e->at,
		                       e->audit ? "audit" : e->kind);
		if (l->count > 1)
			console_putf(y, x, r.x + r.w - x, console_row_role(sel, role), "%sbusy x%d since %s, %s", job, l->count,
			             l->since, holder_part(e->message));
		else
			console_putf(y, x, r.x + r.w - x, console_row_role(sel, role), "%s%s", e->audit ? "" : job, e->message);
	}
}

static void draw(console *c, tui_rect r, bool focused)
{
	static log_line lines[LOG_MAX];
	int n = collect(c, lines, LOG_MAX);

	if (n == 0 && (c->log_filter[0] || c->log_kind != LOG_KIND_ALL))
		console_putf(r.y, r.x, r.w, ROLE_DIM, "(no %s%sline matches \"%s\": / edits the search, f the kind)",
		             c->log_kind != LOG_KIND_ALL ? console_log_kind_name(c->log_kind) : "",
		             c->log_kind != LOG_KIND_ALL ? " " : "", c->log_filter);
	else if (n == 0)
		console_put(r.y, r.x, r.w, ROLE_DIM, "(nothing yet: events and operator actions appear here)");
	console_list(c, PANEL_LOG, r, n, focused ? c->sel[PANEL_LOG] : -1, row, lines);
}

/* Enter: the selected line whole, in a box (console_draw.c); any key
 * closes it. */
static void open_row(console *c)
{
	static log_line lines[LOG_MAX];
	int n = collect(c, lines, LOG_MAX);
	const log_line *l;

	if (c->sel[PANEL_LOG] < 0 || c->sel[PANEL_LOG] >= n)
		return;
	l = &lines[c->sel[PANEL_LOG]];
	if (l->note) {
		char hh[16];

		console_clock(hh, sizeof hh, l->note->at);
		snprintf(c->log_open_title, sizeof c->log_open_title, "log: %s console", hh);
		snprintf(c->log_open_text, sizeof c->log_open_text, "%s", l->note->text);
	} else if (l->count > 1) {
		snprintf(c->log_open_title, sizeof c->log_open_title, "log: %s busy x%d", l->ev->at, l->count);
		snprintf(c->log_open_text, sizeof c->log_open_text,
		         "%d busy retries of job %" PRId64 " from %s to %s (by %s). The newest: %s", l->count, l->ev->job_id,
		         l->since, l->ev->at, l->ev->source[0] ? l->ev->source : "?", l->ev->message);
	} else {
		const cleanup_mon_event *e = l->ev;
		char job[40] = "";

		if (e->job_id > 0)
			snprintf(job, sizeof job, "job %" PRId64 ", ", e->job_id);
		snprintf(c->log_open_title, sizeof c->log_open_title, "log: %s %s", e->at, e->audit ? "audit" : e->kind);
		snprintf(c->log_open_text, sizeof c->log_open_text, "%s (%sfrom %s) %s", e->audit ? "audit" : e->kind, job,
		         e->source[0] ? e->source : "?", e->message);
	}
	c->log_open = true;
}

const tui_panel_class panel_log = {PANEL_LOG, rows, draw, open_row, NULL};
