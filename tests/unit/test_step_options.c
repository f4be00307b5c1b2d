/* The options of the commands that take steps (job step, job run, worker)
 * are parsed in one place, cli_step_option (cli.h; duplicates D4): the
 * same names, ranges and words for each, only those a command takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "cli.h"

/* Parses the one option at ARGV[0..] with ACCEPT into *O; returns what
 * cli_step_option returned, *NEXT the index it left. Its usage errors go
 * to /dev/null. */
static int parse(unsigned accept, int argc, char **argv, cli_step_opts *o, int *next)
{
	cli_ctx ctx;
	int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY), i = 0, rc;

	memset(&ctx, 0, sizeof ctx);
	fflush(stderr);
	dup2(null, STDERR_FILENO);
	rc = cli_step_option(&ctx, &cmd_job_entry, accept, argc, argv, &i, o);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(null);
	*next = i;
	return rc;
}

static void test_step_options_parse_alike_for_every_command(void **state)
{
	const unsigned all = CLI_STEP_OPT_TIMEOUT | CLI_STEP_OPT_SYNC | CLI_STEP_OPT_BUSY;
	cli_step_opts o = {300, -1, 100, 1000};
	char *a1[] = {"--timeout", "5"}, *a2[] = {"--timeout=7"}, *a3[] = {"--synchronous-commit", "on"},
	     *a4[] = {"--synchronous-commit=maybe"}, *a5[] = {"--max-busy", "3"}, *a6[] = {"--backoff-max=0"},
	     *a7[] = {"--timeout"}, *a8[] = {"--steps", "2"}, *a9[] = {"--timeout", "+5"};
	int next;

	(void)state;
	assert_int_equal(parse(all, 2, a1, &o, &next), 1);
	assert_int_equal(o.timeout, 5);
	assert_int_equal(next, 1); /* past the value */
	assert_int_equal(parse(all, 1, a2, &o, &next), 1);
	assert_int_equal(o.timeout, 7);
	assert_int_equal(parse(all, 2, a3, &o, &next), 1);
	assert_int_equal(o.sync, 1);
	assert_int_equal(parse(all, 1, a4, &o, &next), -1);
	assert_int_equal(o.sync, 1);
	assert_int_equal(parse(all, 2, a5, &o, &next), 1);
	assert_int_equal(o.max_busy, 3);
	assert_int_equal(parse(all, 1, a6, &o, &next), -1); /* 1 to 60000 */
	assert_int_equal(o.backoff_max, 1000);
	assert_int_equal(parse(all, 1, a7, &o, &next), -1); /* needs a value */
	assert_int_equal(parse(all, 2, a8, &o, &next), 0);  /* not one of them */
	assert_int_equal(parse(all, 2, a9, &o, &next), -1); /* the id rule: digits only */
	assert_int_equal(o.timeout, 7);
	/* job step takes no busy rule: --max-busy is not its option */
	assert_int_equal(parse(CLI_STEP_OPT_TIMEOUT | CLI_STEP_OPT_SYNC, 2, a5, &o, &next), 0);
	assert_int_equal(o.max_busy, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_options_parse_alike_for_every_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
