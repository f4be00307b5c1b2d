/* Unit tests of the CLI's pure helpers: thousands separators (cli_count),
 * integer parsing with its bounds
 * (cli_parse_int, cli_parse_id). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "cli.h"
#include "test_main.h"

static void test_cli_count(void **state)
{
	char buf[32], tiny[4];

	(void)state;
	assert_string_equal(cli_count(buf, sizeof buf, 0), "0");
	assert_string_equal(cli_count(buf, sizeof buf, 999), "999");
	assert_string_equal(cli_count(buf, sizeof buf, 1000), "1,000");
	assert_string_equal(cli_count(buf, sizeof buf, 1234567), "1,234,567");
	assert_string_equal(cli_count(buf, sizeof buf, 100000), "100,000");
	assert_string_equal(cli_count(buf, sizeof buf, -1234), "-1,234");
	assert_string_equal(cli_count(buf, sizeof buf, INT64_MAX), "9,223,372,036,854,775,807");
	/* Too small a buffer: plain digits, truncated, never an overflow. */
	cli_count(tiny, sizeof tiny, 123456);
	assert_int_equal(strlen(tiny), 3);
}

static void test_cli_parse_int(void **state)
{
	cli_ctx ctx = {0};
	int64_t v = 0;

	(void)state;
	assert_true(cli_parse_int(&ctx, "--expected", "0", 0, INT64_MAX, &v));
	assert_int_equal(v, 0);
	assert_true(cli_parse_int(&ctx, "--expected", "9223372036854775807", 0, INT64_MAX, &v));
	assert_true(v == INT64_MAX);
	v = 42;
	assert_false(cli_parse_int(&ctx, "--expected", "-1", 0, INT64_MAX, &v));
	assert_false(cli_parse_int(&ctx, "--expected", "9223372036854775808", 0, INT64_MAX, &v));
	assert_false(cli_parse_int(&ctx, "--expected", "12x", 0, INT64_MAX, &v));
	assert_false(cli_parse_int(&ctx, "--expected", "", 0, INT64_MAX, &v));
	assert_false(cli_parse_int(&ctx, "--expected", NULL, 0, INT64_MAX, &v));
	assert_false(cli_parse_int(&ctx, "--servers", "1001", 0, 1000, &v));
	assert_int_equal(v, 42); /* untouched on failure */
	assert_true(cli_parse_id(&ctx, "job id", "17", &v));
	assert_int_equal(v, 17);
	assert_false(cli_parse_id(&ctx, "job id", "0", &v));
	assert_false(cli_parse_id(&ctx, "job id", "abc", &v));
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_cli_count),
          cmocka_unit_test(test_cli_parse_int),)
