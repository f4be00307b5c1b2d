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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_many_sizes),
		cmocka_unit_test(test_layout_too_small),
		cmocka_unit_test(test_layout_monotonic_in_height),
		cmocka_unit_test(test_wider_terminal_never_narrows_the_jobs_panel),
		cmocka_unit_test(test_panel_names),
		cmocka_unit_test(test_stale_panels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
