/* The console layout (tui/console/layout.h) for many terminal sizes: every visible
 * rectangle lies on the screen, none overlaps another, together they cover
 * the screen exactly, panels keep usable minimums, and below 80x24 the
 * layout reports a terminal that is too small. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "layout.h"
#include "test_main.h"

static void check_layout(int cols, int rows, bool zoom)
{
	tui_layout l;
	unsigned char *cover = calloc((size_t)cols * (size_t)rows, 1);
	tui_rect all[PANEL__COUNT + 2];
	int n = 0, i, y, x;

	assert_non_null(cover);
	tui_layout_compute(&l, cols, rows, zoom);
	assert_false(l.too_small);
	assert_int_equal(l.cols, cols);
	assert_int_equal(l.rows, rows);
	all[n++] = l.header;
	all[n++] = l.footer;
	for (i = 0; i < PANEL__COUNT; i++)
		if (tui_layout_visible(&l, (tui_panel_id)i))
			all[n++] = l.panels[i];
	for (i = 0; i < n; i++) {
		const tui_rect *r = &all[i];

		assert_true(r->y >= 0 && r->x >= 0 && r->h > 0 && r->w > 0);
		assert_true(r->y + r->h <= rows);
		assert_true(r->x + r->w <= cols);
		for (y = r->y; y < r->y + r->h; y++)
			for (x = r->x; x < r->x + r->w; x++) {
				/* no overlap */
				assert_int_equal(cover[y * cols + x], 0);
				cover[y * cols + x] = 1;
			}
	}
	/* no gap */
	for (i = 0; i < cols * rows; i++)
		assert_int_equal(cover[i], 1);
	assert_int_equal(l.header.y, 0);
	assert_int_equal(l.header.h, 1);
	assert_int_equal(l.footer.y, rows - 1);
	if (zoom) {
		assert_true(tui_layout_visible(&l, PANEL_DETAIL));
		assert_false(tui_layout_visible(&l, PANEL_JOBS));
	} else {
		for (i = 0; i < PANEL__COUNT; i++) {
			assert_true(tui_layout_visible(&l, (tui_panel_id)i));
			/* a border, a title and at least two rows of content */
			assert_true(l.panels[i].h >= 4);
			assert_true(l.panels[i].w >= 24);
		}
		/* the jobs panel shows at least four jobs, the detail its sparklines */
		assert_true(l.panels[PANEL_JOBS].h >= 6);
		assert_true(l.panels[PANEL_DETAIL].h >= 7);
		assert_int_equal(l.wide, cols >= TUI_WIDE_COLS);
	}
	free(cover);
}

static void test_layout_many_sizes(void **state)
{
	int cols, rows;

	(void)state;
	for (cols = TUI_MIN_COLS; cols <= 300; cols += 7)
		for (rows = TUI_MIN_ROWS; rows <= 120; rows += 5) {
			check_layout(cols, rows, false);
			check_layout(cols, rows, true);
		}
	/* the edges exactly */
	check_layout(80, 24, false);
	check_layout(TUI_WIDE_COLS - 1, 24, false);
	check_layout(TUI_WIDE_COLS, 24, false);
	check_layout(120, 40, false);
	check_layout(1000, 500, false);
}

static void test_layout_too_small(void **state)
{
	static const int sizes[][2] = {{79, 24}, {80, 23}, {0, 0}, {1, 1}, {40, 100}, {300, 10}, {-5, 30}};
	size_t i;
	int p;

	(void)state;
	for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		tui_layout l;

		tui_layout_compute(&l, sizes[i][0], sizes[i][1], false);
		assert_true(l.too_small);
		for (p = 0; p < PANEL__COUNT; p++)
			assert_false(tui_layout_visible(&l, (tui_panel_id)p));
		tui_layout_compute(&l, sizes[i][0], sizes[i][1], true);
		assert_true(l.too_small);
	}
}

/* Growing the terminal never shrinks a panel (resize keeps things stable). */
static void test_layout_monotonic_in_height(void **state)
{
	static const int widths[] = {80, 120, TUI_WIDE_COLS, 220};
	int rows, p;
	size_t w;

	(void)state;
	for (w = 0; w < sizeof widths / sizeof widths[0]; w++)
		for (rows = TUI_MIN_ROWS; rows < 150; rows++) {
			tui_layout a, b;

			tui_layout_compute(&a, widths[w], rows, false);
			tui_layout_compute(&b, widths[w], rows + 1, false);
			for (p = 0; p < PANEL__COUNT; p++)
				assert_true(b.panels[p].h >= a.panels[p].h);
		}
}

/* A wider terminal never shows less. From 120 columns on
 * the jobs panel keeps at least the 120 columns it has at 120 (where its
 * counters fit); at 160 the two-column layout used to leave it 96, and the
 * counters disappeared. */
static void test_wider_terminal_never_narrows_the_jobs_panel(void **state)
{
	int cols, rows;

	(void)state;
	for (rows = TUI_MIN_ROWS; rows <= 60; rows += 12)
		for (cols = 120; cols <= 320; cols++) {
			tui_layout l;

			tui_layout_compute(&l, cols, rows, false);
			if (l.panels[PANEL_JOBS].w < 120)
				fail_msg("at %dx%d the jobs panel is %d columns wide, less than at 120", cols, rows,
				         l.panels[PANEL_JOBS].w);
		}
}

static void test_panel_names(void **state)
{
	(void)state;
	assert_string_equal(tui_panel_name(PANEL_JOBS), "jobs");
	assert_string_equal(tui_panel_name(PANEL_LOCKS), "locks");
	assert_string_equal(tui_panel_name(PANEL__COUNT), "?");
}

/* Which panels are dimmed and titled ~stale. */
static void test_stale_panels(void **state)
{
	(void)state;
	assert_int_equal(tui_stale_panels(0, false, false), 0);
	/* disconnected: every panel */
	assert_int_equal(tui_stale_panels(0, true, false), (1u << PANEL__COUNT) - 1);
	/* CLEANUP_MON_PART_SERVERS | _LIBRARIES (1 | 2): those two panels */
	assert_int_equal(tui_stale_panels(1 | 2, false, false), (1u << PANEL_SERVERS) | (1u << PANEL_LIBRARIES));
	/* jobs (4), steps (8) -> the detail, events (16) -> the log */
	assert_int_equal(tui_stale_panels(4 | 8 | 16, false, false),
	                 (1u << PANEL_JOBS) | (1u << PANEL_DETAIL) | (1u << PANEL_LOG));
	/* contention (32), or the lock query's failure: the locks panel */
	assert_int_equal(tui_stale_panels(32, false, false), 1u << PANEL_LOCKS);
	assert_int_equal(tui_stale_panels(0, false, true), 1u << PANEL_LOCKS);
}

/* The header: at every width from 60 to 200 and with
 * every combination of badges, the parts shown lie on the row without
 * overlapping; from 80 columns on, the connection is always there (at
 * least 16 columns, its database name's end), and so are the alarms (NO
 * RUNNER, stale); the title and the clock give way before the
 * connection is cut. Widths as the console's texts have them. */
static void header_widths(int w[HDR__COUNT][TUI_HDR_VARIANTS], int nvar[HDR__COUNT], unsigned badges)
{
	static const int base[HDR__COUNT][TUI_HDR_VARIANTS] = {
		[HDR_TITLE] = {18},
		[HDR_CLOCK] = {8},
		[HDR_REFRESH] = {10},
		[HDR_DBMS] = {9},
		[HDR_NO_RUNNER] = {41, 23, 11},  /* " 1 job NO RUNNER: library 11 closed 15m " */
		[HDR_PAUSED] = {8},
		[HDR_READONLY] = {11},
		[HDR_STANDBY] = {37, 9},
		[HDR_POOLER] = {17},
		[HDR_RUNNING] = {9},
		[HDR_THROTTLE] = {17},
		[HDR_STALE] = {47, 36, 16},      /* " stale since 12:34:56: reconnecting, attempt 3 " */
		[HDR_LOADING] = {12},
		/* postgres@/tmp/cleanupctl-sandbox.abc/run:54321/cleanup_lab_e2e_norunner  PostgreSQL 15.4 */
		[HDR_WHERE] = {90, 70, 62, 53},
		[HDR_CMDLINE] = {17},
	};
	static const int nv[HDR__COUNT] = {[HDR_NO_RUNNER] = 3, [HDR_STANDBY] = 2, [HDR_STALE] = 3, [HDR_WHERE] = 4};
	static const tui_hdr_id badge_ids[] = {HDR_NO_RUNNER, HDR_PAUSED, HDR_READONLY, HDR_STANDBY,
	                                       HDR_POOLER,    HDR_RUNNING, HDR_THROTTLE, HDR_STALE};
	size_t b;
	int i;

	memcpy(w, base, sizeof base);
	for (i = 0; i < HDR__COUNT; i++)
		nvar[i] = nv[i] ? nv[i] : 1;
	nvar[HDR_LOADING] = 0;
	for (b = 0; b < sizeof badge_ids / sizeof badge_ids[0]; b++)
		if (!(badges & (1u << b)))
			nvar[badge_ids[b]] = 0;
}

static void test_header_keeps_the_connection(void **state)
{
	int w[HDR__COUNT][TUI_HDR_VARIANTS], nvar[HDR__COUNT], cols, i, j;
	unsigned badges;
	tui_hdr_place at[HDR__COUNT];

	(void)state;
	for (badges = 0; badges < 256; badges++)
		for (cols = 60; cols <= 200; cols++) {
			header_widths(w, nvar, badges);
			tui_header_plan(at, w, nvar, cols);
			for (i = 0; i < HDR__COUNT; i++) {
				if (nvar[i] == 0) {
					assert_int_equal(at[i].var, -1);
					continue;
				}
				if (at[i].var < 0)
					continue;
				assert_true(at[i].var < nvar[i]);
				assert_true(at[i].x >= 0 && at[i].w > 0 && at[i].x + at[i].w <= cols);
				assert_true(at[i].w <= w[i][at[i].var]);
				for (j = 0; j < i; j++)
					if (at[j].var >= 0)
						assert_true(at[j].x + at[j].w <= at[i].x || at[i].x + at[i].w <= at[j].x);
			}
			if (cols < 80)
				continue;
			/* the console's header is its width less a margin each side */
			if (cols - 2 >= 78) {
				assert_true(at[HDR_WHERE].var >= 0);
				assert_true(at[HDR_WHERE].w >= 16);
				if (badges & 1u)
					assert_true(at[HDR_NO_RUNNER].var >= 0);
				if (badges & 0x80u)
					assert_true(at[HDR_STALE].var >= 0);
				/* the connection is cut only once the title is gone, and
				 * below 28 columns only once the clock is gone too */
				if (at[HDR_WHERE].w < w[HDR_WHERE][at[HDR_WHERE].var])
					assert_true(at[HDR_TITLE].var < 0 && at[HDR_WHERE].var == 3);
				if (at[HDR_WHERE].w < 28)
					assert_true(at[HDR_CLOCK].var < 0);
			}
		}
	/* 200 columns, no badge: everything in its longest form */
	header_widths(w, nvar, 0);
	tui_header_plan(at, w, nvar, 198);
	for (i = 0; i < HDR__COUNT; i++)
		if (nvar[i])
			assert_int_equal(at[i].var, 0);
	assert_int_equal(at[HDR_CMDLINE].x + at[HDR_CMDLINE].w, 198);
	/* 78 (80 less the margins) with NO RUNNER: the alarm in its shorter
	 * form, the connection whole from its port (28 columns at least) */
	header_widths(w, nvar, 1u);
	tui_header_plan(at, w, nvar, 78);
	assert_int_equal(at[HDR_NO_RUNNER].var, 1);
	assert_int_equal(at[HDR_WHERE].var, 3);
	assert_true(at[HDR_WHERE].w >= 28);
	assert_int_equal(at[HDR_TITLE].var, -1);
	assert_int_equal(at[HDR_CMDLINE].var, -1);
	/* 118 (120 less the margins) with NO RUNNER and PAUSED: the alarm
	 * whole, the clock and the interval stay (the backend gives way);
	 * so does the connection, cut, and given the columns left over */
	header_widths(w, nvar, 1u | 2u);
	tui_header_plan(at, w, nvar, 118);
	assert_true(at[HDR_CLOCK].var == 0 && at[HDR_REFRESH].var == 0 && at[HDR_CMDLINE].var == -1);
	assert_true(at[HDR_PAUSED].var == 0 && at[HDR_NO_RUNNER].var == 0);
	assert_true(at[HDR_WHERE].w >= 28);
	assert_int_equal(at[HDR_WHERE].x + at[HDR_WHERE].w, 118);
	/* 118 with a long stale badge (66: " stale servers, libraries since
	 * T: database slow to answer "): whole, with the clock */
	header_widths(w, nvar, 0x80u);
	w[HDR_STALE][0] = 66;
	tui_header_plan(at, w, nvar, 118);
	assert_true(at[HDR_STALE].var == 0 && at[HDR_CLOCK].var == 0 && at[HDR_WHERE].w >= 28);
	/* NO RUNNER and stale at 78: both shorten, the connection keeps 16 at least */
	header_widths(w, nvar, 1u | 0x80u);
	tui_header_plan(at, w, nvar, 78);
	assert_true(at[HDR_NO_RUNNER].var >= 1 && at[HDR_STALE].var >= 1);
	assert_true(at[HDR_WHERE].w >= 16);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_layout_many_sizes),
          cmocka_unit_test(test_layout_too_small),
          cmocka_unit_test(test_layout_monotonic_in_height),
          cmocka_unit_test(test_wider_terminal_never_narrows_the_jobs_panel),
          cmocka_unit_test(test_panel_names),
          cmocka_unit_test(test_stale_panels),
          cmocka_unit_test(test_header_keeps_the_connection),)
