/* cleanupctl job step / job run: bounded steps of a draining job. Not
 * built yet: refuses with exit 1. */
#include <stdio.h>
#include "cli.h"

int cmd_job_step(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_error err;

	(void)argc;
	(void)argv;
	cleanup_error_set(&err, CLEANUP_ERROR, "job step is not available in this build yet");
	return cli_fail(ctx, &err);
}

int cmd_job_run(cli_ctx *ctx, int argc, char **argv)
{
	return cmd_job_step(ctx, argc, argv);
}

void cli_print_job_steps(FILE *f, cleanup_engine *engine, int64_t job_id, int n)
{
	(void)f;
	(void)engine;
	(void)job_id;
	(void)n;
}
