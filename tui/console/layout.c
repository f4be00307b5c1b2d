/* The console's layout (layout.h): proportions with minimums, in one or two
 * columns depending on the width. Pure: no curses. */
#include "layout.h"
#include <string.h>

static int clamp(int v, int lo, int hi)
{
	if (v < lo)
		return lo;
	if (v > hi)
		return hi;
	return v;
}

static tui_rect rect(int y, int x, int h, int w)
{
	tui_rect r = {y, x, h, w};

	return r;
}

const char *tui_panel_name(tui_panel_id p)
{
	static const char *const names[PANEL__COUNT] = {"servers", "libraries", "jobs", "job detail", "locks", "log"};

	return p >= 0 && p < PANEL__COUNT ? names[p] : "?";
}

bool tui_layout_visible(const tui_layout *l, tui_panel_id p)
{
	return !l->too_small && p >= 0 && p < PANEL__COUNT && l->panels[p].h > 0 && l->panels[p].w > 0;
}

/* Splits TOTAL rows among N parts: each starts at its minimum, then every
 * further row goes to the part furthest below its weight that has not
 * reached its cap (cap 0: none). Growing TOTAL by one adds one row to one
 * part, so panels never shrink when the terminal grows. */
static void share(int *out, int n, int total, const int *min, const int *weight, const int *cap)
{
	int i, left = total;

	for (i = 0; i < n; i++) {
		out[i] = min[i];
		left -= min[i];
	}
	while (left > 0) {
		int best = -1;

		for (i = 0; i < n; i++) {
			if (cap[i] && out[i] >= cap[i])
				continue;
			/* out[i] / weight[i] smallest, compared without division */
			if (best < 0 || out[i] * weight[best] < out[best] * weight[i])
				best = i;
		}
		if (best < 0)
			best = n - 1;
		out[best]++;
		left--;
	}
}

/* One column, top to bottom: servers | libraries, jobs, detail | locks, log. */
static void narrow(tui_layout *l, int body_y, int body_h)
{
	static const int min[4] = {5, 6, 7, 4}, weight[4] = {22, 28, 32, 18}, cap[4] = {12, 0, 20, 0};
	int h[4];
	int cols = l->cols;
	int sw = clamp(cols * 45 / 100, 30, 64);
	int dw = cols * 64 / 100;
	int y = body_y;

	share(h, 4, body_h, min, weight, cap);
	l->panels[PANEL_SERVERS] = rect(y, 0, h[0], sw);
	l->panels[PANEL_LIBRARIES] = rect(y, sw, h[0], cols - sw);
	y += h[0];
	l->panels[PANEL_JOBS] = rect(y, 0, h[1], cols);
	y += h[1];
	l->panels[PANEL_DETAIL] = rect(y, 0, h[2], dw);
	l->panels[PANEL_LOCKS] = rect(y, dw, h[2], cols - dw);
	y += h[2];
	l->panels[PANEL_LOG] = rect(y, 0, h[3], cols);
}

/* Two columns: left servers | libraries, jobs, log; right detail, locks. */
static void wide(tui_layout *l, int body_y, int body_h)
{
	static const int lmin[3] = {5, 6, 4}, lweight[3] = {28, 47, 25}, lcap[3] = {16, 0, 0};
	static const int rmin[2] = {12, 7}, rweight[2] = {60, 40}, rcap[2] = {30, 0};
	int lh[3], rh[2];
	int cols = l->cols;
	int lw = cols * 60 / 100;
	int rw = cols - lw;
	int sw = lw * 45 / 100;

	share(lh, 3, body_h, lmin, lweight, lcap);
	share(rh, 2, body_h, rmin, rweight, rcap);
	l->wide = true;
	l->panels[PANEL_SERVERS] = rect(body_y, 0, lh[0], sw);
	l->panels[PANEL_LIBRARIES] = rect(body_y, sw, lh[0], lw - sw);
	l->panels[PANEL_JOBS] = rect(body_y + lh[0], 0, lh[1], lw);
	l->panels[PANEL_LOG] = rect(body_y + lh[0] + lh[1], 0, lh[2], lw);
	l->panels[PANEL_DETAIL] = rect(body_y, lw, rh[0], rw);
	l->panels[PANEL_LOCKS] = rect(body_y + rh[0], lw, rh[1], rw);
}

void tui_layout_compute(tui_layout *out, int cols, int rows, bool zoom_detail)
{
	int body_y = 1, body_h;

	memset(out, 0, sizeof *out);
	out->cols = cols > 0 ? cols : 0;
	out->rows = rows > 0 ? rows : 0;
	if (cols < TUI_MIN_COLS || rows < TUI_MIN_ROWS) {
		out->too_small = true;
		return;
	}
	out->header = rect(0, 0, 1, cols);
	out->footer = rect(rows - 1, 0, 1, cols);
	body_h = rows - 2;
	if (zoom_detail) {
		out->zoomed = true;
		out->panels[PANEL_DETAIL] = rect(body_y, 0, body_h, cols);
		return;
	}
	if (cols >= TUI_WIDE_COLS)
		wide(out, body_y, body_h);
	else
		narrow(out, body_y, body_h);
}

unsigned tui_stale_panels(unsigned stale_parts, bool disconnected, bool locks_stale)
{
	/* CLEANUP_MON_PART_* (cleanup/monitor.h) bit k is the part of panel part_panel[k] */
	static const tui_panel_id part_panel[] = {PANEL_SERVERS, PANEL_LIBRARIES, PANEL_JOBS,
	                                          PANEL_DETAIL,  PANEL_LOG,       PANEL_LOCKS};
	unsigned out = 0;
	size_t k;

	if (disconnected)
		return (1u << PANEL__COUNT) - 1;
	for (k = 0; k < sizeof part_panel / sizeof part_panel[0]; k++)
		if (stale_parts & (1u << k))
			out |= 1u << part_panel[k];
	if (locks_stale)
		out |= 1u << PANEL_LOCKS;
	return out;
}
