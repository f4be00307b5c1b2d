/* cleanupctl seed: demo servers, libraries and items (set-based SQL). */
#include <inttypes.h>
#include <stdio.h>
#include "cleanup/seed.h"
#include "cli.h"

typedef struct seed_opts {
	int64_t servers, libraries, items, dependents;
} seed_opts;

static const cli_option seed_options[] = {
	CLI_ROW_INT("--servers", "N", "servers to create (0 to 1000, default 3)", seed_opts, servers, 0, 1000),
	CLI_ROW_INT("--libraries", "N", "libraries per server (0 to 1000, default 3)", seed_opts, libraries, 0, 1000),
	CLI_ROW_INT("--items", "N", "items per library (0 to 100000000, default 1000)", seed_opts, items, 0, 100000000),
	CLI_ROW_INT("--dependents", "N", "lab dependent rows per item (0 to 50), with a spread", seed_opts, dependents,
	            0, 50),
	CLI_ROW_END,
};

static int exec_seed(cli_ctx *ctx, void *opts, const cli_args *a)
{
	const seed_opts *o = opts;
	cleanup_seed_spec spec;
	cleanup_seed_result r;
	cleanup_engine *e = NULL;
	cleanup_error err;
	int rc;

	(void)a;
	spec.servers = (int)o->servers;
	spec.libraries = (int)o->libraries;
	spec.items = o->items;
	spec.dependents = (int)o->dependents;
	/* One statement, one transaction: Ctrl-C cancels it, nothing stays. */
	if ((rc = cli_untimed_begin(ctx, &e, true)) ||
	    (rc = cli_untimed_end(ctx, e, cleanup_seed(&r, e, &spec, &err), &err, "seed")))
		return rc;
	if (ctx->json)
		printf("{\"servers\": %d, \"libraries\": %d, \"items\": %" PRId64 ", \"dependents\": %" PRId64
		       ", \"seconds\": %.3f}\n",
		       r.servers, r.libraries, r.items, r.dependents, r.seconds);
	else
		printf("seeded %d servers, %d libraries, %" PRId64 " items, %" PRId64 " dependent records in %.2f s\n",
		       r.servers, r.libraries, r.items, r.dependents, r.seconds);
	cleanup_engine_close(e);
	return EXIT_DONE;
}

const cli_command cmd_seed_entry = {
	"seed", "", "demo data: N servers, libraries per server, items per library, dependent records per item (0-50)",
	exec_seed, seed_options, CLI_DEFAULTS(seed_opts, 3, 3, 1000, 0),
};
