/* The table-driven option parser (cli.h: cli_parse_argv, cli_usage_line):
 * each value type with its rule and range, each error with its words (the
 * value and the rule named), both spellings "--opt value" and
 * "--opt=value", an optional value, repeatable options, aliases, "--" as
 * the end of the options, the global options' pass-through of the words
 * that are not theirs, and the usage line built from the table. Also: every
 * table the binary parses with is well formed. */
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

typedef struct t_opts {
	bool flag;
	int64_t n;
	cli_ints ids;
	double secs, rate;
	const char *name, *mode;
	int sync;
	const char *db;
} t_opts;

static const cli_option opts[] = {
	CLI_ROW_FLAG("--flag", "a flag", t_opts, flag, 0),
	CLI_ROW_FLAG("--flag-alias", "the same as --flag", t_opts, flag, CLI_ALIAS),
	CLI_ROW_INT("--n", "N", "an integer", t_opts, n, 1, 100),
	{"--id", "ID", "repeatable", NULL, CLI_INTS, offsetof(t_opts, ids), 1, INT64_MAX, 0, NULL, NULL},
	{"--secs", "SECONDS", "seconds above 0", NULL, CLI_DECIMAL, offsetof(t_opts, secs), 0, 60000, CLI_ABOVE_MIN,
	 "must be a number of seconds above 0 and at most 60", NULL},
	{"--rate", "R", "a rate", NULL, CLI_DECIMAL, offsetof(t_opts, rate), 100, 1000000, CLI_OPTIONAL, NULL, NULL},
	{"--name", "NAME", "at most 5 bytes", NULL, CLI_STRING, offsetof(t_opts, name), 0, 5, 0, NULL, "a name"},
	{"--mode", "MODE", "an enum", "bounded single-transaction other", CLI_ENUM, offsetof(t_opts, mode), 0, 0, 0,
	 NULL, NULL},
	{"--sync", "on|off", "on or off", "on off", CLI_ONOFF, offsetof(t_opts, sync), 0, 0, 0, NULL, NULL},
	{"--db", "CONNINFO", "secret", NULL, CLI_STRING, offsetof(t_opts, db), 0, 0, CLI_SECRET | CLI_REQUIRED, NULL,
	 NULL},
	CLI_ROW_END,
};

static int64_t id_room[3];
static t_opts o;
static cli_args a;
static char msg[512];

/* Parses the words of LINE (space-separated; argv[0] is the first word)
 * into the fresh globals o and a with at most MAXPOS positional words. */
static bool parse(const char *line, int maxpos)
{
	static char buf[512];
	static char *argv[32];
	int argc = 0;
	char *w;

	snprintf(buf, sizeof buf, "%s", line);
	for (w = strtok(buf, " "); w && argc < 32; w = strtok(NULL, " "))
		argv[argc++] = w;
	memset(&o, 0, sizeof o);
	o.n = -1;
	o.sync = -1;
	o.ids.v = id_room;
	o.ids.cap = 3;
	memset(&a, 0, sizeof a);
	return cli_parse_argv(opts, argc, argv, 1, maxpos, &o, &a, msg, sizeof msg);
}

static void test_each_type_and_both_spellings(void **state)
{
	(void)state;
	assert_true(parse("x --flag --n 7 --secs=0.5 --name abc --mode single-transaction --sync off", 0));
	assert_true(o.flag);
	assert_int_equal(o.n, 7);
	assert_true(o.secs == 0.5);
	assert_string_equal(o.name, "abc");
	assert_string_equal(o.mode, "single-transaction");
	assert_int_equal(o.sync, 0);
	assert_true(cli_given(&a, opts, "--n"));
	assert_false(cli_given(&a, opts, "--id"));
	assert_false(cli_given(&a, opts, "--nope"));
	/* "--opt=value" and "--opt value" are one thing */
	assert_true(parse("x --n=100 --sync=on --mode=bounded --name= ", 0));
	assert_int_equal(o.n, 100);
	assert_int_equal(o.sync, 1);
	assert_string_equal(o.name, "");
	/* a value may start with '-' when the option needs one */
	assert_false(parse("x --n -3", 0));
	assert_non_null(strstr(msg, "\"-3\""));
	/* options not given keep what the caller set */
	assert_true(parse("x", 0));
	assert_int_equal(o.n, -1);
	assert_int_equal(o.sync, -1);
	assert_null(o.mode);
	assert_int_equal(a.given, 0);
}

/* A command line the parser refuses, and the words it says why: the whole
 * message, or (part) words it contains. */
typedef struct refusal {
	const char *line;
	int maxpos;
	const char *msg;
	bool part;
} refusal;

static void check_refusals(const refusal *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		assert_false(parse(r[i].line, r[i].maxpos));
		if (r[i].part)
			assert_non_null(strstr(msg, r[i].msg));
		else
			assert_string_equal(msg, r[i].msg);
	}
}

static void test_errors_name_the_value_and_the_rule(void **state)
{
	static const refusal cases[] = {
		{"x --bogus", 0, "unexpected argument \"--bogus\"", false},
		{"x --n", 0, "--n needs a value", false},
		{"x --name", 0, "--name needs a name", false},
		{"x --flag=yes", 0, "--flag takes no value, not \"--flag=yes\"", false},
		{"x --n 12x", 0,
		 "--n must be an integer from 1 to 100, not \"12x\": digits only: no spaces, letters, prefixes or fractions",
		 false},
		{"x --n 101", 0, "--n must be an integer from 1 to 100, not \"101\": out of range", false},
		{"x --n 0", 0, "out of range", true},
		{"x --n=+5", 0, "no sign", true},
		/* above 0, not 0 */
		{"x --secs 0", 0, "--secs must be a number of seconds above 0 and at most 60, not \"0\": out of range", false},
		{"x --secs 1e1", 0, "no sign, space, exponent or hex", true},
		{"x --secs 60.5", 0, "out of range", true},
		/* the default rule, from the range */
		{"x --rate 0.05", 0, "--rate must be a number from 0.1 to 1000, not \"0.05\": out of range", false},
		{"x --name abcdef", 0, "--name takes at most 5 bytes, not 6", false},
		{"x --mode fast", 0, "--mode must be bounded, single-transaction or other, not \"fast\"", false},
		{"x --sync maybe", 0, "--sync must be on or off, not \"maybe\"", false},
		{"x a", 0, "unexpected argument \"a\"", false},
		{"x a b", 1, "unexpected argument \"b\"", false},
	};

	(void)state;
	check_refusals(cases, sizeof cases / sizeof cases[0]);
}

static void test_repeats(void **state)
{
	static const refusal cases[] = {
		{"x --n 1 --n=2", 0, "--n given twice (\"1\", then \"2\"): an option is given once, it never silently wins",
		 false},
		{"x --flag --flag", 0, "--flag given twice: an option is given once, it never silently wins", false},
		/* a repeatable option: up to its room, each value by its rule */
		{"x --id 1 --id 2 --id 3 --id 4", 0, "at most 3 --id options", false},
		{"x --id 0", 0, "--id must be an integer from 1 to", true},
	};

	(void)state;
	check_refusals(cases, sizeof cases / sizeof cases[0]);
	/* a password never shows in the message */
	assert_false(parse("x --db password=s3cret --db host=h", 0));
	assert_null(strstr(msg, "s3cret"));
	assert_non_null(strstr(msg, "--db given twice"));
	/* a repeatable option collects its values */
	assert_true(parse("x --id 4 --id=5 --id 4", 0));
	assert_int_equal(o.ids.n, 3);
	assert_int_equal(o.ids.v[0], 4);
	assert_int_equal(o.ids.v[1], 5);
	assert_int_equal(o.ids.v[2], 4);
	/* an alias sets the same field */
	assert_true(parse("x --flag-alias", 0));
	assert_true(o.flag);
}

static void test_optional_value_and_end_of_options(void **state)
{
	(void)state;
	assert_true(parse("x --rate", 0));
	assert_true(cli_given(&a, opts, "--rate"));
	assert_true(o.rate == 0); /* not written: the caller's default stands */
	assert_true(parse("x --rate 2.5 --flag", 0));
	assert_true(o.rate == 2.5);
	assert_true(o.flag);
	assert_true(parse("x --rate --flag", 0)); /* the next option is no value */
	assert_true(o.rate == 0);
	assert_true(o.flag);
	assert_true(parse("x --rate=7", 0));
	assert_true(o.rate == 7);
	/* after "--" every word is positional, options too */
	assert_true(parse("x --flag -- --n 5", 3));
	assert_true(o.flag);
	assert_int_equal(o.n, -1);
	assert_int_equal(a.npos, 2);
	assert_string_equal(a.pos[0], "--n");
	assert_string_equal(a.pos[1], "5");
	assert_false(parse("x -- --n", 0));
	assert_string_equal(msg, "unexpected argument \"--n\"");
	/* a word with one '-' is positional (an id "-5" gets the id rule) */
	assert_true(parse("x -5", 1));
	assert_string_equal(a.pos[0], "-5");
}

/* The global options: the other words are kept, in order, for the command. */
static void test_pass_through_keeps_the_other_words(void **state)
{
	char *argv[] = {"cleanupctl", "job", "--json", "show", "--steps", "3", "-q", "--db=x", "7", "--", "--json", NULL};
	char *rest[16];
	cli_globals g = {NULL, false, false, false, false, -1};
	cli_args ga;

	(void)state;
	memset(&ga, 0, sizeof ga);
	ga.rest = rest;
	assert_true(cli_parse_argv(cli_global_options, 11, argv, 1, 0, &g, &ga, msg, sizeof msg));
	assert_false(g.help || g.version);
	assert_true(g.json);
	assert_true(g.quiet);
	assert_string_equal(g.db, "x");
	assert_int_equal(g.timeout, -1);
	assert_int_equal(ga.nrest, 6);
	assert_string_equal(rest[0], "job");
	assert_string_equal(rest[1], "show");
	assert_string_equal(rest[2], "--steps");
	assert_string_equal(rest[3], "3");
	assert_string_equal(rest[4], "7");
	assert_string_equal(rest[5], "--json"); /* after "--": the command's */
}

static void test_usage_line_from_the_table(void **state)
{
	static const cli_option t[] = {
		CLI_ROW_FLAG("--flag", "f", t_opts, flag, 0),
		CLI_ROW_FLAG("--alias", "a", t_opts, flag, CLI_ALIAS),
		{"--id", "ID", "i", NULL, CLI_INTS, offsetof(t_opts, ids), 1, 9, 0, NULL, NULL},
		{"--rate", "R", "r", NULL, CLI_DECIMAL, offsetof(t_opts, rate), 0, 9, CLI_OPTIONAL, NULL, NULL},
		{"--n", "N", "n", NULL, CLI_INT, offsetof(t_opts, n), 0, 9, CLI_REQUIRED, NULL, NULL},
		CLI_ROW_END,
	};
	char line[256];

	(void)state;
	assert_string_equal(cli_usage_line(line, sizeof line, "cmd", "A|B", t),
	                    "cmd A|B [--flag] [--id ID]... [--rate [R]] --n N");
	assert_string_equal(cli_usage_line(line, sizeof line, "cmd", "", NULL), "cmd");
	assert_string_equal(cli_usage_line(line, 12, "cmd", "A|B", t), "cmd A|B [--");
}

/* Every table of every command: names unique and spelled "--x" (aliases
 * may be "-x"), a type on every row, a flag has no value and a value
 * option shows one, an enum lists its words, at most 64 rows; the usage
 * words name no option (the line gets them from the table). */
static void check_table(const char *what, const char *usage, const cli_option *t)
{
	int k, m;

	if (usage && strstr(usage, "--"))
		fail_msg("%s: usage words \"%s\" name an option: the table's usage line adds them", what, usage);
	for (k = 0; t && t[k].name; k++) {
		const cli_option *r = &t[k];

		if (!(r->flags & CLI_ALIAS) && strncmp(r->name, "--", 2) != 0)
			fail_msg("%s: %s is not a --name", what, r->name);
		if (r->type == 0)
			fail_msg("%s: %s has no type: the parser cannot read it", what, r->name);
		if ((r->type == CLI_FLAG) != (r->arg == NULL))
			fail_msg("%s: %s: a flag has no ARG, a value has one", what, r->name);
		if (r->type == CLI_ENUM && (!r->complete || !*r->complete))
			fail_msg("%s: %s: an enum lists its words in complete", what, r->name);
		if (!r->help || !*r->help)
			fail_msg("%s: %s has no help", what, r->name);
		for (m = 0; m < k; m++)
			if (strcmp(t[m].name, r->name) == 0)
				fail_msg("%s: %s twice", what, r->name);
	}
	assert_true(k <= 64);
}

/* The descriptors (cli_commands.c declares the last two). The command
 * table itself, console and demo would link the console and the lab into
 * this test: tests/cli/test_man_complete.sh checks the binary's tables. */
extern const cli_command cmd_worker_entry;
extern const cli_command cmd_purge_entry;

static void test_every_table_is_well_formed(void **state)
{
	const cli_command *const cmds[] = {&cmd_sandbox_entry, &cmd_install_entry, &cmd_seed_entry,
	                                   &cmd_status_entry,  &cmd_jobs_entry,    &cmd_job_entry,
	                                   &cmd_worker_entry,  &cmd_locks_entry,   &cmd_deps_entry,
	                                   &cmd_writer_entry,  &cmd_counts_entry,  &cmd_purge_entry};
	size_t i;
	int k;

	(void)state;
	check_table("global", NULL, cli_global_options);
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		check_table(cmds[i]->name, cmds[i]->usage, cmds[i]->options);
	for (k = 0; cmd_job_subcommands[k].name; k++)
		check_table(cmd_job_subcommands[k].name, cmd_job_subcommands[k].usage, cmd_job_subcommands[k].options);
	assert_int_equal(k, 9);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_each_type_and_both_spellings),
          cmocka_unit_test(test_errors_name_the_value_and_the_rule),
          cmocka_unit_test(test_repeats),
          cmocka_unit_test(test_optional_value_and_end_of_options),
          cmocka_unit_test(test_pass_through_keeps_the_other_words),
          cmocka_unit_test(test_usage_line_from_the_table),
          cmocka_unit_test(test_every_table_is_well_formed),)
