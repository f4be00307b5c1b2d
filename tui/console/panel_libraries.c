/* The libraries panel: each library with its server, admission state, item
 * count with the count's state (never a COUNT(*)) and active job, after the
 * operator's filter (`/`) and sort (`o`) (jobview.h). A watched library's
 * count comes from the count cache (seed 002) and says whether it is fresh,
 * stale (changed since it was published: "~"), expired, building, waiting
 * for a restart or withheld (capacity, busy); an unwatched one shows the
 * statement-trigger counter cleanup.library_stats ("counter"). The
 * selected library's reason is on the panel's last row (seed 002). */
#include <inttypes.h>
#include <stdio.h>
#include "console_int.h"
#include "sanitize.h"

static theme_role count_role(tui_count_kind k)
{
	switch (k) {
	case COUNT_FRESH:
		return ROLE_OK;
	case COUNT_STALE:
	case COUNT_EXPIRED:
	case COUNT_WITHHELD:
		return ROLE_WARNING;
	case COUNT_RESTART:
		return ROLE_DANGER;
	default:
		return ROLE_DIM;
	}
}

static int rows(const console *c)
{
	return c->nlibs_view;
}

/* Row K of the list; CTX: the name column's width. */
static void row(console *c, int k, int y, tui_rect r, bool sel, void *ctx)
{
	int nw = *(const int *)ctx, x;
	const cleanup_mon_library *v = console_view_library(c, k);
	theme_role base = console_row_role(sel, ROLE_NORMAL);
	tui_count_kind ck = tui_count_kind_of(v->count_state, v->count_reason);
	char cell[CLEANUP_NAME_SIZE], shown[40], state[48];

	/* By display width, at a character boundary (sanitize.h). */
	x = r.x + console_putf(y, r.x, r.w, base, "%4" PRId64 " %5" PRId64 " %s ", v->row.server_id, v->row.id,
	                       tui_sanitize_cell(cell, sizeof cell, v->row.name, (size_t)nw));
	x += console_putf(y, x, r.x + r.w - x, sel ? base : v->row.admission[0] == 'o' ? ROLE_OK : ROLE_WARNING, "%-9s ",
	                  v->row.admission);
	tui_count_items_text(shown, sizeof shown, v, console_compact);
	x += console_putf(y, x, r.x + r.w - x, base, "%7s ", shown);
	x += console_putf(y, x, r.x + r.w - x, sel ? base : count_role(ck), "%-17.17s ",
	                  tui_count_state_text(state, sizeof state, v));
	if (v->row.job_id > 0) {
		/* the job's kind goes first when narrow; its phase stays */
		x += console_putf(y, x, r.x + r.w - x, base, "%" PRId64 " %s%s", v->row.job_id, r.w >= 74 ? v->job_kind : "",
		                  r.w >= 74 ? " " : "");
		console_put(y, x, r.x + r.w - x, sel ? base : console_phase_role(v->job_phase), v->job_phase);
	} else {
		console_put(y, x, r.x + r.w - x, sel ? base : ROLE_DIM, "-");
	}
}

static void draw(console *c, tui_rect r, bool focused)
{
	const cleanup_mon_snapshot *s = c->snap;
	const cleanup_mon_library *selv = console_view_library(c, c->sel[PANEL_LIBRARIES]);
	int n = rows(c), nw = r.w - 68, list_h = r.h - 1;
	tui_rect list;
	/* The selected library's count reason takes the last row when it has
	 * one and the panel has room. */
	bool reason = selv && selv->count_reason[0] && r.h >= 4 &&
	              tui_count_kind_of(selv->count_state, selv->count_reason) != COUNT_COUNTER;

	if (reason)
		list_h--;
	if (nw < 8)
		nw = 8;
	if (nw > 30)
		nw = 30;
	console_putf(r.y, r.x, r.w, ROLE_DIM, "%4s %5s %-*.*s %-9s %7s %-17s %s", "SRV", "ID", nw, nw, "NAME", "ADMISSION",
	             "ITEMS", "COUNT", "JOB");
	if (n == 0 && s->seq && s->nlibraries > 0)
		console_putf(r.y + 1, r.x, r.w, ROLE_DIM, "(no library matches \"%s\": / edits the filter, Esc in it clears it)",
		             c->lib_filter);
	list = r;
	list.y = r.y + 1;
	list.h = list_h;
	console_list(c, PANEL_LIBRARIES, list, n, focused ? c->sel[PANEL_LIBRARIES] : -1, row, &nw);
	if (reason)
		console_putf(r.y + r.h - 1, r.x, r.w, count_role(tui_count_kind_of(selv->count_state, selv->count_reason)),
		             "lib %" PRId64 " count: %s", selv->row.id, selv->count_reason);
}

/* Enter: select the library's active job; else say what its count is. */
static void open_row(console *c)
{
	const cleanup_mon_library *v = console_view_library(c, c->sel[PANEL_LIBRARIES]);
	char state[48];

	if (!v)
		return;
	if (v->row.job_id > 0) {
		console_select_job(c, v->row.job_id);
		c->focus = PANEL_JOBS;
	} else {
		console_message(c, ROLE_INFO, "library %" PRId64 " has no active job; count %s%s%s", v->row.id,
		                tui_count_state_text(state, sizeof state, v), v->count_reason[0] ? ": " : "",
		                v->count_reason);
	}
}

/* The libraries' own keys: o sorts them, D removes the selected one
 * (creates a remove-library job, after its dialog). */
static bool key(console *c, tui_cmd cmd)
{
	const cleanup_mon_library *v;
	confirm_target t;

	switch (cmd) {
	case CMD_SORT:
		c->lib_sort = (tui_lib_sort)((c->lib_sort + 1) % LIB_SORT__COUNT);
		console_build_views(c);
		console_message(c, ROLE_INFO, "libraries sorted by %s (o changes it)", tui_lib_sort_name(c->lib_sort));
		return true;
	case CMD_REMOVE:
		v = console_view_library(c, c->sel[PANEL_LIBRARIES]);
		if (!v)
			return false;
		if (console_fill_remove_target(c, ACT_REMOVE_LIBRARY, v->row.id, &t))
			console_request_action(c, &t);
		return true;
	default:
		return false;
	}
}

const tui_panel_class panel_libraries = {PANEL_LIBRARIES, rows, draw, open_row, key};
