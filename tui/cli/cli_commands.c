/* The command table of cleanupctl: every command with its option table,
 * its subcommands (job's: cmd_job.c) and the words it takes; each command's
 * option table is its descriptor's (cmd_*.c), which its parser reads. main.c
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


const cli_command_doc cli_commands[] = {
	{&cmd_sandbox_entry, NULL, "start stop status", NULL},
	{&cmd_install_entry, NULL, NULL, NULL},
	{&cmd_seed_entry, NULL, NULL, NULL},
	{&cmd_status_entry, NULL, NULL, NULL},
	{&cmd_jobs_entry, NULL, NULL, NULL},
	{&cmd_job_entry, cmd_job_subcommands, NULL, NULL},
	{&cmd_worker_entry, NULL, NULL, NULL},
	{&cmd_locks_entry, NULL, NULL, NULL},
	{&cmd_deps_entry, NULL, NULL, NULL},
	{&cmd_console_entry, NULL, NULL, NULL},
	{&cmd_writer_entry, NULL, NULL, NULL},
	{&cmd_counts_entry, NULL, NULL, NULL},
	{&cmd_purge_entry, NULL, NULL, NULL},
	{&cmd_demo_entry, NULL, NULL, cli_demo_scenarios},
	{NULL, NULL, NULL, NULL},
};
