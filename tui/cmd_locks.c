/* cleanupctl locks: lock contention now. Not built yet: refuses with exit 1. */
#include <stdio.h>
#include "cli.h"

static int exec_locks(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_error err;

	(void)argc;
	(void)argv;
	cleanup_error_set(&err, CLEANUP_ERROR, "cleanupctl locks is not available in this build yet");
	return cli_fail(ctx, &err);
}

const cli_command cmd_locks_entry = {
	"locks", "", "lock contention now", exec_locks,
};
