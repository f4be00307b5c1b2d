/* The cleanupctl command line: one descriptor per command (one file each,
 * as in tmux's cmd-*.c), collected in the table in main.c, and the helpers
 * they share for options, connections and output. */
#ifndef CLEANUP_TUI_CLI_H
#define CLEANUP_TUI_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"
#include "cleanup/job.h"

/* Global options, parsed from anywhere on the command line. */
typedef struct cli_ctx {
	const char *db;       /* --db CONNINFO, else NULL (libpq environment) */
	bool json;            /* --json: one JSON document on stdout */
	bool quiet;           /* --quiet: no progress chatter */
	const char *app_name; /* application_name for cli_connect (NULL: "cleanupctl");
	                       * job verbs use "cleanupctl:job:<id>:<verb>", the writer
	                       * "cleanupctl:writer:<server>", the console "cleanupctl:console" */
	const char *argv0;
} cli_ctx;

typedef struct cli_command {
	const char *name;     /* "status", "job", ... */
	const char *usage;    /* arguments after the name */
	const char *summary;  /* one line */
	int (*exec)(cli_ctx *ctx, int argc, char **argv); /* argv[0] is the command name */
} cli_command;

/* The commands (cmd_*.c). */
extern const cli_command cmd_sandbox_entry;
extern const cli_command cmd_install_entry;
extern const cli_command cmd_seed_entry;
extern const cli_command cmd_status_entry;
extern const cli_command cmd_jobs_entry;
extern const cli_command cmd_job_entry;
extern const cli_command cmd_locks_entry;
extern const cli_command cmd_deps_entry;
extern const cli_command cmd_console_entry;
extern const cli_command cmd_writer_entry;
extern const cli_command cmd_demo_entry;

/* More lines for `cleanupctl job --help`: every job subcommand. */
extern const char cmd_job_help[];

/* `job step` and `job run` (cmd_job_step.c); argv[0] is "step" / "run". */
int cmd_job_step(cli_ctx *ctx, int argc, char **argv);
int cmd_job_run(cli_ctx *ctx, int argc, char **argv);

/* Exit codes (PRODUCT.md). */
enum { EXIT_DONE = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_BUSY = 3, EXIT_REFUSED = 4 };

/* Prints ERR to stderr (and, with --json, as {"error": {...}} on stdout)
 * and returns its exit code. */
int cli_fail(const cli_ctx *ctx, const cleanup_error *err);

/* Usage error: prints "cleanupctl: MESSAGE" and the usage of CMD; exit 2. */
int cli_usage(const cli_ctx *ctx, const cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Parses a positive int64 ("job id", "library id" ...) from S; on failure
 * prints a message naming WHAT and the value and returns false. */
bool cli_parse_id(const cli_ctx *ctx, const char *what, const char *s, int64_t *out);

/* Parses an int64 in [MIN, MAX] for option OPT. */
bool cli_parse_int(const cli_ctx *ctx, const char *opt, const char *s, int64_t min, int64_t max,
                   int64_t *out);

/* Sets ctx->app_name to "cleanupctl:job:<JOB_ID>:<VERB>" (JOB_ID <= 0:
 * "cleanupctl:job:<VERB>"), so the console's lock view and
 * pg_stat_activity name the job a backend works for. */
void cli_job_app_name(cli_ctx *ctx, int64_t job_id, const char *verb);

/* Opens the engine for ctx->db and checks the schema (unless NO_SCHEMA).
 * On failure prints the error and returns its exit code (>0); 0 on success. */
int cli_connect(cli_ctx *ctx, cleanup_engine **out, bool check_schema);

/* Prints S as a JSON string literal (quoted, escaped) to F. */
void cli_json_string(FILE *f, const char *s);

/* Prints a one-line summary of JOB for humans. */
void cli_print_job_line(FILE *f, const cleanup_job *job);

/* Prints a job's fields for humans (job show). */
void cli_print_job_detail(FILE *f, const cleanup_job *job);

/* Prints the recent steps of job JOB_ID (at most N) for humans
 * (cmd_job_step.c). */
void cli_print_job_steps(FILE *f, cleanup_engine *engine, int64_t job_id, int n);

/* Formats N with thousands separators into BUF. */
const char *cli_count(char *buf, size_t len, int64_t n);

/* Finds the option value for NAME ("--library") at argv[*i]: accepts
 * "--library 5" and "--library=5"; advances *i. NULL when argv[*i] is not
 * NAME; sets *missing when NAME has no value. */
const char *cli_opt(int argc, char **argv, int *i, const char *name, bool *missing);

#endif
