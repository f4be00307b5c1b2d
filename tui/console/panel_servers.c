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

/* The columns' layout (draw's choice) for row(). */
typedef struct servers_lay {
	int nw;
	bool libs;
} servers_lay;

static void row(console *c, int k, int y, tui_rect r, bool sel, void *ctx)
{
	const servers_lay *lay = ctx;
	const cleanup_mon_server *v = &c->snap->servers[k];
	theme_role base = console_row_role(sel, ROLE_NORMAL);
	char cell[CLEANUP_NAME_SIZE], items[32];
	int x;

	/* By display width, at a character boundary (sanitize.h). */
	x = r.x + console_putf(y, r.x, r.w, base, "%4" PRId64 " %s ", v->row.id,
	                       tui_sanitize_cell(cell, sizeof cell, v->row.name, (size_t)lay->nw));
	x += console_putf(y, x, r.x + r.w - x, sel ? base : v->row.admission[0] == 'o' ? ROLE_OK : ROLE_WARNING, "%-9s ",
	                  v->row.admission);
	if (lay->libs)
		x += console_putf(y, x, r.x + r.w - x, base, "%4d ", v->row.library_count);
	x += console_putf(y, x, r.x + r.w - x, base, "%7s  ", console_compact(items, sizeof items, v->row.item_count));
	if (v->row.job_id > 0) {
		x += console_putf(y, x, r.x + r.w - x, base, "%" PRId64 " ", v->row.job_id);
		console_put(y, x, r.x + r.w - x, sel ? base : console_phase_role(v->job_phase), v->job_phase);
	} else {
		console_put(y, x, r.x + r.w - x, sel ? base : ROLE_DIM, "-");
	}
}

static void draw(console *c, tui_rect r, bool focused)
{
	const cleanup_mon_snapshot *s = c->snap;
	bool libs = r.w >= 50; /* the library count goes first when narrow */
	int n = rows(c), nw = r.w - (libs ? 43 : 38);
	servers_lay lay;

	if (nw < 8)
		nw = 8;
	if (nw > 24)
		nw = 24;
	console_putf(r.y, r.x, r.w, ROLE_DIM, "%4s %-*.*s %-9s %s%7s  %s", "ID", nw, nw, "NAME", "ADMISSION",
	             libs ? "LIBS " : "", "ITEMS", "JOB");
	if (n == 0)
		console_put(r.y + 1, r.x, r.w, ROLE_DIM, s->seq ? "(no servers: cleanupctl seed creates demo data)" : "");
	lay.nw = nw;
	lay.libs = libs;
	r.y++;
	r.h--;
	console_list(c, PANEL_SERVERS, r, n, focused ? c->sel[PANEL_SERVERS] : -1, row, &lay);
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

/* The servers' own key: D removes the selected one (creates a
 * remove-server job, after its dialog). */
static bool key(console *c, tui_cmd cmd)
{
	confirm_target t;

	if (cmd != CMD_REMOVE || c->snap->nservers == 0)
		return false;
	if (console_fill_remove_target(c, ACT_REMOVE_SERVER, c->snap->servers[c->sel[PANEL_SERVERS]].row.id, &t))
		console_request_action(c, &t);
	return true;
}

const tui_panel_class panel_servers = {PANEL_SERVERS, rows, draw, open_row, key};
