/* cleanupctl writer: simulated sync writer (inserts, updates, moves). Not built yet: refuses with exit 1. */
#include <stdio.h>
#include "cli.h"

static int exec_writer(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_error err;

	(void)argc;
	(void)argv;
	cleanup_error_set(&err, CLEANUP_ERROR, "cleanupctl writer is not available in this build yet");
	return cli_fail(ctx, &err);
}

const cli_command cmd_writer_entry = {
	"writer", "[--rate N] [--server ID]", "simulated sync writer (inserts, updates, moves)", exec_writer,
};
