/* The cleanupctl command line: one descriptor per command (one file each,
 * as in tmux's cmd-*.c), collected in the table in main.c, and the helpers
 * they share for options, connections and output. */
#ifndef CLEANUP_TUI_CLI_H
#define CLEANUP_TUI_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"
#include "cleanup/job.h"
#include "ops.h"

/* Global options, parsed from anywhere on the command line. */
typedef struct cli_ctx {
	const char *db;       /* --db CONNINFO, else $CLEANUPCTL_DB, else NULL (libpq environment) */
	const char *db_from;  /* where db came from: "CLEANUPCTL_DB", else NULL (--db or the default) */
	bool json;            /* --json: one JSON document on stdout */
	bool quiet;           /* --quiet: no progress chatter */
	int64_t timeout_s;    /* --timeout SECONDS (0: none); -1 when not given: the command's default */
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

/* One option of a command or subcommand: what the parser accepts, what
 * --help, the man page and the shell completions show (man/gendoc.c
 * generates those from these tables at build time). */
typedef struct cli_option {
	const char *name;     /* "--library" */
	const char *arg;      /* its value as shown ("ID"); NULL: a flag */
	const char *help;     /* one line */
	const char *complete; /* completion of the value: NULL nothing; "@file", "@dir",
	                       * "@theme"; else the words ("on off") */
} cli_option;

typedef struct cli_subcommand {
	const char *name;          /* "create" */
	const char *usage;         /* what follows "job create" */
	const char *summary;       /* one line */
	const cli_option *options; /* {NULL}-terminated */
	int (*exec)(cli_ctx *ctx, int argc, char **argv); /* argv[0] is the subcommand */
} cli_subcommand;

/* A command with its tables: options, subcommands, positional words. */
typedef struct cli_command_doc {
	const cli_command *cmd;
	const cli_option *options;         /* {NULL}-terminated, or NULL */
	const cli_subcommand *subcommands; /* {NULL}-terminated, or NULL */
	const char *words;                 /* positional words to complete ("start stop status"), or NULL */
	const char *const *word_table;     /* more positional words, from the table the command parses
	                                    * with ({NULL}-terminated; demo's scenarios), or NULL */
} cli_command_doc;

/* The scenarios `cleanupctl demo NAME` knows, {NULL}-terminated
 * (cmd_demo.c): its parser, its usage error and the completions. */
extern const char *const cli_demo_scenarios[];

/* The global options (--db, --json, ...), {NULL}-terminated. */
extern const cli_option cli_global_options[];

/* Every command in --help order, {NULL}-terminated (cli_commands.c). main.c
 * dispatches through it; man/gendoc.c documents it. */
extern const cli_command_doc cli_commands[];

/* The subcommands of `job` and their options (cmd_job.c). */
extern const cli_subcommand cmd_job_subcommands[];

/* The option named NAME ("--x", or "--x=V": the part before '=') in
 * OPTS, or NULL. Pure. */
const cli_option *cli_option_find(const cli_option *opts, const char *name);

/* Parses argv[FIRST..ARGC) against OPTS: VALUES[k] (an array as long as
 * OPTS) gets the value of OPTS[k] ("--x V" or "--x=V"; a flag's value is
 * its name), POS[0..*NPOS) the words that are not options, at most MAXPOS.
 * An option given twice, an unknown option or too many words is a usage
 * error naming it (printed, with CMD's usage); returns false then. */
bool cli_parse_options(const cli_ctx *ctx, const cli_command *cmd, const cli_option *opts, int argc, char **argv,
                       int first, const char **values, const char **pos, int maxpos, int *npos);

/* Prints the subcommands SUBS as `cleanupctl job --help` lists them. */
void cli_print_subcommands(FILE *f, const char *cmd, const cli_subcommand *subs);

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
extern const cli_command cmd_counts_entry;
/* Options tables that live beside their command (cmd_counts.c). */
extern const cli_option cmd_counts_options[];
extern const cli_option cmd_install_options[];

/* More lines for `cleanupctl console --help` (cmd_console.c). */
extern const char cmd_console_help[];

/* The options of the commands that take steps (job step, job run,
 * worker), parsed in one place: the statement timeout, the step
 * transactions' synchronous_commit and the busy rule of a run. The caller
 * sets its defaults before parsing. */
typedef struct cli_step_opts {
	int64_t timeout;     /* --timeout SECONDS, 0 to 86400 */
	int sync;            /* --synchronous-commit on|off: 1 or 0 (-1: the caller's "not given") */
	int64_t max_busy;    /* --max-busy N, 1 to 1000000 */
	int64_t backoff_max; /* --backoff-max MS, 1 to 60000 */
} cli_step_opts;

/* Which of them a command takes (a bit set). */
enum { CLI_STEP_OPT_TIMEOUT = 1, CLI_STEP_OPT_SYNC = 2, CLI_STEP_OPT_BUSY = 4 };

/* When argv[*I] is one of the options in ACCEPT ("--x V" or "--x=V"),
 * parses its value into O and advances *I past it: returns 1. Returns 0
 * when argv[*I] is none of them, -1 after a usage error (a bad or missing
 * value, printed with CMD's usage: exit 2). */
int cli_step_option(const cli_ctx *ctx, const cli_command *cmd, unsigned accept, int argc, char **argv, int *i,
                    cli_step_opts *o);

/* `job step` and `job run` (cmd_job_step.c); argv[0] is "step" / "run". */
int cmd_job_step(cli_ctx *ctx, int argc, char **argv);
int cmd_job_run(cli_ctx *ctx, int argc, char **argv);

struct cleanup_run_summary;

/* The human summary of a `job run` of job ID (one line, no newline) into
 * BUF: from SUM->job as the database has it (SUM->verified), with the
 * acknowledged steps that a server crash lost, and FAILED telling whether
 * the run ended on an error (then it says where the job resumes). Pure
 * (cmd_job_step.c). Returns BUF. */
const char *cli_run_summary_text(char *buf, size_t len, int64_t id, const struct cleanup_run_summary *sum,
                                 bool failed);

/* The version of the JSON documents' shapes (docs/json.md): raised when a
 * key is removed, renamed or changes type; adding keys keeps it. */
enum { CLI_JSON_VERSION = 2 };

/* Exit codes (PRODUCT.md); ops.h maps a status to them (tui_op_exit_code). */
enum { EXIT_DONE = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_BUSY = 3, EXIT_REFUSED = 4, EXIT_READONLY = 5 };
/* Stopped by Ctrl-C (SIGINT), as shells report it: 128 + 2. */
enum { EXIT_INTERRUPTED = TUI_OP_EXIT_INTERRUPTED };

/* Prints ERR as the JSON error object {"status", "exit_code", "sqlstate",
 * "message", "detail", "hint", "context"} (no newline) to F, with exit
 * code CODE and status name STATUS (NULL: ERR's). The one shape of every
 * error in a JSON document (docs/json.md); valid UTF-8, bad bytes as
 * U+FFFD. */
void cli_json_error(FILE *f, const cleanup_error *err, int code, const char *status);

/* Prints ERR to stderr, sanitized (sanitize.h), and, with --json, as one
 * document {"error": {"status", "exit_code", "sqlstate", "message",
 * "detail", "hint", "context"}} on stdout, always valid UTF-8 JSON (bad
 * bytes become U+FFFD); returns its exit code. Usage errors are EINVAL:
 * exit_code 2. */
int cli_fail(const cli_ctx *ctx, const cleanup_error *err);

/* cli_fail() for WHAT ("install", "seed") cancelled by Ctrl-C: the message
 * says so, CAUSE's message becomes the detail, the status is "interrupted"
 * and the exit code EXIT_INTERRUPTED (130), which it returns. */
int cli_fail_interrupted(const cli_ctx *ctx, const cleanup_error *cause, const char *what);

/* Usage error: prints "cleanupctl: MESSAGE" and the usage of CMD; exit 2. */
int cli_usage(const cli_ctx *ctx, const cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The one rule for numeric option values, the console's too: the
 * operation layer's tui_op_int_syntax (ops.h). Pure. */
const char *cli_int_syntax(const char *s, int64_t min, int64_t max, int64_t *out);

/* Parses an int64 in [MIN, MAX] for option OPT with tui_op_parse_int(); on
 * failure prints its usage error (naming OPT, the range, the value and the
 * rule, as the console says it) and returns false (exit 2). */
bool cli_parse_int(const cli_ctx *ctx, const char *opt, const char *s, int64_t min, int64_t max,
                   int64_t *out);

/* Parses a positive int64 ("job id", "--library" ...) from S: as
 * cli_parse_int() from 1 to INT64_MAX. */
bool cli_parse_id(const cli_ctx *ctx, const char *what, const char *s, int64_t *out);

/* The rule for second counts (--deadline, --watch): decimal digits with an
 * optional fraction ("2", "0.5"), no sign, space, exponent, hex, "inf" or
 * "nan", within [MIN, MAX]. Returns NULL and sets *OUT, or the rule broken.
 * Pure. */
const char *cli_seconds_syntax(const char *s, double min, double max, double *out);

/* Refuses an option given twice in argv[FIRST..ARGC) ("--library 1
 * --library 2", "--steps=1 --steps 2"): a usage error naming the option
 * and both values, and false. Every word starting with "--" counts as an
 * option (commands whose arguments may start with "--", such as job
 * append's IDs, do not call this). */
bool cli_no_repeats(const cli_ctx *ctx, const cli_command *cmd, int argc, char **argv, int first);

/* --wait SECONDS on the commands that can answer busy (55P03: job create,
 * seal, pause, resume, cancel, step): the operation layer's one retry rule
 * (ops.h, tui_op_wait: bounded backoff until the deadline, then the busy
 * error stands, exit 3), named "--wait" in its note. Usage:
 *     cli_wait_begin(&w, seconds);
 *     do rc = call(..., &err); while (rc != CLEANUP_OK && cli_wait_again(&w, &err));
 */
enum { CLI_WAIT_FIRST_MS = TUI_OP_WAIT_FIRST_MS, CLI_WAIT_MAX_MS = TUI_OP_WAIT_MAX_MS };
typedef tui_op_wait cli_wait;

/* tui_op_wait_begin(W, SECONDS, "--wait"). */
void cli_wait_begin(cli_wait *w, double seconds);

/* tui_op_wait_again(W, ERR). */
bool cli_wait_again(cli_wait *w, cleanup_error *err);

/* Ctrl-C, after psql (src/bin/psql/common.c, cancel.c). A long command
 * calls cli_interrupt_begin() once its connection is open: from then on a
 * SIGINT does not kill the process. With FINISH_FIRST (job run, job append)
 * the first Ctrl-C only sets a flag that the command checks at a safe point
 * (after the current step, after the current batch) and prints a note; the
 * second sends a cancel request for the query running on ENGINE (libpq's
 * PQcancel, prepared before the query; the handler is async-signal-safe).
 * Without FINISH_FIRST (install, seed: one transaction each) the first
 * Ctrl-C cancels. A cancelled query rolls back; nothing it did stays.
 * With FINISH_FIRST, SIGTERM and SIGHUP act as a first Ctrl-C however
 * often they arrive (finish what is in flight, summary, exit 130); they
 * never cancel. cli_interrupt_end() restores the default handlers. */
void cli_interrupt_begin(cleanup_engine *engine, bool finish_first);
void cli_interrupt_end(void);

/* How many interrupts arrived since cli_interrupt_begin() (0: none;
 * SIGTERM and SIGHUP count once). */
int cli_interrupts(void);

/* What stopped the command, for messages: "Ctrl-C", "SIGTERM" or
 * "SIGHUP" (the first of them to arrive). */
const char *cli_interrupt_name(void);

/* The flag the run loop polls (cleanup_run_opts.interrupt). */
volatile sig_atomic_t *cli_interrupt_flag(void);

/* Sets ctx->app_name to "cleanupctl:job:<JOB_ID>:<VERB>" (JOB_ID <= 0:
 * "cleanupctl:job:<VERB>"), so the console's lock view and
 * pg_stat_activity name the job a backend works for. */
void cli_job_app_name(cli_ctx *ctx, int64_t job_id, const char *verb);

/* Opens the engine for ctx->db and checks the schema (unless NO_SCHEMA).
 * On failure prints the error and returns its exit code (>0); 0 on success. */
int cli_connect(cli_ctx *ctx, cleanup_engine **out, bool check_schema);

/* Prints S as a JSON string literal (quoted, escaped) to F. */
void cli_json_string(FILE *f, const char *s);

/* Prints the JSON document JSON (server-built; NULL: null) to F with every
 * character a terminal would act on (DEL, C1, bidi controls, which JSON
 * allows raw) and any invalid byte written as a \u escape: the same
 * document, safe to show. No newline. */
void cli_json_doc(FILE *f, const char *json);

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
