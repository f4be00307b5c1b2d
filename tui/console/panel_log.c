/* The event and audit log: engine events (created, sealed, busy, ...) and
 * operator actions from cleanup.audit, newest first, merged with the
 * console's own notes (what could not be recorded in the database). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "console.h"

typedef struct log_line {
	double at;
	const cleanup_mon_event *ev;
	const console_note *note;
} log_line;

/* Merges events (newest first) and notes (a ring) into LINES, newest first. */
static int collect(const console *c, log_line *lines, int max)
{
	const cleanup_mon_snapshot *s = c->snap;
	int n = 0, ni = 0, ei = 0;

	while (n < max && (ei < (int)s->nevents || ni < c->nnotes)) {
		const console_note *note = NULL;

		if (ni < c->nnotes)
			note = &c->notes[(c->note_head - 1 - ni + CONSOLE_NOTES) % CONSOLE_NOTES];
		if (note && (ei >= (int)s->nevents || note->at >= s->events[ei].at_epoch)) {
			lines[n].at = note->at;
			lines[n].note = note;
			lines[n].ev = NULL;
			ni++;
		} else {
			lines[n].at = s->events[ei].at_epoch;
			lines[n].ev = &s->events[ei];
			lines[n].note = NULL;
			ei++;
		}
		n++;
	}
	return n;
}

static int rows(const console *c)
{
	return (int)c->snap->nevents + c->nnotes;
}

static void draw(console *c, tui_rect r, bool focused)
{
	log_line lines[256];
	int n = collect(c, lines, 256), i;

	console_scroll(c, PANEL_LOG, n, r.h);
	if (n == 0)
		console_put(r.y, r.x, r.w, ROLE_DIM, "(nothing yet: events and operator actions appear here)");
	for (i = 0; i < r.h && c->top[PANEL_LOG] + i < n; i++) {
		const log_line *l = &lines[c->top[PANEL_LOG] + i];
		bool sel = focused && c->top[PANEL_LOG] + i == c->sel[PANEL_LOG];
		int y = r.y + i, x;

		if (sel) {
			attrset(theme_attr(ROLE_SELECTION));
			mvhline(y, r.x, ' ', r.w);
		}
		if (l->note) {
			char hh[16];
			time_t t = (time_t)l->note->at;
			struct tm tm;

			localtime_r(&t, &tm);
			strftime(hh, sizeof hh, "%H:%M:%S", &tm);
			x = r.x + console_putf(y, r.x, r.w, sel ? ROLE_SELECTION : ROLE_DIM, "%s %-9s ", hh, "console");
			console_put(y, x, r.x + r.w - x, sel ? ROLE_SELECTION : l->note->role, l->note->text);
		} else {
			const cleanup_mon_event *e = l->ev;
			theme_role role = ROLE_NORMAL;
			char job[40] = "";

			if (e->job_id > 0)
				snprintf(job, sizeof job, "job %" PRId64 " ", e->job_id);
			if (e->audit)
				role = strstr(e->message, "refused") || strstr(e->message, "not confirmed") ? ROLE_WARNING : ROLE_INFO;
			else if (strcmp(e->kind, "busy") == 0)
				role = ROLE_WARNING;
			x = r.x + console_putf(y, r.x, r.w, sel ? ROLE_SELECTION : ROLE_DIM, "%s %-9s ", e->at,
			                       e->audit ? "audit" : e->kind);
			console_putf(y, x, r.x + r.w - x, sel ? ROLE_SELECTION : role, "%s%s", e->audit ? "" : job, e->message);
		}
	}
}

static void open_row(console *c)
{
	(void)c;
}

const tui_panel_class panel_log = {PANEL_LOG, rows, draw, open_row};
