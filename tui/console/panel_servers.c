/* The servers panel: each media server with its admission state, library
 * and item counts (from cleanup.library_stats) and its active job. */
#include <inttypes.h>
#include <stdio.h>
#include "console_int.h"
#include "sanitize.h"

static int rows(const console *c)
{
	return (int)c->snap->nservers;
}

static void draw(console *c, tui_rect r, bool focused)
{
	const cleanup_mon_snapshot *s = c->snap;
	bool libs = r.w >= 50; /* the library count goes first when narrow */
	int n = rows(c), i, nw = r.w - (libs ? 43 : 38);
	char items[32];

	if (nw < 8)
		nw = 8;
	if (nw > 24)
		nw = 24;
	console_putf(r.y, r.x, r.w, ROLE_DIM, "%4s %-*.*s %-9s %s%7s  %s", "ID", nw, nw, "NAME", "ADMISSION",
	             libs ? "LIBS " : "", "ITEMS", "JOB");
	console_scroll(c, PANEL_SERVERS, n, r.h - 1);
	if (n == 0)
		console_put(r.y + 1, r.x, r.w, ROLE_DIM, s->seq ? "(no servers: cleanupctl seed creates demo data)" : "");
	for (i = 0; i < r.h - 1 && c->top[PANEL_SERVERS] + i < n; i++) {
		int k = c->top[PANEL_SERVERS] + i, y = r.y + 1 + i, x;
		const cleanup_mon_server *v = &s->servers[k];
		bool sel = focused && k == c->sel[PANEL_SERVERS];
		theme_role base = sel ? ROLE_SELECTION : ROLE_NORMAL;
		char cell[CLEANUP_NAME_SIZE];

		if (sel) {
			attrset(theme_attr(ROLE_SELECTION));
			mvhline(y, r.x, ' ', r.w);
		}
		/* By display width, at a character boundary (sanitize.h). */
		x = r.x + console_putf(y, r.x, r.w, base, "%4" PRId64 " %s ", v->row.id,
		                       tui_sanitize_cell(cell, sizeof cell, v->row.name, (size_t)nw));
		x += console_putf(y, x, r.x + r.w - x, sel ? base : v->row.admission[0] == 'o' ? ROLE_OK : ROLE_WARNING,
		                  "%-9s ", v->row.admission);
		if (libs)
			x += console_putf(y, x, r.x + r.w - x, base, "%4d ", v->row.library_count);
		x += console_putf(y, x, r.x + r.w - x, base, "%7s  ", console_compact(items, sizeof items, v->row.item_count));
		if (v->row.job_id > 0) {
			x += console_putf(y, x, r.x + r.w - x, base, "%" PRId64 " ", v->row.job_id);
			console_put(y, x, r.x + r.w - x, sel ? base : console_phase_role(v->job_phase), v->job_phase);
		} else {
			console_put(y, x, r.x + r.w - x, sel ? base : ROLE_DIM, "-");
		}
	}
}

/* Enter: select the server's active job. */
static void open_row(console *c)
{
	int k = c->sel[PANEL_SERVERS];

	if (k < 0 || k >= rows(c))
		return;
	if (c->snap->servers[k].row.job_id > 0) {
		console_select_job(c, c->snap->servers[k].row.job_id);
		c->focus = PANEL_JOBS;
	} else {
		console_message(c, ROLE_INFO, "server %" PRId64 " has no active job", c->snap->servers[k].row.id);
	}
}

const tui_panel_class panel_servers = {PANEL_SERVERS, rows, draw, open_row};
