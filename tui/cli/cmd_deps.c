/* cleanupctl deps: foreign-key dependency evidence from the inventory
 * tables (seed 001). Evidence and proposed dispositions only. Table,
 * column and constraint names are whatever their creator chose (a quoted
 * identifier may hold an ESC), so they are sanitized for the terminal and
 * the --json document is printed with cli_json_doc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/deps.h"
#include "cli.h"
#include "sanitize.h"

typedef struct deps_opts {
	int64_t depth, tables, edges, ms;
	bool offline;
	const char *sql_dir;
} deps_opts;

static const cli_option deps_options[] = {
	CLI_ROW_INT("--max-depth", "N", "walk at most N foreign keys deep (1 to 64, default 16)", deps_opts, depth, 1,
	            64),
	CLI_ROW_INT("--max-tables", "N", "visit at most N tables (1 to 1024, default 64)", deps_opts, tables, 1, 1024),
	CLI_ROW_INT("--max-edges", "N", "follow at most N foreign keys (1 to 100000, default 4096)", deps_opts, edges, 1,
	            100000),
	CLI_ROW_INT("--max-ms", "MS", "stop the walk after MS milliseconds (1 to 600000, default 2000)", deps_opts, ms, 1,
	            600000),
	CLI_ROW_FLAG("--offline", "no database: read the schema from the SQL files", deps_opts, offline, 0),
	CLI_ROW_STRING("--sql-dir", "DIR", "with --offline: the sql/ directory to read", "@dir", deps_opts, sql_dir,
	               NULL),
	CLI_ROW_END,
};

static int exec_deps(cli_ctx *ctx, void *opts, const cli_args *a)
{
	const deps_opts *o = opts;
	const char *sql_dir = o->sql_dir;
	bool offline = o->offline;
	cleanup_dep_report r = {0};
	cleanup_dep_edge *edges;
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_dep_limits lim = CLEANUP_DEP_LIMITS_DEFAULT;
	size_t n = 0, i, unresolved = 0;
	int rc;

	(void)a;
	if (sql_dir && !offline)
		return cli_usage(ctx, &cmd_deps_entry, "--sql-dir needs --offline (the catalog report reads the database)");
	lim.max_depth = (int)o->depth;
	lim.max_tables = (int)o->tables;
	lim.max_edges = (int)o->edges;
	lim.max_ms = (int)o->ms;
	if (offline) {
		rc = cleanup_deps_offline(&r, sql_dir, &lim, &err);
	} else {
		if ((rc = cli_connect(ctx, &e, true)))
			return rc;
		rc = cleanup_deps_read(&r, e, &lim, &err);
	}
	if (rc != CLEANUP_OK) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	edges = r.edges;
	n = r.n;
	if (ctx->json) {
		cli_json_doc(stdout, r.json);
		putchar('\n');
		rc = EXIT_DONE;
		goto out;
	}
	if (offline) {
		printf("Offline snapshot of ");
		tui_fputs_safe(r.source, stdout);
		printf("\n(no database read: columns as declared; validation, enforcement, indexes, triggers and row "
		       "security not assessed)\n\n");
	}
	printf("%-5s %-38s %-32s %-12s %-5s %s\n", "DEPTH", "REFERENCING", "REFERENCES", "ON DELETE", "INDEX",
	       "DISPOSITION");
	for (i = 0; i < n; i++) {
		char from[340], to[340], cfrom[512], cto[512], del[64], disp[256];

		snprintf(from, sizeof from, "%s(%s)", edges[i].referencing, edges[i].referencing_columns);
		snprintf(to, sizeof to, "%s(%s)", edges[i].referenced, edges[i].referenced_columns);
		printf("%-5d %s %s %s %-5s %s%s\n", edges[i].depth, tui_sanitize_cell(cfrom, sizeof cfrom, from, 38),
		       tui_sanitize_cell(cto, sizeof cto, to, 32), tui_sanitize_cell(del, sizeof del, edges[i].on_delete, 12),
		       offline ? "-" : edges[i].has_index ? "yes" : strcmp(edges[i].index_status, "absent") == 0 ? "NO" : "?",
		       tui_sanitize(disp, sizeof disp, edges[i].disposition), edges[i].cycle ? " [cycle]" : "");
		if (!offline && (!edges[i].validated || !edges[i].enforced || edges[i].row_security)) {
			char ri[512];

			printf("      %s%s%s%s\n", edges[i].validated ? "" : "[not validated] ",
			       edges[i].enforced ? "" : "[not enforced: RI triggers ",
			       edges[i].enforced ? "" : tui_sanitize(ri, sizeof ri, edges[i].ri_triggers),
			       edges[i].enforced ? (edges[i].row_security ? "[row security]" : "")
			                         : (edges[i].row_security ? "] [row security]" : "]"));
		}
		if (edges[i].disposition[0] == 'u')
			unresolved++;
	}
	for (i = 0; i < r.ngaps; i++) {
		char gap[1400];

		printf("%sgap: %s\n", i ? "" : "\n", tui_sanitize(gap, sizeof gap, r.gaps[i].summary));
	}
	printf("\n%zu edges, %zu unresolved, %zu gap(s); limits: depth %d, tables %d, edges %d, %d ms; walked in "
	       "%.1f ms\nfingerprint ", n, unresolved, r.ngaps, lim.max_depth, lim.max_tables, lim.max_edges, lim.max_ms,
	       r.elapsed_ms);
	tui_fputs_safe(r.fingerprint, stdout);
	putchar('\n');
	if (offline)
		for (i = 0; cleanup_deps_parser_limits[i]; i++)
			printf("%s%s\n", i ? "  - " : "Parser limits:\n  - ", cleanup_deps_parser_limits[i]);
	printf("Evidence only: a matching fingerprint authorizes no deletion.\n");
	rc = EXIT_DONE;
out:
	cleanup_deps_report_free(&r);
	cleanup_engine_close(e);
	return rc;
}

const cli_command cmd_deps_entry = {
	"deps", "", "foreign-key dependency evidence, walked with a visited set; gaps name what limits and cycles left out",
	exec_deps, deps_options, CLI_DEFAULTS(deps_opts, 16, 64, 4096, 2000, false, NULL),
};
