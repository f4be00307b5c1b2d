/* cleanupctl console: the dashboard. Not built yet: refuses with exit 1. */
#include <stdio.h>
#include "cli.h"

static int exec_console(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_error err;

	(void)argc;
	(void)argv;
	cleanup_error_set(&err, CLEANUP_ERROR, "cleanupctl console is not available in this build yet");
	return cli_fail(ctx, &err);
}

const cli_command cmd_console_entry = {
	"console", "[--readonly] [--theme NAME]", "the dashboard", exec_console,
};
