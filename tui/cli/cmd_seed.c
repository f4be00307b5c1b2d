/* cleanupctl seed: demo servers, libraries and items (set-based SQL). */
#include <inttypes.h>
#include <stdio.h>
#include "cleanup/seed.h"
#include "cli.h"

static int exec_seed(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_seed_spec spec = {3, 3, 1000, 0};
	cleanup_seed_result r;
	cleanup_engine *e = NULL;
	cleanup_error err;
	int64_t v;
	int i, rc;

	if (!cli_no_repeats(ctx, &cmd_seed_entry, argc, argv, 1))
		return EXIT_USAGE;
	for (i = 1; i < argc; i++) {
		bool missing = false;
		const char *val;

		if ((val = cli_opt(argc, argv, &i, "--servers", &missing))) {
			if (!cli_parse_int(ctx, "--servers", val, 0, 1000, &v))
				return EXIT_USAGE;
			spec.servers = (int)v;
		} else if ((val = cli_opt(argc, argv, &i, "--libraries", &missing))) {
			if (!cli_parse_int(ctx, "--libraries", val, 0, 1000, &v))
				return EXIT_USAGE;
			spec.libraries = (int)v;
		} else if ((val = cli_opt(argc, argv, &i, "--items", &missing))) {
			if (!cli_parse_int(ctx, "--items", val, 0, 100000000, &v))
				return EXIT_USAGE;
			spec.items = v;
		} else if ((val = cli_opt(argc, argv, &i, "--dependents", &missing))) {
			if (!cli_parse_int(ctx, "--dependents", val, 0, 50, &v))
				return EXIT_USAGE;
			spec.dependents = (int)v;
		} else {
			return cli_usage(ctx, &cmd_seed_entry, missing ? "%s needs a value" : "unexpected argument \"%s\"",
			                 argv[i]);
		}
	}
	/* As install: no timeouts unless --timeout says so. */
	if (ctx->timeout_s < 0)
		cleanup_engine_defaults(0, 0);
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	/* One statement, one transaction: Ctrl-C cancels it, nothing stays. */
	cli_interrupt_begin(e, false);
	rc = cleanup_seed(&r, e, &spec, &err);
	cli_interrupt_end();
	if (rc != CLEANUP_OK) {
		rc = cli_interrupts() > 0 ? cli_fail_interrupted(ctx, &err, "seed") : cli_fail(ctx, &err);
		cleanup_engine_close(e);
		return rc;
	}
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
	"seed", "[--servers N] [--libraries N] [--items N] [--dependents N]",
	"demo data: N servers, libraries per server, items per library, dependent records per item (0-50)",
	exec_seed,
};
