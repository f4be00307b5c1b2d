/* cleanupctl: the one binary. Parses the global options (--db, --json,
 * --quiet, --help, --version) wherever they appear, takes the conninfo from
 * CLEANUPCTL_DB when --db is not given, then dispatches to a command from
 * the table in cli.c (cli_commands). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/engine.h"
#include "cleanup/install.h"
#include "cli.h"
#include "config.h"

/* The environment variable that holds the conninfo when --db is not given:
 * a conninfo with a password belongs there (or in ~/.pgpass), not on a
 * command line, which ps shows to every local user. `cleanupctl demo`
 * hands its conninfo to its child processes through it. */
#define DB_ENV "CLEANUPCTL_DB"

/* The --help text: the global options and every command, from the tables
 * in cli.c (the man page and completions come from the same tables). */
static void print_help(FILE *f)
{
	int i;

	fprintf(f, "usage: cleanupctl [--db CONNINFO] [--json] [--quiet] COMMAND [ARGS]\n\n"
	           "Bounded, fenced, resumable cleanup of media inventory in PostgreSQL.\n\n"
	           "commands:\n");
	for (i = 0; cli_commands[i].cmd; i++)
		fprintf(f, "  %-9s %-44s %s\n", cli_commands[i].cmd->name, cli_commands[i].cmd->usage,
		        cli_commands[i].cmd->summary);
	fprintf(f, "\nConnection: --db CONNINFO, else $" DB_ENV ", else PGHOST, PGPORT, PGDATABASE,\n"
	           "PGUSER, PGSERVICE, else a running sandbox. Passwords: ~/.pgpass or $" DB_ENV ",\n"
	           "never --db (ps shows a command line to every local user).\n"
	           "Exit codes: 0 done, 1 error, 2 usage, 3 busy (retry later), 4 refused by a job's\n"
	           "state or a guard.\n");
}

/* --version: the program, the schema it carries and the libpq it runs
 * with (cleanup_libpq_version: MAJOR * 10000 + MINOR since PostgreSQL 10). */
static int print_version(const cli_ctx *ctx)
{
	int lib = cleanup_libpq_version();

	if (ctx->json)
		printf("{\"program\": \"cleanupctl\", \"version\": \"%s\", \"schema_version\": %d, "
		       "\"libpq_version\": \"%d.%d\", \"json_version\": %d}\n",
		       CLEANUP_VERSION, cleanup_schema_version(), lib / 10000, lib % 10000, CLI_JSON_VERSION);
	else
		printf("cleanupctl %s\nschema %d\nlibpq %d.%d\n", CLEANUP_VERSION, cleanup_schema_version(), lib / 10000,
		       lib % 10000);
	return EXIT_DONE;
}

/* The conninfo to use: --db's value DB_GIVEN when given, else CLEANUPCTL_DB
 * when set and not empty, else NULL (cli_connect then takes libpq's
 * environment, else the running sandbox). The result is never printed as
 * it is: every message shows it through cleanup_conninfo_redact(). */
static const char *conninfo_choice(cli_ctx *ctx, const char *db_given)
{
	const char *env = getenv(DB_ENV);

	if (db_given)
		return db_given;
	if (!env || !*env)
		return NULL;
	ctx->db_from = DB_ENV;
	return env;
}

/* Main: global options first (--json is looked for before anything else,
 * so that every usage error, a missing --db value included, is one JSON
 * document with --json), then the conninfo (conninfo_choice), then the
 * command. Returns the exit code. */
int main(int argc, char **argv)
{
	cli_ctx ctx = {0};
	char **rest;
	int nrest = 0, i, rc;
	bool help = false;

	ctx.argv0 = "cleanupctl";
	ctx.timeout_s = -1;
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
				char first[512], second[512];

				/* Either value may carry a password: shown redacted. */
				rc = cli_usage(&ctx, NULL,
				               "--db given twice (\"%s\", then \"%s\"): an option is given once, it never "
				               "silently wins",
				               cleanup_conninfo_redact(first, sizeof first, ctx.db),
				               cleanup_conninfo_redact(second, sizeof second, v));
				goto out;
			}
			ctx.db = v;
		} else if ((v = cli_opt(argc, argv, &i, "--timeout", &missing)) || missing) {
			/* Global: every command's transactions (F1); job
			 * step, job run and worker take it as before. */
			int64_t t;

			if (missing) {
				rc = cli_usage(&ctx, NULL, "--timeout needs a number of seconds, 0 (none) to 86400");
				goto out;
			}
			if (ctx.timeout_s >= 0) {
				rc = cli_usage(&ctx, NULL, "--timeout given twice: an option is given once, it never silently wins");
				goto out;
			}
			if (!cli_parse_int(&ctx, "--timeout", v, 0, 86400, &t)) {
				rc = EXIT_USAGE;
				goto out;
			}
			ctx.timeout_s = t;
			cleanup_engine_defaults((int)(t * 1000), t > 0 && t * 1000 < CLEANUP_DEFAULT_LOCK_TIMEOUT_MS
			                                             ? (int)(t * 1000)
			                                             : CLEANUP_DEFAULT_LOCK_TIMEOUT_MS);
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx.json = true;
		} else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
			ctx.quiet = true;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			help = true;
		} else if (strcmp(argv[i], "--version") == 0) {
			rc = print_version(&ctx);
			goto out;
		} else {
			rest[nrest++] = argv[i];
		}
	}
	ctx.db = conninfo_choice(&ctx, ctx.db);
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
	for (i = 0; cli_commands[i].cmd; i++) {
		const cli_command *cmd = cli_commands[i].cmd;

		if (strcmp(cmd->name, rest[0]) == 0) {
			if (help) {
				printf("usage: cleanupctl %s %s\n  %s\n", cmd->name, cmd->usage, cmd->summary);
				if (cli_commands[i].subcommands) {
					putchar('\n');
					cli_print_subcommands(stdout, cmd->name, cli_commands[i].subcommands);
				} else if (cmd == &cmd_console_entry) {
					printf("\n%s", cmd_console_help);
				}
				rc = EXIT_DONE;
				goto out;
			}
			rc = cmd->exec(&ctx, nrest, rest);
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
