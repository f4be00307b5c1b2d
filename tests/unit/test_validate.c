/* Unit tests of pure input rules: external IDs (C1), the installer's
 * allowlist (B2) and the SQLSTATE -> status -> exit code mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include "cleanup/error.h"
#include "cleanup/install.h"
#include "cleanup/job.h"
#include "test_main.h"

static int check(const char *s)
{
	return cleanup_external_id_check(s, strlen(s), NULL, 0);
}

static void test_C1_external_id_rules(void **state)
{
	char why[128], big[300];

	(void)state;
	assert_int_equal(check("ext-1-2"), CLEANUP_OK);
	assert_int_equal(check("caf\xc3\xa9 \xe2\x98\x83"), CLEANUP_OK);         /* é, snowman */
	assert_int_equal(check(""), CLEANUP_EINVAL);
	assert_int_equal(check("a\tb"), CLEANUP_EINVAL);
	assert_int_equal(check("a\x7f"), CLEANUP_EINVAL);
	assert_int_equal(check("a\xc2\x85"), CLEANUP_EINVAL);                      /* C1 control NEL */
	assert_int_equal(check("\xff"), CLEANUP_EINVAL);                           /* not UTF-8 */
	assert_int_equal(check("\xc0\xaf"), CLEANUP_EINVAL);                       /* overlong */
	assert_int_equal(check("\xed\xa0\x80"), CLEANUP_EINVAL);                   /* surrogate */
	assert_int_equal(check("\xe2\x98"), CLEANUP_EINVAL);                       /* truncated */
	memset(big, 'x', 256);
	big[256] = '\0';
	assert_int_equal(check(big), CLEANUP_OK);
	big[256] = 'x';
	big[257] = '\0';
	assert_int_equal(cleanup_external_id_check(big, 257, why, sizeof why), CLEANUP_EINVAL);
	assert_non_null(strstr(why, "257 bytes"));
	assert_int_equal(cleanup_external_id_check("a\nb", 3, why, sizeof why), CLEANUP_EINVAL);
	assert_non_null(strstr(why, "control character"));
	assert_int_equal(cleanup_external_id_check("ab\0c", 4, why, sizeof why), CLEANUP_EINVAL);
}

/* Bad IDs are shown in messages without raw control bytes or broken
 * UTF-8 reaching the terminal. */
static void test_C1_quote_id(void **state)
{
	static const struct {
		const char *id;
		size_t len;
		const char *shown;
	} cases[] = {
		{"ext-1", 5, "\"ext-1\""},
		{"a\tb\n", 4, "\"a\\tb\\n\""},
		{"\x1b[2J", 4, "\"\\x1b[2J\""},
		{"\xff\xfe", 2, "\"\\xff\\xfe\""},
		{"caf\xc3\xa9", 5, "\"caf\xc3\xa9\""},
		{"x\xc2\x85", 3, "\"x\\u0085\""},
		{"q\"\\", 3, "\"q\\\"\\\\\""},
		{"a\0b", 3, "\"a\\x00b\""},
		{"", 0, "\"\""},
		/* Long values are cut, never overflowing, with a visible mark. */
		{"0123456789012345678901234567890123456789", 40, "\"01234567890123456789012345...\""},
	};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_string_equal(cleanup_quote_id(buf, sizeof buf, cases[i].id, cases[i].len), cases[i].shown);
	assert_int_equal(strlen(cleanup_quote_id(buf, sizeof buf, "\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01", 10)) < sizeof buf, 1);
}

static void test_B2_allowlist(void **state)
{
	(void)state;
	assert_true(cleanup_db_allowed("cleanup_lab"));
	assert_true(cleanup_db_allowed("cleanup_lab_t_admission"));
	assert_false(cleanup_db_allowed("cleanup_lab_"));
	assert_false(cleanup_db_allowed("cleanup_labx"));
	assert_false(cleanup_db_allowed("postgres"));
	assert_false(cleanup_db_allowed("cleanup_lab_Prod"));
	assert_false(cleanup_db_allowed("cleanup_lab_a-b"));
	assert_false(cleanup_db_allowed(NULL));
}

static void test_exit_code_mapping(void **state)
{
	(void)state;
	assert_int_equal(cleanup_status_from_sqlstate("55P03"), CLEANUP_EBUSY);
	assert_int_equal(cleanup_status_from_sqlstate("CU001"), CLEANUP_ENOTFOUND);
	assert_int_equal(cleanup_status_from_sqlstate("CU101"), CLEANUP_EINVAL);
	assert_int_equal(cleanup_status_from_sqlstate("CU402"), CLEANUP_EREFUSED);
	assert_int_equal(cleanup_status_from_sqlstate("CUA01"), CLEANUP_EREFUSED);
	assert_int_equal(cleanup_status_from_sqlstate("57P01"), CLEANUP_ECONN);
	assert_int_equal(cleanup_status_from_sqlstate("08006"), CLEANUP_ECONN);
	assert_int_equal(cleanup_status_from_sqlstate("42P01"), CLEANUP_ERROR);
	assert_int_equal(cleanup_status_from_sqlstate(NULL), CLEANUP_ERROR);
	assert_int_equal(cleanup_exit_code(CLEANUP_OK), 0);
	assert_int_equal(cleanup_exit_code(CLEANUP_ERROR), 1);
	assert_int_equal(cleanup_exit_code(CLEANUP_EINVAL), 2);
	assert_int_equal(cleanup_exit_code(CLEANUP_EBUSY), 3);
	assert_int_equal(cleanup_exit_code(CLEANUP_EREFUSED), 4);
	assert_int_equal(cleanup_exit_code(CLEANUP_ENOTFOUND), 1);
	assert_int_equal(cleanup_exit_code(CLEANUP_ECONN), 1);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_C1_external_id_rules),
          cmocka_unit_test(test_C1_quote_id),
          cmocka_unit_test(test_B2_allowlist),
          cmocka_unit_test(test_exit_code_mapping),)
