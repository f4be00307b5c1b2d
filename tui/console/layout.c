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

/* The row's width with the variants chosen in VAR (-1: hidden) and the
 * cut widths in W. */
static int header_width(const tui_hdr_part *parts, const int *var, const int *w, int n)
{
	int i, total = 0;
	bool first = true;

	for (i = 0; i < n; i++) {
		if (var[i] < 0)
			continue;
		total += w[i] + (first ? 0 : parts[i].gap);
		first = false;
	}
	return total;
}

void tui_header_layout(tui_hdr_place *out, const tui_hdr_part *parts, int n, int cols)
{
	int var[TUI_HDR_PARTS], w[TUI_HDR_PARTS], i, x, left;
	bool first = true;

	if (n > TUI_HDR_PARTS)
		n = TUI_HDR_PARTS;
	if (cols < 0)
		cols = 0;
	for (i = 0; i < n; i++) {
		var[i] = parts[i].nvar > 0 ? 0 : -1;
		w[i] = var[i] == 0 ? parts[i].w[0] : 0;
	}
	/* give way, step by step, lowest rank first (the part further right
	 * first among equals), until the row fits; a kept part at its last
	 * variant is cut once the steps reach one of its cut ranks */
	while (header_width(parts, var, w, n) > cols) {
		int best = -1, rank = 0;

		for (i = 0; i < n; i++) {
			const tui_hdr_part *p = &parts[i];

			if (var[i] < 0 || (p->keep && var[i] >= p->nvar - 1))
				continue;
			if (best < 0 || p->give[var[i]] <= parts[best].give[var[best]])
				best = i;
		}
		if (best >= 0)
			rank = parts[best].give[var[best]];
		for (i = n - 1; i >= 0 && header_width(parts, var, w, n) > cols; i--) {
			int over = header_width(parts, var, w, n) - cols, lo = w[i], k;

			if (var[i] < 0 || !parts[i].keep || var[i] < parts[i].nvar - 1)
				continue;
			for (k = 0; k < 2; k++)
				if ((best < 0 || parts[i].cut[k] <= rank) && parts[i].cut_min[k] < lo)
					lo = parts[i].cut_min[k];
			w[i] = w[i] - over >= lo ? w[i] - over : lo;
		}
		if (header_width(parts, var, w, n) <= cols || best < 0)
			break;
		if (++var[best] >= parts[best].nvar)
			var[best] = -1;
		w[best] = var[best] >= 0 ? parts[best].w[var[best]] : 0;
	}
	/* a terminal narrower than every minimum: the parts that do not fit
	 * are hidden, from the right */
	for (i = n - 1; i >= 0 && header_width(parts, var, w, n) > cols; i--)
		var[i] = -1;
	/* columns left over go back to the parts cut, left first */
	left = cols - header_width(parts, var, w, n);
	for (i = 0; i < n && left > 0; i++)
		if (var[i] >= 0 && w[i] < parts[i].w[var[i]]) {
			int more = parts[i].w[var[i]] - w[i] < left ? parts[i].w[var[i]] - w[i] : left;

			w[i] += more;
			left -= more;
		}
	/* placed left to right; the right-aligned part at the end */
	x = 0;
	for (i = 0; i < n; i++) {
		out[i].var = var[i];
		out[i].x = out[i].w = 0;
		if (var[i] < 0 || parts[i].right)
			continue;
		x += first ? 0 : parts[i].gap;
		first = false;
		out[i].x = x;
		out[i].w = w[i];
		x += w[i];
	}
	for (i = 0; i < n; i++)
		if (var[i] >= 0 && parts[i].right) {
			out[i].x = cols - w[i];
			out[i].w = w[i];
		}
}

void tui_header_plan(tui_hdr_place *out, const int w[HDR__COUNT][TUI_HDR_VARIANTS], const int nvar[HDR__COUNT],
                     int cols)
{
	/* give-way ranks, lowest first (one sequence over the whole row) */
	static const int give[HDR__COUNT][TUI_HDR_VARIANTS] = {
		[HDR_WHERE] = {5, 20, 30},  [HDR_DBMS] = {10},         [HDR_TITLE] = {15},
		[HDR_POOLER] = {47},        [HDR_CMDLINE] = {46},      [HDR_REFRESH] = {48},
		[HDR_NO_RUNNER] = {49, 66}, [HDR_STALE] = {49, 66},    [HDR_STANDBY] = {49, 70},
		[HDR_CLOCK] = {50},         [HDR_RUNNING] = {52},      [HDR_THROTTLE] = {56},
		[HDR_PAUSED] = {70},        [HDR_READONLY] = {70},     [HDR_LOADING] = {0},
	};
	tui_hdr_part p[HDR__COUNT];
	int i, k;
	bool badge = false;

	memset(p, 0, sizeof p);
	for (i = 0; i < HDR__COUNT; i++) {
		p[i].nvar = nvar[i] < 0 ? 0 : nvar[i] > TUI_HDR_VARIANTS ? TUI_HDR_VARIANTS : nvar[i];
		for (k = 0; k < p[i].nvar; k++) {
			p[i].w[k] = w[i][k];
			p[i].give[k] = give[i][k];
		}
		p[i].gap = i == HDR_TITLE ? 0 : 2;
		if (i >= HDR_NO_RUNNER && i <= HDR_LOADING && p[i].nvar > 0) {
			/* the badges: one column between two */
			p[i].gap = badge ? 1 : 2;
			badge = true;
		}
		if (p[i].nvar > 0 && (i == HDR_NO_RUNNER || i == HDR_STALE || i == HDR_LOADING || i == HDR_WHERE)) {
			p[i].keep = true;
			if (i == HDR_WHERE) {
				/* its port and database first, then 16 columns */
				p[i].cut[0] = 45;
				p[i].cut_min[0] = 28;
				p[i].cut[1] = 62;
				p[i].cut_min[1] = 16;
			} else {
				/* an alarm: whole in its shortest form */
				p[i].cut[0] = p[i].cut[1] = 1000;
				p[i].cut_min[0] = p[i].cut_min[1] = p[i].w[p[i].nvar - 1];
			}
		}
	}
	p[HDR_CMDLINE].right = true;
	tui_header_layout(out, p, HDR__COUNT, cols);
}
