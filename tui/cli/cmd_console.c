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

static int exec_console(cli_ctx *ctx, int argc, char **argv)
{
	console_opts o;
	cleanup_engine *e = NULL;
	cleanup_error err;
	char dbname[128], *ro = NULL;
	const char *db_given = ctx->db;
	int i, rc;

	memset(&o, 0, sizeof o);
	for (i = 1; i < argc; i++) {
		bool missing = false;
		const char *v;

		if (strcmp(argv[i], "--readonly") == 0 || strcmp(argv[i], "--read-only") == 0) {
			o.readonly = true;
		} else if ((v = cli_opt(argc, argv, &i, "--theme", &missing)) || missing) {
			if (missing)
				return cli_usage(ctx, &cmd_console_entry,
				                 "--theme needs a theme name (dark, light, high-contrast, monochrome) or a "
				                 "path to a FILE.theme");
			o.theme_name = v;
		} else if ((v = cli_opt(argc, argv, &i, "--refresh", &missing)) || missing) {
			int64_t ms;

			if (missing)
				return cli_usage(ctx, &cmd_console_entry, "--refresh needs milliseconds");
			if (!cli_parse_int(ctx, "--refresh", v, 100, 60000, &ms))
				return EXIT_USAGE;
			o.refresh_ms = (int)ms;
		} else {
			return cli_usage(ctx, &cmd_console_entry, "unexpected argument \"%s\"", argv[i]);
		}
	}
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
	"console", "[--readonly] [--theme NAME] [--refresh MS]", "the dashboard", exec_console,
};

/* More lines for `cleanupctl console --help` (main.c). */
const char cmd_console_help[] =
	"  --readonly               no action keys; every connection is read-only at the server\n"
	"  --theme NAME|FILE.theme  a theme name (~/.config/cleanupctl/themes, themes/) or a\n"
	"                           regular file ending in .theme owned by you or root (a path\n"
	"                           holds a '/', e.g. ./mine.theme); errors name the line and\n"
	"                           rule, never the file's text\n"
	"  --refresh MS             how often the panels are read, 100 to 60000 ms (default 1000)\n";
