/* The command table of cleanupctl: every command with its option table,
 * its subcommands (job's: cmd_job.c) and the words it takes. main.c
 * dispatches and prints --help through it; cleanupctl-gendoc
 * (man/gendoc.c) writes the man pages and shell completions from it.
 * Apart from cli.c so that programs using cli.c's helpers alone (the unit
 * tests) do not pull in every command. A new command is a new row here;
 * tests/cli/test_man_complete.sh fails when an option a command's source
 * parses is missing from its table. */
#include <stddef.h>
#include "cli.h"

/* cmd_worker.c, cmd_purge.c (declared here: cli.h is shared). */
extern const cli_command cmd_worker_entry;
extern const cli_command cmd_purge_entry;
extern const cli_option cmd_purge_options[];
extern const cli_option cmd_demo_options[];

const cli_option cli_global_options[] = {
	{"--db", "CONNINFO", "the database (libpq conninfo or URI); else $CLEANUPCTL_DB, else the libpq environment, "
	                     "else a running sandbox", NULL},
	{"--json", NULL, "one JSON document on stdout (docs/json.md), errors included", NULL},
	{"--quiet", NULL, "no progress chatter (also -q)", NULL},
	{"--timeout", "SECONDS", "the statement timeout of every transaction, 0 (none) to 86400; default 60, 300 for "
	                         "job step, job run and worker; lock_timeout is 10 s or this if less (docs/fleet.md)",
	 NULL},
	{"--help", NULL, "usage; after a command, that command's (also -h)", NULL},
	{"--version", NULL, "the program, schema and libpq versions", NULL},
	{NULL, NULL, NULL, NULL},
};

static const cli_option sandbox_options[] = {
	{"--dir", "DIR", "the sandbox directory (default: $CLEANUP_SANDBOX_DIR, else .sandbox in a checkout, else "
	                 "$XDG_STATE_HOME/cleanupctl/sandbox)", "@dir"},
	{NULL, NULL, NULL, NULL},
};

static const cli_option seed_options[] = {
	{"--servers", "N", "servers to create", NULL},
	{"--libraries", "N", "libraries per server", NULL},
	{"--items", "N", "items per library", NULL},
	{"--dependents", "N", "lab dependent rows per item (0 to 50), with a spread", NULL},
	{NULL, NULL, NULL, NULL},
};

static const cli_option status_options[] = {
	{"--watch", "[SECONDS]", "repeat as plain output every SECONDS (0.1 to 86400, default 2)", NULL},
	{"--count", "N", "with --watch: stop after N refreshes", NULL},
	{NULL, NULL, NULL, NULL},
};

static const cli_option jobs_options[] = {
	{"--limit", "N", "at most N jobs, newest first (1 to 1000, default 50)", NULL},
	{NULL, NULL, NULL, NULL},
};

static const cli_option deps_options[] = {
	{"--max-depth", "N", "walk at most N foreign keys deep", NULL},
	{"--max-tables", "N", "visit at most N tables", NULL},
	{"--max-edges", "N", "follow at most N foreign keys", NULL},
	{"--max-ms", "MS", "stop the walk after MS milliseconds", NULL},
	{"--offline", NULL, "no database: read the schema from the SQL files", NULL},
	{"--sql-dir", "DIR", "with --offline: the sql/ directory to read", "@dir"},
	{NULL, NULL, NULL, NULL},
};

static const cli_option console_options[] = {
	{"--readonly", NULL, "no action keys; every connection is read-only at the server", NULL},
	{"--read-only", NULL, "the same as --readonly", NULL},
	{"--theme", "NAME|FILE.theme", "a theme by name or a path to a .theme file owned by you or root", "@theme"},
	{"--refresh", "MS", "how often the panels are read, 100 to 60000 ms (default 1000)", NULL},
	{NULL, NULL, NULL, NULL},
};

static const cli_option writer_options[] = {
	{"--rate", "OPS_PER_SECOND", "operations per second", NULL},
	{"--server", "ID", "write to the libraries of server ID only", NULL},
	{"--duration", "SECONDS", "stop after SECONDS", NULL},
	{"--ops", "N", "stop after N operations", NULL},
	{"--seed", "N", "the random seed, for a repeatable run", NULL},
	{"--no-log", NULL, "do not print each rejection", NULL},
	{NULL, NULL, NULL, NULL},
};

static const cli_option worker_options[] = {
	{"--concurrency", "N", "runners, each stepping one job on a connection of its own (1 to 64, default 1)", NULL},
	{"--server", "ID", "run only the jobs of server ID (repeat for more servers; default every server)", NULL},
	{"--idle-exit", NULL, "exit when no runnable job is left that no runner holds (exit 1 if a job failed)", NULL},
	{"--poll", "SECONDS", "how often an idle runner looks for work, 0.1 to 3600 (default 2)", NULL},
	{"--max-busy", "N", "busy answers in a row before a job is set aside for a while (default 100)", NULL},
	{"--backoff-max", "MS", "cap of the doubling wait after a busy step (default 1000)", NULL},
	{"--timeout", "SECONDS", "statement timeout of each step (0: none; default 300)", NULL},
	{"--synchronous-commit", "on|off", "drain steps wait for their WAL flush (default off, as job run)", "on off"},
	{NULL, NULL, NULL, NULL},
};

const cli_command_doc cli_commands[] = {
	{&cmd_sandbox_entry, sandbox_options, NULL, "start stop status", NULL},
	{&cmd_install_entry, cmd_install_options, NULL, NULL, NULL},
	{&cmd_seed_entry, seed_options, NULL, NULL, NULL},
	{&cmd_status_entry, status_options, NULL, NULL, NULL},
	{&cmd_jobs_entry, jobs_options, NULL, NULL, NULL},
	{&cmd_job_entry, NULL, cmd_job_subcommands, NULL, NULL},
	{&cmd_worker_entry, worker_options, NULL, NULL, NULL},
	{&cmd_locks_entry, NULL, NULL, NULL, NULL},
	{&cmd_deps_entry, deps_options, NULL, NULL, NULL},
	{&cmd_console_entry, console_options, NULL, NULL, NULL},
	{&cmd_writer_entry, writer_options, NULL, NULL, NULL},
	{&cmd_counts_entry, cmd_counts_options, NULL, NULL, NULL},
	{&cmd_purge_entry, cmd_purge_options, NULL, NULL, NULL},
	{&cmd_demo_entry, cmd_demo_options, NULL, NULL, cli_demo_scenarios},
	{NULL, NULL, NULL, NULL, NULL},
};
