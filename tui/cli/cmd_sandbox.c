/* cleanupctl sandbox start|stop|status [--dir DIR]: the disposable local
 * PostgreSQL. `start` prints the conninfo on stdout (details on stderr), so
 * `--db "$(cleanupctl sandbox start)"` works. */
#include <stdio.h>
#include <string.h>
#include "cleanup/sandbox.h"
#include "cli.h"

static void print_json(const cleanup_sandbox *sb, const char *conninfo)
{
	printf("{\"running\": %s, \"initialized\": %s, \"pid\": %d, \"port\": %d, \"conninfo\": ",
	       sb->running ? "true" : "false", sb->initialized ? "true" : "false", sb->pid, sb->port);
	cli_json_string(stdout, conninfo);
	printf(", \"dir\": ");
	cli_json_string(stdout, sb->dir);
	printf(", \"base\": ");
	cli_json_string(stdout, sb->base);
	printf(", \"datadir\": ");
	cli_json_string(stdout, sb->datadir);
	printf(", \"socket_dir\": ");
	cli_json_string(stdout, sb->sockdir);
	printf(", \"logfile\": ");
	cli_json_string(stdout, sb->logfile);
	printf(", \"run_as\": ");
	cli_json_string(stdout, sb->run_as);
	printf(", \"bindir\": ");
	cli_json_string(stdout, sb->bindir);
	printf("}\n");
}

static int exec_sandbox(cli_ctx *ctx, int argc, char **argv)
{
	const char *dir = NULL, *action = NULL;
	char conninfo[CLEANUP_PATH_MAX + 128];
	cleanup_sandbox sb;
	cleanup_error err;
	int i, rc;

	for (i = 1; i < argc; i++) {
		bool missing;
		const char *v = cli_opt(argc, argv, &i, "--dir", &missing);

		if (missing)
			return cli_usage(ctx, &cmd_sandbox_entry, "--dir needs a directory");
		if (v)
			dir = v;
		else if (!action)
			action = argv[i];
		else
			return cli_usage(ctx, &cmd_sandbox_entry, "unexpected argument \"%s\"", argv[i]);
	}
	if (!action || (strcmp(action, "start") && strcmp(action, "stop") && strcmp(action, "status")))
		return cli_usage(ctx, &cmd_sandbox_entry, "sandbox needs start, stop or status, not \"%s\"",
		                 action ? action : "");
	if ((rc = cleanup_sandbox_init(&sb, dir, &err)))
		return cli_fail(ctx, &err);
	if (strcmp(action, "start") == 0)
		rc = cleanup_sandbox_start(&sb, &err);
	else if (strcmp(action, "stop") == 0)
		rc = cleanup_sandbox_stop(&sb, &err);
	else
		rc = cleanup_sandbox_status(&sb, &err);
	if (rc)
		return cli_fail(ctx, &err);
	cleanup_sandbox_conninfo(&sb, NULL, conninfo, sizeof conninfo);
	if (ctx->json) {
		print_json(&sb, conninfo);
	} else if (strcmp(action, "start") == 0) {
		if (!ctx->quiet)
			fprintf(stderr, "sandbox running (pid %d, user %s), data in %s\n", sb.pid, sb.run_as, sb.datadir);
		printf("%s\n", conninfo);
	} else if (strcmp(action, "stop") == 0) {
		if (sb.initialized)
			printf("sandbox stopped (data kept in %s)\n", sb.datadir);
		else
			printf("sandbox stopped (no cluster in %s)\n", sb.datadir[0] ? sb.datadir : sb.dir);
	} else {
		printf("sandbox %s", sb.running ? "running" : sb.initialized ? "stopped" : "not initialized");
		if (sb.running)
			printf(" (pid %d, user %s)\nconninfo: %s", sb.pid, sb.run_as, conninfo);
		/* Before the first start of a DIR the server's user cannot enter,
		 * the data has no place yet: start makes a private one. */
		if (sb.datadir[0])
			printf("\ndata: %s\nlog:  %s\n", sb.datadir, sb.logfile);
		else
			printf("\ndata: none yet (start makes a private directory under /tmp; %s cannot enter %s)\n",
			       sb.run_as, sb.dir);
	}
	if (strcmp(action, "status") == 0 && !sb.running)
		return EXIT_ERROR;
	return EXIT_DONE;
}

const cli_command cmd_sandbox_entry = {
	"sandbox", "start|stop|status [--dir DIR]",
	"disposable local PostgreSQL; start prints its conninfo", exec_sandbox,
};
