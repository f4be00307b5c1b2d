/* Unit tests of the descriptor tables and what reads them: the job
 * subcommands' tables are well formed (unique names, every option "--x"
 * with help and a type, every subcommand with an exec, usage words
 * without options), cli_parse_options fills what a table lists and
 * refuses the rest (unknown, repeated, missing value, a value on a flag, a
 * bad number, too many words), cli_print_subcommands
 * lists every subcommand and option within 78 columns, one JSON error
 * shape (cli_json_error) with all seven keys, and --wait's backoff
 * (cli_wait_again): retries only a busy error, only until the deadline,
 * then says so in the detail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>
#include "cli.h"
#include "test_main.h"
#include "unit_support.h"

static void test_job_tables_are_well_formed(void **state)
{
	int i, j, k, m;

	(void)state;
	for (i = 0; cmd_job_subcommands[i].name; i++) {
		const cli_subcommand *s = &cmd_job_subcommands[i];

		assert_non_null(s->exec);
		assert_non_null(s->usage);
		assert_true(strlen(s->summary) > 0);
		assert_non_null(s->options);
		for (j = 0; j < i; j++)
			assert_string_not_equal(cmd_job_subcommands[j].name, s->name);
		/* the usage words name no option: the usage line adds them
		 * from the table (cli_usage_line) */
		assert_null(strstr(s->usage, "--"));
		for (k = 0; s->options[k].name; k++) {
			char line[1024];

			assert_memory_equal(s->options[k].name, "--", 2);
			assert_true(strlen(s->options[k].help) > 0);
			assert_true(s->options[k].type != 0); /* every row parses */
			/* the usage line names every option of the table */
			assert_non_null(strstr(cli_usage_line(line, sizeof line, s->name, s->usage, s->options),
			                       s->options[k].name));
			for (m = 0; m < k; m++)
				assert_string_not_equal(s->options[m].name, s->options[k].name);
		}
	}
	assert_int_equal(i, 9);
}

typedef struct t_opts {
	int64_t expected;
	bool preview;
} t_opts;

static const cli_option opts[] = {
	CLI_ROW_INT("--expected", "N", "a value", t_opts, expected, 0, INT64_MAX),
	CLI_ROW_FLAG("--preview", "a flag", t_opts, preview, 0),
	CLI_ROW_END,
};

static const cli_subcommand t_sub = {"seal", "JOB", "a subcommand", opts, NULL};

/* Runs cli_parse_options on the words of LINE (space-separated) with at
 * most MAXPOS positional words into *O; stdout and stderr go to
 * /dev/null. */
static bool parse(const char *line, int maxpos, t_opts *o, cli_args *a)
{
	static char buf[256];
	static char *argv[16];
	cli_ctx ctx = {0};
	int argc = 0, saved, devnull;
	char *w;
	bool ok;

	snprintf(buf, sizeof buf, "%s", line);
	for (w = strtok(buf, " "); w && argc < 16; w = strtok(NULL, " "))
		argv[argc++] = w;
	o->expected = -1;
	o->preview = false;
	memset(a, 0, sizeof *a);
	/* the usage message goes to stderr: hidden while parsing */
	fflush(stderr);
	saved = dup(2);
	devnull = open("/dev/null", O_WRONLY);
	assert_true(saved >= 0 && devnull >= 0);
	dup2(devnull, 2);
	ok = cli_parse_options(&ctx, &cmd_job_entry, &t_sub, argc, argv, 1, maxpos, o, a);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(devnull);
	return ok;
}

static void test_parse_options_by_table(void **state)
{
	t_opts o;
	cli_args a;

	(void)state;
	assert_true(parse("seal --expected 5 --preview", 0, &o, &a));
	assert_int_equal(o.expected, 5);
	assert_true(o.preview);
	assert_int_equal(a.npos, 0);
	assert_true(cli_given(&a, opts, "--expected"));
	assert_true(parse("seal --expected=7", 0, &o, &a));
	assert_int_equal(o.expected, 7);
	assert_false(o.preview);
	assert_false(cli_given(&a, opts, "--preview"));
	assert_true(parse("pause 12 --expected 1", 1, &o, &a));
	assert_int_equal(a.npos, 1);
	assert_string_equal(a.pos[0], "12");
	/* a word starting with one '-' is a positional word (a job id "-5"
	 * then gets the id rule's message) */
	assert_true(parse("pause -5", 1, &o, &a));
	assert_string_equal(a.pos[0], "-5");
	/* refused */
	assert_false(parse("seal --expectd 5", 0, &o, &a));              /* unknown */
	assert_false(parse("seal --expected 5 --expected 6", 0, &o, &a)); /* repeated */
	assert_false(parse("seal --expected", 0, &o, &a));               /* no value */
	assert_false(parse("seal --preview=yes", 0, &o, &a));            /* value on a flag */
	assert_false(parse("seal --expected x", 0, &o, &a));             /* not a number */
	assert_false(parse("seal 5", 0, &o, &a));                        /* a word too many */
	assert_false(parse("pause 1 2", 1, &o, &a));
}

static void test_subcommand_help_lists_everything_narrowly(void **state)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int i, k;

	(void)state;
	assert_non_null(f);
	cli_print_subcommands(f, "job", cmd_job_subcommands);
	fclose(f);
	for (i = 0; cmd_job_subcommands[i].name; i++) {
		char head[64];

		snprintf(head, sizeof head, "  job %s ", cmd_job_subcommands[i].name);
		assert_non_null(strstr(text, head));
		for (k = 0; cmd_job_subcommands[i].options[k].name; k++)
			assert_non_null(strstr(text, cmd_job_subcommands[i].options[k].name));
	}
	/* usage lines ("  job NAME ..." and their continuations, indented more
	 * than the summaries' 6 spaces) fit 78 columns */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "  job ", 6) == 0 || strncmp(line, "       ", 7) == 0)
			assert_true(strlen(line) <= 78);
	free(text);
}

static void test_json_error_has_one_shape(void **state)
{
	cleanup_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	static const char *const keys[] = {"\"status\": \"busy\"", "\"exit_code\": 3", "\"sqlstate\": \"55P03\"",
	                                   "\"message\": \"m\\u001b\"", "\"detail\": \"d\"", "\"hint\": \"\"",
	                                   "\"context\": \"c\""};
	size_t i;

	(void)state;
	assert_non_null(f);
	cleanup_error_clear(&err);
	err.status = CLEANUP_EBUSY;
	snprintf(err.sqlstate, sizeof err.sqlstate, "55P03");
	snprintf(err.message, sizeof err.message, "m\x1b");
	snprintf(err.detail, sizeof err.detail, "d");
	snprintf(err.context, sizeof err.context, "c");
	cli_json_error(f, &err, 3, NULL);
	fclose(f);
	assert_int_equal(text[0], '{');
	assert_int_equal(text[strlen(text) - 1], '}');
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		assert_non_null(strstr(text, keys[i]));
	free(text);
}

static void test_wait_retries_busy_until_the_deadline(void **state)
{
	cleanup_error err;
	cli_wait w;
	double t0;
	int tries = 0;

	(void)state;
	/* not busy: no retry, whatever the wait */
	cli_wait_begin(&w, 5);
	cleanup_error_clear(&err);
	err.status = CLEANUP_EREFUSED;
	assert_false(cli_wait_again(&w, &err));
	/* busy without --wait: one attempt */
	cli_wait_begin(&w, 0);
	err.status = CLEANUP_EBUSY;
	assert_false(cli_wait_again(&w, &err));
	assert_string_equal(err.detail, "");
	/* busy with --wait 0.3: retries (the error cleared each time), none
	 * past the deadline, then the busy error stands and says so */
	t0 = mono_seconds();
	cli_wait_begin(&w, 0.3);
	for (;;) {
		tries++;
		cleanup_error_clear(&err);
		err.status = CLEANUP_EBUSY;
		snprintf(err.detail, sizeof err.detail, "held by pid 7");
		if (!cli_wait_again(&w, &err))
			break;
		assert_int_equal(err.status, CLEANUP_OK);
	}
	assert_true(mono_seconds() - t0 >= 0.3);
	assert_true(tries >= 2 && tries <= 8); /* after 50, 100, then 150 ms (the deadline's rest) */
	assert_int_equal(err.status, CLEANUP_EBUSY);
	assert_non_null(strstr(err.detail, "held by pid 7; still busy after --wait 0.3 s ("));
	assert_non_null(strstr(err.detail, " attempts)"));
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_job_tables_are_well_formed),
          cmocka_unit_test(test_parse_options_by_table),
          cmocka_unit_test(test_subcommand_help_lists_everything_narrowly),
          cmocka_unit_test(test_json_error_has_one_shape),
          cmocka_unit_test(test_wait_retries_busy_until_the_deadline),)
