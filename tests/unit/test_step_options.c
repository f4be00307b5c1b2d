/* The options of the commands that take steps (job step, job run, worker)
 * come from one set of rows (cli.h: CLI_STEP_*_ROW; duplicates D4): the
 * same names, types, ranges and words in each table, only those a command
 * takes, and the parser reads them alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cli.h"
#include "test_main.h"

/* cmd_worker.c's descriptor (declared in cli_commands.c, not cli.h; the
 * command table itself would link the console into this test). */
extern const cli_command cmd_worker_entry;

static const cli_option *job_options(const char *sub)
{
	const cli_subcommand *s = cli_subcommand_find(cmd_job_subcommands, sub);

	return s ? s->options : NULL;
}

/* Rows A and B parse alike: same value, type, range and words. */
static void assert_same_row(const cli_option *a, const cli_option *b)
{
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->arg, b->arg);
	assert_int_equal(a->type, b->type);
	assert_true(a->min == b->min && a->max == b->max);
	assert_int_equal(a->flags, b->flags);
	if (a->complete || b->complete)
		assert_string_equal(a->complete, b->complete);
}

static void test_step_options_are_one_set_of_rows(void **state)
{
	const cli_option *step = job_options("step"), *run = job_options("run"), *worker = cmd_worker_entry.options;
	static const char *const shared[] = {"--timeout", "--synchronous-commit"};
	static const char *const busy[] = {"--max-busy", "--backoff-max"};
	size_t k;

	(void)state;
	assert_non_null(step);
	assert_non_null(run);
	assert_non_null(worker);
	for (k = 0; k < 2; k++) {
		assert_same_row(cli_option_find(step, shared[k]), cli_option_find(run, shared[k]));
		assert_same_row(cli_option_find(run, shared[k]), cli_option_find(worker, shared[k]));
		assert_same_row(cli_option_find(run, busy[k]), cli_option_find(worker, busy[k]));
		/* job step takes no busy rule */
		assert_null(cli_option_find(step, busy[k]));
	}
	assert_int_equal(cli_option_find(run, "--timeout")->max, 86400);
	assert_int_equal(cli_option_find(run, "--max-busy")->max, 1000000);
	assert_int_equal(cli_option_find(run, "--backoff-max")->max, 60000);
}

/* The parser on job run's table: the step options land in `so`, in
 * whichever form, and a bad one names the value and the rule. The options
 * struct is job run's private one; its `so` comes first (cli.h's rows use
 * offsetof(T, so.x)), so a cli_step_opts at the start of a buffer holds
 * them. */
static void test_step_options_parse_alike(void **state)
{
	const cli_option *run = job_options("run");
	union {
		cli_step_opts so;
		char room[512];
	} out;
	char *ok[] = {"run", "--timeout", "5", "--synchronous-commit=on", "--max-busy", "3", "--backoff-max=7", NULL};
	char *bad_sync[] = {"run", "--synchronous-commit=maybe", NULL};
	char *bad_backoff[] = {"run", "--backoff-max=0", NULL};
	char *no_value[] = {"run", "--timeout", NULL};
	char *signed_value[] = {"run", "--timeout", "+5", NULL};
	cli_args a;
	char msg[512];

	(void)state;
	assert_int_equal(offsetof(cli_step_opts, timeout), 0);
	memset(&out, 0, sizeof out);
	out.so.sync = -1;
	memset(&a, 0, sizeof a);
	assert_true(cli_parse_argv(run, 7, ok, 1, 0, &out, &a, msg, sizeof msg));
	assert_int_equal(out.so.timeout, 5);
	assert_int_equal(out.so.sync, 1);
	assert_int_equal(out.so.max_busy, 3);
	assert_int_equal(out.so.backoff_max, 7);
	assert_false(cli_parse_argv(run, 2, bad_sync, 1, 0, &out, &a, msg, sizeof msg));
	assert_string_equal(msg, "--synchronous-commit must be on or off, not \"maybe\"");
	assert_int_equal(out.so.sync, 1);
	assert_false(cli_parse_argv(run, 2, bad_backoff, 1, 0, &out, &a, msg, sizeof msg));
	assert_non_null(strstr(msg, "--backoff-max must be an integer from 1 to 60000, not \"0\""));
	assert_int_equal(out.so.backoff_max, 7);
	assert_false(cli_parse_argv(run, 2, no_value, 1, 0, &out, &a, msg, sizeof msg));
	assert_string_equal(msg, "--timeout needs a value");
	assert_false(cli_parse_argv(run, 3, signed_value, 1, 0, &out, &a, msg, sizeof msg));
	assert_non_null(strstr(msg, "digits only"));
	assert_int_equal(out.so.timeout, 5);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_step_options_are_one_set_of_rows),
          cmocka_unit_test(test_step_options_parse_alike),)
