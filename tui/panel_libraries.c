/* The libraries panel: each library with its server, admission state, item
 * count with the count cache's state (never a COUNT(*)) and active job.
 * A watched library's count comes from the count cache (seed 002) and says
 * whether it is fresh, stale (changed since it was published), expired,
 * building or waiting for a restart; an unwatched one shows the statement-
 * trigger counter cleanup.library_stats ("counter"). The monitor's row has
 * one integer for both: sql/queries/mon_libraries.sql packs them. */
#include <inttypes.h>
#include <stdio.h>
#include "console.h"

/* The cache states mon_libraries.sql encodes, in its order. */
static const char *const cache_states[] = {"counter", "fresh", "stale", "expired", "building", "restart"};
#define CACHE_STATE_UNIT ((int64_t)1 << 44)

/* Splits a packed item_count into its cache state (an index into
 * cache_states) and the count (-1: none to show). */
static int unpack_count(int64_t packed, int64_t *count)
{
	int64_t st = packed >= 0 ? packed / CACHE_STATE_UNIT : 0;

	if (st == 0 || st >= (int64_t)(sizeof cache_states / sizeof cache_states[0])) {
		*count = packed; /* unwatched: the counter's plain count */
		return 0;
	}
	*count = packed % CACHE_STATE_UNIT - 1;
	return (int)st;
}

static theme_role cache_role(int st)
{
	switch (st) {
	case 1:
		return ROLE_OK;
	case 2:
	case 3:
		return ROLE_WARNING;
	case 5:
		return ROLE_DANGER;
	default:
		return ROLE_DIM;
	}
}

static int rows(const console *c)
{
	return (int)c->snap->nlibraries;
}

static void draw(console *c, tui_rect r, bool focused)
{
	const cleanup_mon_snapshot *s = c->snap;
	int n = rows(c), i, nw = r.w - 59;
	char items[32], shown[40];

	if (nw < 8)
		nw = 8;
	if (nw > 30)
		nw = 30;
	console_putf(r.y, r.x, r.w, ROLE_DIM, "%4s %5s %-*.*s %-9s %7s %-8s %s", "SRV", "ID", nw, nw, "NAME", "ADMISSION",
	             "ITEMS", "COUNT", "JOB");
	console_scroll(c, PANEL_LIBRARIES, n, r.h - 1);
	for (i = 0; i < r.h - 1 && c->top[PANEL_LIBRARIES] + i < n; i++) {
		int k = c->top[PANEL_LIBRARIES] + i, y = r.y + 1 + i, x;
		const cleanup_mon_library *v = &s->libraries[k];
		bool sel = focused && k == c->sel[PANEL_LIBRARIES];
		theme_role base = sel ? ROLE_SELECTION : ROLE_NORMAL;

		if (sel) {
			attrset(theme_attr(ROLE_SELECTION));
			mvhline(y, r.x, ' ', r.w);
		}
		x = r.x + console_putf(y, r.x, r.w, base, "%4" PRId64 " %5" PRId64 " %-*.*s ", v->row.server_id, v->row.id,
		                       nw, nw, v->row.name);
		x += console_putf(y, x, r.x + r.w - x, sel ? base : v->row.admission[0] == 'o' ? ROLE_OK : ROLE_WARNING,
		                  "%-9s ", v->row.admission);
		{
			int64_t count;
			int st = unpack_count(v->row.item_count, &count);

			if (count < 0)
				snprintf(shown, sizeof shown, "-");
			else if (st == 2 || st == 3)
				snprintf(shown, sizeof shown, "~%s", console_compact(items, sizeof items, count));
			else
				console_compact(shown, sizeof shown, count);
			x += console_putf(y, x, r.x + r.w - x, base, "%7s ", shown);
			x += console_putf(y, x, r.x + r.w - x, sel ? base : cache_role(st), "%-8s ", cache_states[st]);
		}
		if (v->row.job_id > 0) {
			/* the job's kind goes first when narrow; its phase stays */
			x += console_putf(y, x, r.x + r.w - x, base, "%" PRId64 " %s%s", v->row.job_id, r.w >= 64 ? v->job_kind : "",
			                  r.w >= 64 ? " " : "");
			console_put(y, x, r.x + r.w - x, sel ? base : console_phase_role(v->job_phase), v->job_phase);
		} else {
			console_put(y, x, r.x + r.w - x, sel ? base : ROLE_DIM, "-");
		}
	}
}

/* Enter: select the library's active job. */
static void open_row(console *c)
{
	int k = c->sel[PANEL_LIBRARIES];

	if (k < 0 || k >= rows(c))
		return;
	if (c->snap->libraries[k].row.job_id > 0) {
		console_select_job(c, c->snap->libraries[k].row.job_id);
		c->focus = PANEL_JOBS;
	} else {
		console_message(c, ROLE_INFO, "library %" PRId64 " has no active job", c->snap->libraries[k].row.id);
	}
}

const tui_panel_class panel_libraries = {PANEL_LIBRARIES, rows, draw, open_row};
