/* The cleanupctl command line: one descriptor per command (one file each,
 * as in tmux's cmd-*.c), collected in the table in main.c, and the helpers
 * they share for options, connections and output. */
#ifndef CLEANUP_TUI_CLI_H
#define CLEANUP_TUI_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
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

/* What an option's value is, how the parser checks it and what it writes
 * at the row's offset (cli_option.off) in the command's options struct. */
typedef enum cli_type {
	CLI_FLAG = 1, /* bool: true when given; "--x=V" is refused */
	CLI_INT,      /* int64_t: decimal digits in [min, max] (tui_op_parse_int's rule and message) */
	CLI_INTS,     /* cli_ints: as CLI_INT, appended each time the option is given (repeatable) */
	CLI_DECIMAL,  /* double: digits with an optional fraction (cli_seconds_syntax), in
	               * [min, max] thousandths (100: 0.1); CLI_ABOVE_MIN: min itself refused */
	CLI_STRING,   /* const char *: any text, at most max bytes (0: no limit) */
	CLI_ENUM,     /* const char *: one of the words of `complete` ("bounded single-transaction") */
	CLI_ONOFF,    /* int: "on" 1, "off" 0 */
} cli_type;

/* cli_option.flags */
enum {
	CLI_OPTIONAL = 1,  /* the value may be left out: "--watch", "--watch 5" (not a word starting
	                    * with '-'), "--watch=5"; the option's `given` bit says it was given */
	CLI_ALIAS = 2,     /* another name of the row before (same field): not in the usage line */
	CLI_REQUIRED = 4,  /* shown without brackets in the usage line; the command checks it */
	CLI_ABOVE_MIN = 8, /* CLI_DECIMAL: the value must be above min, not equal to it */
	CLI_SECRET = 16,   /* the value may hold a password: a message shows it redacted */
	CLI_AGAIN = 32,    /* CLI_FLAG: may be given again, to no effect (the global flags, as ever) */
};

/* The values of a repeatable option (CLI_INTS): the command points V at
 * CAP slots; a value beyond CAP is a usage error. */
typedef struct cli_ints {
	int64_t *v;
	size_t n, cap;
} cli_ints;

/* One option of a command or subcommand: what the parser accepts and
 * where the value goes, and what --help, the usage line, the man page and
 * the shell completions show (man/gendoc.c generates the last two from
 * these tables at build time). One row says everything about an option:
 * no command parses argv itself. */
typedef struct cli_option {
	const char *name;     /* "--library" */
	const char *arg;      /* its value as shown ("ID"); NULL: a flag */
	const char *help;     /* one line */
	const char *complete; /* completion of the value: NULL nothing; "@file", "@dir",
	                       * "@theme"; else the words ("on off"; CLI_ENUM's values) */
	cli_type type;
	size_t off;           /* offsetof(the command's options struct, the field) */
	int64_t min, max;     /* CLI_INT(S): the range; CLI_DECIMAL: in thousandths; CLI_STRING: max length */
	unsigned flags;       /* CLI_OPTIONAL, CLI_ALIAS, ... */
	const char *rule;     /* CLI_DECIMAL: the rule its error states ("takes seconds from 0 to 86400");
	                       * NULL: "must be a number from MIN to MAX" */
	const char *needs;    /* what "--x needs ..." says when the value is missing ("a directory");
	                       * NULL: "a value" */
} cli_option;

/* Rows of the common kinds (T: the command's options struct, F: its field). */
#define CLI_ROW_FLAG(NAME, HELP, T, F, FLAGS) {NAME, NULL, HELP, NULL, CLI_FLAG, offsetof(T, F), 0, 0, FLAGS, NULL, NULL}
#define CLI_ROW_INT(NAME, ARG, HELP, T, F, MIN, MAX)                                                               \
	{NAME, ARG, HELP, NULL, CLI_INT, offsetof(T, F), MIN, MAX, 0, NULL, NULL}
#define CLI_ROW_STRING(NAME, ARG, HELP, COMPLETE, T, F, NEEDS)                                                     \
	{NAME, ARG, HELP, COMPLETE, CLI_STRING, offsetof(T, F), 0, 0, 0, NULL, NEEDS}
#define CLI_ROW_END {NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL}
/* A command's only option when it is an integer: its value goes to the
 * int64_t the parser is given (no options struct). */
#define CLI_ROW_ONLY_INT(NAME, ARG, HELP, MIN, MAX) {NAME, ARG, HELP, NULL, CLI_INT, 0, MIN, MAX, 0, NULL, NULL}

struct cli_args;

/* A command's descriptor, as tmux's cmd_entry: the dispatcher (cli_exec)
 * parses the command's words with OPTIONS into a copy of DEFAULTS and
 * calls EXEC with them; a command with subcommands (job) names EXEC_ARGV
 * instead and parses each subcommand's words itself. */
typedef struct cli_command {
	const char *name;     /* "status", "job", ... */
	const char *usage;    /* the words after the name that are not options ("start|stop|status");
	                       * the usage line adds the options from OPTIONS (cli_usage_line) */
	const char *summary;  /* one line */
	/* the options parsed into OPTS (NULL when SIZE is 0), the other words in A */
	int (*exec)(cli_ctx *ctx, void *opts, const struct cli_args *a);
	const cli_option *options; /* {NULL}-terminated, or NULL: none */
	const void *defaults;      /* the options struct before parsing (SIZE bytes), or NULL: zeroes */
	size_t size;               /* sizeof the options struct (0: none) */
	int maxpos;                /* at most this many words that are not options (at most CLI_POS_MAX) */
	int (*exec_argv)(cli_ctx *ctx, int argc, char **argv); /* instead of EXEC: argv[0] is the name */
} cli_command;

/* A command's DEFAULTS and SIZE (designated, after its first fields): its
 * options struct T as it starts, the initializer's values in T's order. */
#define CLI_DEFAULTS(T, ...) .defaults = &(const T){__VA_ARGS__}, .size = sizeof(T)

typedef struct cli_subcommand {
	const char *name;          /* "create" */
	const char *usage;         /* what follows "job create" that is not an option */
	const char *summary;       /* one line */
	const cli_option *options; /* {NULL}-terminated */
	int (*exec)(cli_ctx *ctx, int argc, char **argv); /* argv[0] is the subcommand */
} cli_subcommand;

/* A command with its tables: options, subcommands, positional words. */
typedef struct cli_command_doc {
	const cli_command *cmd;            /* its options: cmd->options */
	const cli_subcommand *subcommands; /* {NULL}-terminated, or NULL */
	const char *words;                 /* positional words to complete ("start stop status"), or NULL */
	const char *const *word_table;     /* more positional words, from the table the command parses
	                                    * with ({NULL}-terminated; demo's scenarios), or NULL */
} cli_command_doc;

/* The scenarios `cleanupctl demo NAME` knows, {NULL}-terminated
 * (cmd_demo.c): its parser, its usage error and the completions. */
extern const char *const cli_demo_scenarios[];

/* The global options (--db, --json, ...), parsed from anywhere on the
 * command line into a cli_globals (main.c), {NULL}-terminated. */
typedef struct cli_globals {
	const char *db;
	bool json, quiet, help, version;
	int64_t timeout; /* -1: not given */
} cli_globals;
extern const cli_option cli_global_options[];

/* Every command in --help order, {NULL}-terminated (cli_commands.c). main.c
 * dispatches through it; man/gendoc.c documents it. */
extern const cli_command_doc cli_commands[];

/* The subcommands of `job` and their options (cmd_job.c). */
extern const cli_subcommand cmd_job_subcommands[];

/* The option named NAME ("--x", or "--x=V": the part before '=') in
 * OPTS, or NULL. Pure. */
const cli_option *cli_option_find(const cli_option *opts, const char *name);

enum { CLI_POS_MAX = 8 };

/* What the parser found besides the values it wrote: the words that are
 * not options and which options were given. */
typedef struct cli_args {
	const char *pos[CLI_POS_MAX];
	int npos;
	uint64_t given; /* bit k: OPTS[k] was given (a table has at most 64 rows) */
	char **rest;    /* set by the caller (room for every word), or NULL: the words that
	                 * are not OPTS' (unknown options, positional words, all after "--")
	                 * are kept here in order, not refused (the global options) */
	int nrest;
} cli_args;

/* What a job subcommand on one job starts with (cmd_job.c): argv[1] is the
 * job id, then the options of the subcommand's table (parsed into OUT).
 * Returns 0 with *ID, or the exit code after a usage error. */
int cli_job_args(cli_ctx *ctx, int argc, char **argv, int64_t *id, void *out, cli_args *a);

/* Parses argv[FIRST..ARGC) against OPTS, writing each option's checked
 * value at its row's offset in OUT (cli_option): "--x V" and "--x=V",
 * flags alone, after "--" every word is positional; at most MAXPOS (at
 * most CLI_POS_MAX) words that are not options. An unknown option, a word
 * too many, a missing value, a value on a flag, an option given twice (but
 * CLI_INTS), a value breaking its row's rule (naming the value and the
 * rule) is an error: false, with the message in MSG (no usage line). OUT
 * keeps what the caller set for options not given. A->rest is read first:
 * the caller sets it (NULL, or room for the words to pass through). Pure. */
bool cli_parse_argv(const cli_option *opts, int argc, char **argv, int first, int maxpos, void *out, cli_args *a,
                    char *msg, size_t len);

/* cli_parse_argv() for command CMD (its subcommand SUB, or NULL; the
 * options are SUB's, else CMD's; no pass-through: A need not be set); an
 * error is printed as a usage error with the usage line (exit 2): false
 * then. */
bool cli_parse_options(const cli_ctx *ctx, const cli_command *cmd, const cli_subcommand *sub, int argc,
                       char **argv, int first, int maxpos, void *out, cli_args *a);

/* Runs command CMD on ARGC words ARGV (argv[0] its name): CMD->exec_argv
 * as is, else the words parsed by cli_parse_options() into a copy of
 * CMD->defaults, then CMD->exec. Returns the exit code (2 after a usage
 * error, printed). */
int cli_exec(cli_ctx *ctx, const cli_command *cmd, int argc, char **argv);

/* Whether option NAME of OPTS was given (A from the parser). */
bool cli_given(const cli_args *a, const cli_option *opts, const char *name);

/* The usage line of NAME (e.g. "job seal") with the words USAGE and the
 * options OPTS: "NAME USAGE [--x N] [--flag] [--y ID]... --req N", in
 * table order, aliases left out. Returns BUF. Pure. */
const char *cli_usage_line(char *buf, size_t len, const char *name, const char *usage, const cli_option *opts);

/* `cleanupctl CMD --help`: the usage line, the summary, the options (one
 * a row with its help) and the subcommands SUBS (or NULL). */
void cli_print_help(FILE *f, const cli_command *cmd, const cli_subcommand *subs);

/* The subcommand NAME of SUBS, or NULL. */
const cli_subcommand *cli_subcommand_find(const cli_subcommand *subs, const char *name);

/* --wait SECONDS (0 to 86400) into the double field F of T: the row of
 * every command that can answer busy. */
#define CLI_WAIT_ROW(T, F)                                                                                         \
	{"--wait", "SECONDS", "when busy, retry with bounded backoff for up to SECONDS, then exit 3", NULL, CLI_DECIMAL, \
	 offsetof(T, F), 0, 86400000, 0, "takes seconds from 0 to 86400", NULL}

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
/* The options of the commands that take steps (job step, job run,
 * worker), one set of rows for all three: the statement timeout, the step
 * transactions' synchronous_commit and the busy rule of a run. The
 * command's options struct T holds a cli_step_opts named `so`; the caller
 * sets its defaults before parsing. */
typedef struct cli_step_opts {
	int64_t timeout;     /* --timeout SECONDS, 0 to 86400 */
	int sync;            /* --synchronous-commit on|off: 1 or 0 (-1: the caller's "not given") */
	int64_t max_busy;    /* --max-busy N, 1 to 1000000 */
	int64_t backoff_max; /* --backoff-max MS, 1 to 60000 */
} cli_step_opts;

#define CLI_STEP_TIMEOUT_ROW(T)                                                                                    \
	{"--timeout", "SECONDS", "statement timeout of each step (0: none; default 300)", NULL, CLI_INT,              \
	 offsetof(T, so.timeout), 0, 86400, 0, NULL, NULL}
#define CLI_STEP_SYNC_ROW(T, HELP)                                                                                 \
	{"--synchronous-commit", "on|off", HELP, "on off", CLI_ONOFF, offsetof(T, so.sync), 0, 0, 0, NULL, NULL}
#define CLI_STEP_BUSY_ROWS(T, BUSY_HELP, BACKOFF_HELP)                                                             \
	{"--max-busy", "N", BUSY_HELP, NULL, CLI_INT, offsetof(T, so.max_busy), 1, 1000000, 0, NULL, NULL},          \
	{"--backoff-max", "MS", BACKOFF_HELP, NULL, CLI_INT, offsetof(T, so.backoff_max), 1, 60000, 0, NULL, NULL}

/* `job step` and `job run` (cmd_job_step.c); argv[0] is "step" / "run";
 * their option tables. */
int cmd_job_step(cli_ctx *ctx, int argc, char **argv);
int cmd_job_run(cli_ctx *ctx, int argc, char **argv);
extern const cli_option cmd_job_step_options[];
extern const cli_option cmd_job_run_options[];

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

/* cli_fail_interrupted() when Ctrl-C (or a termination signal) came
 * (cli_interrupts() > 0), else cli_fail(). */
int cli_fail_or_interrupted(const cli_ctx *ctx, const cleanup_error *err, const char *what);

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

/* cli_connect() for a command that runs one long transaction (install,
 * seed): as pg_dump and pg_restore, no statement or lock timeout unless
 * --timeout says so (a role's statement_timeout does not apply); then
 * Ctrl-C cancels the transaction (cli_interrupt_begin, not FINISH_FIRST):
 * nothing it did stays. */
int cli_untimed_begin(cli_ctx *ctx, cleanup_engine **out, bool check_schema);

/* Ends what cli_untimed_begin() began once the transaction returned RC:
 * restores the signal handlers; when RC is not CLEANUP_OK, prints ERR
 * (cli_fail_or_interrupted for WHAT), closes E and returns the exit code;
 * else 0, E still open. */
int cli_untimed_end(const cli_ctx *ctx, cleanup_engine *e, int rc, const cleanup_error *err, const char *what);

/* Prints S as a JSON string literal (quoted, escaped) to F. */
void cli_json_string(FILE *f, const char *s);

/* cli_json_string(), or null when S is NULL. */
void cli_json_string_or_null(FILE *f, const char *s);

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

#endif
