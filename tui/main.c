/* cleanupctl: the one binary. Parses the global options (--db, --json,
 * --quiet, --help) wherever they appear, then dispatches to a command from
 * the table below. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "config.h"

static const cli_command *const commands[] = {
	&cmd_sandbox_entry, &cmd_install_entry, &cmd_seed_entry, &cmd_status_entry,
	&cmd_jobs_entry,    &cmd_job_entry,     &cmd_locks_entry, &cmd_deps_entry,
	&cmd_console_entry, &cmd_writer_entry,  &cmd_demo_entry,  NULL,
};

/* More lines for `cleanupctl console --help` (cmd_console.c); belongs in
 * cli.h beside cmd_job_help. */
extern const char cmd_console_help[];

static void print_help(FILE *f)
{
	int i;

	fprintf(f, "usage: cleanupctl [--db CONNINFO] [--json] [--quiet] COMMAND [ARGS]\n\n"
	           "Bounded, fenced, resumable cleanup of media inventory in PostgreSQL.\n\n"
	           "commands:\n");
	for (i = 0; commands[i]; i++)
		fprintf(f, "  %-9s %-44s %s\n", commands[i]->name, commands[i]->usage, commands[i]->summary);
	fprintf(f, "\nConnection: --db CONNINFO, else PGHOST, PGPORT, PGDATABASE, PGUSER, PGSERVICE.\n"
	           "Exit codes: 0 done, 1 error, 2 usage, 3 busy (retry later), 4 refused by a job's\n"
	           "state or a guard.\n");
}

/* Main: global options first (--json is looked for before anything else,
 * so that every usage error, a missing --db value included, is one JSON
 * document with --json), then the command. Returns the exit code. */
int main(int argc, char **argv)
{
	cli_ctx ctx = {0};
	char **rest;
	int nrest = 0, i, rc;
	bool help = false;

	ctx.argv0 = "cleanupctl";
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			ctx.json = true;
	rest = calloc((size_t)argc + 1, sizeof *rest);
	if (!rest)
		return EXIT_ERROR;
	for (i = 1; i < argc; i++) {
		bool missing = false;
		const char *v;

		if (strcmp(argv[i], "--") == 0) {
			for (i++; i < argc; i++)
				rest[nrest++] = argv[i];
			break;
		}
		if ((v = cli_opt(argc, argv, &i, "--db", &missing)) || missing) {
			if (missing) {
				rc = cli_usage(&ctx, NULL, "--db needs a conninfo, e.g. --db 'host=/tmp dbname=cleanup_lab'");
				goto out;
			}
			if (ctx.db) {
				rc = cli_usage(&ctx, NULL,
				               "--db given twice (\"%s\", then \"%s\"): an option is given once, it never "
				               "silently wins",
				               ctx.db, v);
				goto out;
			}
			ctx.db = v;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx.json = true;
		} else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
			ctx.quiet = true;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			help = true;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("cleanupctl %s\n", CLEANUP_VERSION);
			rc = EXIT_DONE;
			goto out;
		} else {
			rest[nrest++] = argv[i];
		}
	}
	if (nrest == 0) {
		if (help) {
			print_help(stdout);
			rc = EXIT_DONE;
		} else if (ctx.json) {
			rc = cli_usage(&ctx, NULL, "no command given; cleanupctl --help lists them");
		} else {
			print_help(stderr);
			rc = EXIT_USAGE;
		}
		goto out;
	}
	for (i = 0; commands[i]; i++) {
		if (strcmp(commands[i]->name, rest[0]) == 0) {
			if (help) {
				printf("usage: cleanupctl %s %s\n  %s\n", commands[i]->name, commands[i]->usage,
				       commands[i]->summary);
				if (commands[i] == &cmd_job_entry)
					printf("\n%s", cmd_job_help);
				else if (commands[i] == &cmd_console_entry)
					printf("\n%s", cmd_console_help);
				rc = EXIT_DONE;
				goto out;
			}
			rc = commands[i]->exec(&ctx, nrest, rest);
			goto out;
		}
	}
	rc = cli_usage(&ctx, NULL, "unknown command \"%s\"", rest[0]);
	if (!ctx.json) {
		fputc('\n', stderr);
		print_help(stderr);
	}
out:
	free(rest);
	return rc;
}
