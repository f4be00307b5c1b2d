/* Unit tests of the CLI's strict input rules and trustworthy output:
 * numeric option values (cli_int_syntax, cli_seconds_syntax), repeated
 * options (cli_parse_argv), JSON strings that stay valid UTF-8 whatever
 * bytes they are given (cli_json_string), and the job run summary, which
 * reports the job row as the database has it and the acknowledged steps a
 * server crash lost (cleanup_run_reconcile, cli_run_summary_text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cleanup/step.h"
#include "cli.h"
#include "sanitize.h"
#include "test_main.h"

static void test_int_values_are_digits_only(void **state)
{
	int64_t v = 42;

	(void)state;
	assert_null(cli_int_syntax("5", 1, INT64_MAX, &v));
	assert_int_equal(v, 5);
	assert_null(cli_int_syntax("9223372036854775807", 1, INT64_MAX, &v));
	assert_true(v == INT64_MAX);
	v = 42;
	static const char *const bad[] = {" 5",
	                                  "+5",
	                                  "5x",
	                                  "0x10",
	                                  "-1",
	                                  "5 ",
	                                  "",
	                                  "1e3",
	                                  "5.0",
	                                  "٣",
	                                  "9223372036854775808",
	                                  "99999999999999999999999",
	                                  "\t5",
	                                  NULL};
	for (int i = 0; bad[i]; i++) {
		const char *why = cli_int_syntax(bad[i], 1, INT64_MAX, &v);

		if (!why)
			fail_msg("\"%s\" was accepted", bad[i]);
		assert_int_equal(v, 42);
	}
	assert_string_equal(cli_int_syntax("+5", 1, 10, &v), "digits only: no sign, space or prefix");
	assert_string_equal(cli_int_syntax(" 5", 1, 10, &v), "digits only: no sign, space or prefix");
	assert_string_equal(cli_int_syntax("11", 1, 10, &v), "out of range");
	assert_string_equal(cli_int_syntax("99999999999999999999", 1, INT64_MAX, &v), "out of range");
	assert_null(cli_int_syntax(NULL, 1, 10, &v) ? NULL : "accepted NULL");
	/* A negative value only where the range allows one. */
	assert_null(cli_int_syntax("-3", -5, 5, &v));
	assert_int_equal(v, -3);
	assert_non_null(cli_int_syntax("-6", -5, 5, &v));
	assert_null(cli_int_syntax("-9223372036854775808", INT64_MIN, 0, &v));
	assert_true(v == INT64_MIN);
}

static void test_seconds_are_plain_decimals(void **state)
{
	double d = 7;

	(void)state;
	assert_null(cli_seconds_syntax("2", 0, 100, &d));
	assert_true(d == 2.0);
	assert_null(cli_seconds_syntax("0.5", 0, 100, &d));
	assert_true(d == 0.5);
	d = 7;
	static const char *const bad[] = {"0x10", " 5", "+5", "1e3", "inf", "nan",
	                                  "-1",   "5.", ".5", "5s",  "",    NULL};
	for (int i = 0; bad[i]; i++) {
		if (!cli_seconds_syntax(bad[i], 0, 1e9, &d))
			fail_msg("\"%s\" was accepted", bad[i]);
		assert_true(d == 7);
	}
	assert_string_equal(cli_seconds_syntax("101", 0, 100, &d), "out of range");
}

typedef struct rep_opts {
	int64_t library, steps, libraryx;
} rep_opts;

static void test_repeated_options_are_refused(void **state)
{
	static const cli_option opts[] = {
		CLI_ROW_INT("--library", "ID", "a library", rep_opts, library, 1, INT64_MAX),
		CLI_ROW_INT("--steps", "N", "steps", rep_opts, steps, 1, 100),
		CLI_ROW_INT("--libraryx", "ID", "another", rep_opts, libraryx, 1, INT64_MAX),
		CLI_ROW_END,
	};
	char *twice[] = {"run", "7", "--library", "1", "--library", "2", NULL};
	char *eq[] = {"run", "7", "--steps=1", "--steps", "2", NULL};
	char *once[] = {"run", "7", "--library", "1", "--libraryx", "2", "--steps=3", NULL};
	rep_opts o = {0, 0, 0};
	cli_args a = {{0}, 0, 0, NULL, 0};
	char msg[512];

	(void)state;
	assert_false(cli_parse_argv(opts, 6, twice, 2, 0, &o, &a, msg, sizeof msg));
	assert_string_equal(msg, "--library given twice (\"1\", then \"2\"): an option is given once, it never "
	                         "silently wins");
	assert_false(cli_parse_argv(opts, 5, eq, 2, 0, &o, &a, msg, sizeof msg));
	assert_non_null(strstr(msg, "--steps given twice (\"1\", then \"2\")"));
	assert_true(cli_parse_argv(opts, 7, once, 2, 0, &o, &a, msg, sizeof msg));
	assert_int_equal(o.library, 1);
	assert_int_equal(o.libraryx, 2);
	assert_int_equal(o.steps, 3);
}

/* The output of cli_json_string(S). */
static char *json_of(const char *s)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	assert_non_null(f);
	cli_json_string(f, s);
	fclose(f);
	return mem;
}

static void test_json_strings_are_valid_utf8(void **state)
{
	char *j;

	(void)state;
	j = json_of("a\"b\\c\n\x1b\x7f\xc2\x9b");
	assert_string_equal(j, "\"a\\\"b\\\\c\\n\\u001b\\u007f\\u009b\"");
	free(j);
	/* Invalid bytes become U+FFFD, never raw. */
	j = json_of("bad \xff\xc0\xaf end \xe2\x82");
	assert_string_equal(j, "\"bad \\ufffd\\ufffd\\ufffd end \\ufffd\\ufffd\"");
	assert_true(tui_is_safe(j));
	free(j);
	j = json_of("Bibliothèque 日本");
	assert_string_equal(j, "\"Bibliothèque 日本\"");
	free(j);
}

static cleanup_job job_at(int32_t step_no)
{
	cleanup_job j;

	memset(&j, 0, sizeof j);
	j.id = 9;
	j.step_no = step_no;
	snprintf(j.kind, sizeof j.kind, "prune");
	snprintf(j.phase, sizeof j.phase, "draining");
	return j;
}

static void test_run_summary_reports_what_survived(void **state)
{
	/* 19 steps acknowledged from step 0 (the job: the run's own view); a
	 * server crash kept 18. */
	cleanup_run_summary sum = {.steps = 19, .acked_step_no = 19, .job = job_at(19)};
	cleanup_job db = job_at(18);
	char line[512];

	(void)state;
	assert_int_equal(cleanup_run_reconcile(&sum, &db), 1);
	assert_int_equal(sum.lost_steps, 1);
	assert_int_equal(sum.job.step_no, 18);
	assert_int_equal(sum.acked_step_no, 18);
	assert_true(sum.verified);
	cli_run_summary_text(line, sizeof line, 9, &sum, true);
	if (!strstr(line, "is at step 18 as the database has it") || !strstr(line, "resumes from step 19") ||
	    !strstr(line, "1 acknowledged step did not survive") || strstr(line, "step 20"))
		fail_msg("summary: %s", line);

	/* Later: two more acknowledged, both lost again; a second reconcile adds. */
	sum.acked_step_no = 20;
	db = job_at(18);
	assert_int_equal(cleanup_run_reconcile(&sum, &db), 2);
	assert_int_equal(sum.lost_steps, 3);

	/* Another runner went further: nothing was lost. */
	sum.acked_step_no = 18;
	db = job_at(25);
	assert_int_equal(cleanup_run_reconcile(&sum, &db), 0);
	assert_int_equal(sum.lost_steps, 3);

	/* A successful stop names the database's step. */
	snprintf(sum.stop_reason, sizeof sum.stop_reason, "interrupted");
	sum.lost_steps = 0;
	cli_run_summary_text(line, sizeof line, 9, &sum, false);
	if (!strstr(line, "interrupted; phase draining, step 25") || strstr(line, "did not survive"))
		fail_msg("summary: %s", line);

	/* Not confirmed: the database could not be reached at the end. */
	sum.verified = false;
	sum.acked_step_no = 30;
	cli_run_summary_text(line, sizeof line, 9, &sum, true);
	if (!strstr(line, "up to step 30, not confirmed") || strstr(line, "resumes from"))
		fail_msg("summary: %s", line);
	cleanup_job_reset(&sum.job);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_int_values_are_digits_only),
          cmocka_unit_test(test_seconds_are_plain_decimals),
          cmocka_unit_test(test_repeated_options_are_refused),
          cmocka_unit_test(test_json_strings_are_valid_utf8),
          cmocka_unit_test(test_run_summary_reports_what_survived),)
