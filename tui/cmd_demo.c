/* cleanupctl demo: sandbox + install + seed + writers + console. Not built yet: refuses with exit 1. */
#include <stdio.h>
#include "cli.h"

static int exec_demo(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_error err;

	(void)argc;
	(void)argv;
	cleanup_error_set(&err, CLEANUP_ERROR, "cleanupctl demo is not available in this build yet");
	return cli_fail(ctx, &err);
}

const cli_command cmd_demo_entry = {
	"demo", "", "sandbox + install + seed + writers + console", exec_demo,
};
