/* Sparklines (tui/console/sparkline.h): scaling, width, gaps, UTF-8 and ASCII,
 * and the per-second rate buckets of step times. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include "sparkline.h"
#include "test_main.h"

static void test_sparkline_ascii_scaling(void **state)
{
	const double v[] = {0, 1, 2, 3, 4, 5, 6, 7};
	char out[64];
	double max = -1;

	(void)state;
	assert_int_equal(sparkline_render(out, sizeof out, v, 8, 8, false, &max), 8);
	assert_string_equal(out, "_.:-=+*#");
	assert_true(max == 7);
}

static void test_sparkline_utf8_blocks(void **state)
{
	const double v[] = {0, 7, 3.5};
	char out[64];

	(void)state;
	assert_int_equal(sparkline_render(out, sizeof out, v, 3, 3, true, NULL), 3);
	assert_string_equal(out, "\xe2\x96\x81\xe2\x96\x88\xe2\x96\x85");
}

static void test_sparkline_takes_newest_and_pads(void **state)
{
	const double v[] = {100, 1, 1, 2};
	char out[64];

	(void)state;
	/* the newest three: the old 100 does not flatten them */
	sparkline_render(out, sizeof out, v, 4, 3, false, NULL);
	assert_string_equal(out, "==#");
	/* fewer values than cells: right-aligned */
	sparkline_render(out, sizeof out, v + 3, 1, 4, false, NULL);
	assert_string_equal(out, "   #");
	sparkline_render(out, sizeof out, NULL, 0, 3, false, NULL);
	assert_string_equal(out, "   ");
}

static void test_sparkline_small_values_visible_and_gaps(void **state)
{
	const double v[] = {1000, 1, -1, NAN, 0};
	char out[64];

	(void)state;
	sparkline_render(out, sizeof out, v, 5, 5, false, NULL);
	assert_string_equal(out, "#.  _");
}

static void test_sparkline_bounded_output(void **state)
{
	const double v[] = {1, 2, 3, 4, 5, 6};
	char out[7];

	(void)state;
	/* 3 bytes per UTF-8 cell: only two cells fit in 7 bytes */
	assert_int_equal(sparkline_render(out, sizeof out, v, 6, 6, true, NULL), 2);
	assert_int_equal(strlen(out), 6);
	assert_int_equal(sparkline_render(out, 0, v, 6, 6, true, NULL), 0);
	assert_int_equal(sparkline_render(out, sizeof out, v, 6, 0, true, NULL), 0);
	assert_string_equal(out, "");
}

static void test_sparkline_rate_buckets(void **state)
{
	const double t[] = {100.5, 100.7, 101.2, 95.0, 103.9, 104.0, 200};
	double out[4];

	(void)state;
	/* window (100, 104]: buckets of one second */
	sparkline_rate_buckets(out, 4, t, 7, 104.0, 1.0);
	assert_true(out[0] == 2);
	assert_true(out[1] == 1);
	assert_true(out[2] == 0);
	assert_true(out[3] == 2);
	/* two-second buckets give rates per second */
	sparkline_rate_buckets(out, 2, t, 7, 104.0, 2.0);
	assert_true(out[0] == 1.5);
	assert_true(out[1] == 1.0);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_sparkline_ascii_scaling),
          cmocka_unit_test(test_sparkline_utf8_blocks),
          cmocka_unit_test(test_sparkline_takes_newest_and_pads),
          cmocka_unit_test(test_sparkline_small_values_visible_and_gaps),
          cmocka_unit_test(test_sparkline_bounded_output),
          cmocka_unit_test(test_sparkline_rate_buckets),)
