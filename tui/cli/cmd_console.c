/* cleanupctl console: the dashboard (console.c). Needs a terminal on stdin
 * and stdout; otherwise it refuses with exit 2 and points at
 * `status --json` / `status --watch`, which are made for scripts. With
 * --readonly the action keys are hidden and every connection is read-only
 * at the server (cleanup_conninfo_readonly()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cleanup/install.h"
#include "cli.h"
#include "console.h"

typedef struct console_cli_opts {
	bool readonly;
	const char *theme;
	int64_t refresh_ms;
} console_cli_opts;

static const cli_option console_options[] = {
	CLI_ROW_FLAG("--readonly", "no action keys; every connection is read-only at the server", console_cli_opts,
	             readonly, 0),
	CLI_ROW_FLAG("--read-only", "the same as --readonly", console_cli_opts, readonly, CLI_ALIAS),
	CLI_ROW_STRING("--theme", "NAME|FILE.theme",
	               "a theme name (~/.config/cleanupctl/themes, themes/) or a regular file ending in .theme owned by "
	               "you or root (a path holds a '/', e.g. ./mine.theme); errors name the line and rule, never the "
	               "file's text", "@theme", console_cli_opts, theme,
	               "a theme name (dark, light, high-contrast, monochrome) or a path to a FILE.theme"),
	{"--refresh", "MS", "how often the panels are read, 100 to 60000 ms (default 1000)", NULL, CLI_INT,
	 offsetof(console_cli_opts, refresh_ms), 100, 60000, 0, NULL, "milliseconds"},
	CLI_ROW_END,
};

static int exec_console(cli_ctx *ctx, void *opts, const cli_args *a)
{
	const console_cli_opts *co = opts;
	console_opts o;
	cleanup_engine *e = NULL;
	cleanup_error err;
	char dbname[128], *ro = NULL;
	const char *db_given = ctx->db;
	int rc;

	(void)a;
	memset(&o, 0, sizeof o);
	o.readonly = co->readonly;
	o.theme_name = co->theme;
	o.refresh_ms = (int)co->refresh_ms;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		cleanup_error_set(&err, CLEANUP_EINVAL,
		                  "cleanupctl console needs a terminal: stdin and stdout must both be a TTY");
		cleanup_error_hint(&err, "for scripts use: cleanupctl status --json (one document), or "
		                         "cleanupctl status --watch (refreshing plain text)");
		return cli_fail(ctx, &err);
	}
	ctx->app_name = "cleanupctl:console";
	if (o.readonly && ctx->db) {
		/* A read-only console sends no write: it has no actions, and
		 * the monitor's transactions are read-only at the server (its
		 * session's default on a direct connection, BEGIN READ ONLY
		 * behind a pooler). No startup options (F1): PgBouncer
		 * refuses "options", and a read-only default made
		 * target_session_attrs=read-write refuse the server. The
		 * conninfo is still checked up front: a string libpq rejects is
		 * named here, its password redacted. */
		if (cleanup_conninfo_readonly(&ro, ctx->db, &err) != CLEANUP_OK)
			return cli_fail(ctx, &err);
		free(ro);
		ro = NULL;
	}
	/* Check the connection and the schema once, before taking the screen:
	 * a wrong --db is a clear message, not a dashboard that keeps retrying. */
	if ((rc = cli_connect(ctx, &e, true)))
		goto out;
	snprintf(dbname, sizeof dbname, "%s", cleanup_engine_dbname(e));
	cleanup_engine_close(e);
	o.conninfo = ctx->db;
	o.dbname = dbname;
	rc = console_run(&o, &err);
	rc = rc != 0 ? cli_fail(ctx, &err) : EXIT_DONE;
out:
	if (ro) {
		ctx->db = db_given;
		free(ro);
	}
	return rc;
}

const cli_command cmd_console_entry = {
	"console", "", "the dashboard", exec_console, console_options, CLI_DEFAULTS(console_cli_opts, false, NULL, 0),
};
