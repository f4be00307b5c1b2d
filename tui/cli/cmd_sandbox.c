/* cleanupctl sandbox start|stop|status [--dir DIR]: the disposable local
 * PostgreSQL. `start` prints the conninfo on stdout (details on stderr), so
 * `--db "$(cleanupctl sandbox start)"` works. */
#include <stdio.h>
#include <string.h>
#include "cleanup/sandbox.h"
#include "cli.h"

static void print_json(const cleanup_sandbox *sb, const char *conninfo)
{
	const struct {
		const char *name, *value;
	} strings[] = {
		{"conninfo", conninfo},    {"dir", sb->dir},         {"base", sb->base},     {"datadir", sb->datadir},
		{"socket_dir", sb->sockdir}, {"logfile", sb->logfile}, {"run_as", sb->run_as}, {"bindir", sb->bindir},
	};
	size_t i;

	printf("{\"running\": %s, \"initialized\": %s, \"pid\": %d, \"port\": %d", sb->running ? "true" : "false",
	       sb->initialized ? "true" : "false", sb->pid, sb->port);
	for (i = 0; i < sizeof strings / sizeof strings[0]; i++) {
		printf(", \"%s\": ", strings[i].name);
		cli_json_string(stdout, strings[i].value);
	}
	printf("}\n");
}

typedef struct sandbox_opts {
	const char *dir;
} sandbox_opts;

static const cli_option sandbox_options[] = {
	CLI_ROW_STRING("--dir", "DIR", "the sandbox directory (default: $CLEANUP_SANDBOX_DIR, else .sandbox in a "
	               "checkout, else $XDG_STATE_HOME/cleanupctl/sandbox)", "@dir", sandbox_opts, dir, "a directory"),
	CLI_ROW_END,
};

/* The words sandbox takes, and what each does. */
static const struct sandbox_action {
	const char *name;
	int (*run)(cleanup_sandbox *sb, cleanup_error *err);
} actions[] = {
	{"start", cleanup_sandbox_start},
	{"stop", cleanup_sandbox_stop},
	{"status", cleanup_sandbox_status},
};

static int exec_sandbox(cli_ctx *ctx, void *opts, const cli_args *a)
{
	const sandbox_opts *o = opts;
	const char *action = a->npos > 0 ? a->pos[0] : "";
	char conninfo[CLEANUP_PATH_MAX + 128];
	cleanup_sandbox sb;
	cleanup_error err;
	size_t i;

	for (i = 0; i < sizeof actions / sizeof actions[0]; i++)
		if (strcmp(action, actions[i].name) == 0)
			break;
	if (i == sizeof actions / sizeof actions[0])
		return cli_usage(ctx, &cmd_sandbox_entry, "sandbox needs start, stop or status, not \"%s\"", action);
	if (cleanup_sandbox_init(&sb, o->dir, &err) || actions[i].run(&sb, &err))
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
	"sandbox", "start|stop|status", "disposable local PostgreSQL; start prints its conninfo", exec_sandbox,
	sandbox_options, CLI_DEFAULTS(sandbox_opts, NULL), .maxpos = 1,
};
