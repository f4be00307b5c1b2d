/* cleanupctl: the one binary. Parses the global options (--db, --json,
 * --quiet, --help, --version) wherever they appear, by their table
 * (cli_global_options), takes the conninfo from CLEANUPCTL_DB when --db is
 * not given, then dispatches to a command from the table in cli_commands.c
 * (cli_commands). */
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
 * in cli_commands.c (the man page and completions come from the same
 * tables). */
static void print_help(FILE *f)
{
	char line[1024];
	int i;

	fprintf(f, "usage: %s COMMAND [ARGS]\n\n"
	           "Bounded, fenced, resumable cleanup of media inventory in PostgreSQL.\n\n"
	           "commands:\n",
	        cli_usage_line(line, sizeof line, "cleanupctl", NULL, cli_global_options));
	for (i = 0; cli_commands[i].cmd; i++) {
		const cli_command *cmd = cli_commands[i].cmd;

		/* the usage line without the command's name */
		cli_usage_line(line, sizeof line, "", cmd->usage, cmd->options);
		fprintf(f, "  %-9s %-44s %s\n", cmd->name, line + (line[0] == ' '), cmd->summary);
	}
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
 * document with --json), parsed by their table (cli_global_options) from
 * anywhere on the command line, the other words kept in order for the
 * command; then the conninfo (conninfo_choice), then the command. Returns
 * the exit code. */
int main(int argc, char **argv)
{
	/* --json's row alone: the first pass reads only it */
	const cli_option json_only[] = {*cli_option_find(cli_global_options, "--json"), CLI_ROW_END};
	cli_ctx ctx = {0};
	cli_globals g = {NULL, false, false, false, false, -1};
	cli_args a;
	cleanup_error err;
	int i, rc;

	ctx.argv0 = "cleanupctl";
	ctx.timeout_s = -1;
	memset(&a, 0, sizeof a);
	a.rest = calloc((size_t)argc + 1, sizeof *a.rest);
	if (!a.rest)
		return EXIT_ERROR;
	cleanup_error_clear(&err);
	if (cli_parse_argv(json_only, argc, argv, 1, 0, &g, &a, err.message, sizeof err.message))
		ctx.json = g.json;
	g.json = false;
	a.nrest = 0;
	if (!cli_parse_argv(cli_global_options, argc, argv, 1, 0, &g, &a, err.message, sizeof err.message)) {
		rc = cli_usage(&ctx, NULL, "%s", err.message);
		goto out;
	}
	ctx.json = g.json;
	ctx.quiet = g.quiet;
	ctx.db = g.db;
	if (g.version) {
		rc = print_version(&ctx);
		goto out;
	}
	if (g.timeout >= 0) {
		/* Global: every command's transactions (F1); job
		 * step, job run and worker take it as before. */
		int64_t t = g.timeout;

		ctx.timeout_s = t;
		cleanup_engine_defaults((int)(t * 1000), t > 0 && t * 1000 < CLEANUP_DEFAULT_LOCK_TIMEOUT_MS
		                                             ? (int)(t * 1000)
		                                             : CLEANUP_DEFAULT_LOCK_TIMEOUT_MS);
	}
	ctx.db = conninfo_choice(&ctx, ctx.db);
	if (a.nrest == 0) {
		if (g.help) {
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

		if (strcmp(cmd->name, a.rest[0]) == 0) {
			if (g.help) {
				cli_print_help(stdout, cmd, cli_commands[i].subcommands);
				rc = EXIT_DONE;
				goto out;
			}
			rc = cli_exec(&ctx, cmd, a.nrest, a.rest);
			goto out;
		}
	}
	rc = cli_usage(&ctx, NULL, "unknown command \"%s\"", a.rest[0]);
	if (!ctx.json) {
		fputc('\n', stderr);
		print_help(stderr);
	}
out:
	free(a.rest);
	return rc;
}
