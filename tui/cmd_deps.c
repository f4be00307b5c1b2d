/* cleanupctl deps: foreign-key dependency evidence. Not built yet: refuses with exit 1. */
#include <stdio.h>
#include "cli.h"

static int exec_deps(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_error err;

	(void)argc;
	(void)argv;
	cleanup_error_set(&err, CLEANUP_ERROR, "cleanupctl deps is not available in this build yet");
	return cli_fail(ctx, &err);
}

const cli_command cmd_deps_entry = {
	"deps", "", "foreign-key dependency evidence", exec_deps,
};
