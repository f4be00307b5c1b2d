/* cleanupctl deps: foreign-key dependency evidence from the inventory
 * tables (seed 001). Evidence and proposed dispositions only. Table,
 * column and constraint names are whatever their creator chose (a quoted
 * identifier may hold an ESC), so they are sanitized for the terminal and
 * the --json document is printed with cli_json_doc. */
#include <stdio.h>
#include <stdlib.h>
#include "cleanup/deps.h"
#include "cli.h"
#include "sanitize.h"

static int exec_deps(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_dep_edge *edges = NULL;
	cleanup_engine *e = NULL;
	cleanup_error err;
	char fingerprint[65] = "", *json = NULL;
	int64_t depth = 16, tables = 64;
	size_t n = 0, i, unresolved = 0;
	int rc;

	if (!cli_no_repeats(ctx, &cmd_deps_entry, argc, argv, 1))
		return EXIT_USAGE;
	for (int a = 1; a < argc; a++) {
		bool missing = false;
		const char *v;

		if ((v = cli_opt(argc, argv, &a, "--max-depth", &missing))) {
			if (!cli_parse_int(ctx, "--max-depth", v, 1, 64, &depth))
				return EXIT_USAGE;
		} else if ((v = cli_opt(argc, argv, &a, "--max-tables", &missing))) {
			if (!cli_parse_int(ctx, "--max-tables", v, 1, 1024, &tables))
				return EXIT_USAGE;
		} else {
			return cli_usage(ctx, &cmd_deps_entry, missing ? "%s needs a value" : "unexpected argument \"%s\"",
			                 argv[a]);
		}
	}
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	rc = cleanup_deps(&edges, &n, ctx->json ? &json : NULL, fingerprint, e, (int)depth, (int)tables, &err);
	if (rc != CLEANUP_OK) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json) {
		cli_json_doc(stdout, json);
		putchar('\n');
		rc = EXIT_DONE;
		goto out;
	}
	printf("%-5s %-38s %-32s %-12s %-5s %s\n", "DEPTH", "REFERENCING", "REFERENCES", "ON DELETE", "INDEX",
	       "DISPOSITION");
	for (i = 0; i < n; i++) {
		char from[340], to[340], cfrom[512], cto[512], del[64], disp[256];

		snprintf(from, sizeof from, "%s(%s)", edges[i].referencing, edges[i].referencing_columns);
		snprintf(to, sizeof to, "%s(%s)", edges[i].referenced, edges[i].referenced_columns);
		printf("%-5d %s %s %s %-5s %s%s\n", edges[i].depth, tui_sanitize_cell(cfrom, sizeof cfrom, from, 38),
		       tui_sanitize_cell(cto, sizeof cto, to, 32), tui_sanitize_cell(del, sizeof del, edges[i].on_delete, 12),
		       edges[i].has_index ? "yes" : "NO", tui_sanitize(disp, sizeof disp, edges[i].disposition),
		       edges[i].cycle ? " [cycle]" : "");
		if (edges[i].disposition[0] == 'u')
			unresolved++;
	}
	printf("\n%zu edges, %zu unresolved; fingerprint ", n, unresolved);
	tui_fputs_safe(fingerprint, stdout);
	putchar('\n');
	printf("Evidence only: a matching fingerprint authorizes no deletion.\n");
	rc = EXIT_DONE;
out:
	free(edges);
	free(json);
	cleanup_engine_close(e);
	return rc;
}

const cli_command cmd_deps_entry = {
	"deps", "[--max-depth N] [--max-tables N]", "foreign-key dependency evidence", exec_deps,
};
