/* cleanupctl install: installs or upgrades the embedded schema, in one
 * transaction, into allowlisted databases only. */
#include <stdio.h>
#include <string.h>
#include "cleanup/install.h"
#include "cli.h"

enum { INSTALL_VALIDATOR, INSTALL_REMOVE_VALIDATOR, INSTALL_DEFAULT_MODE, INSTALL__N };

const cli_option cmd_install_options[] = {
	[INSTALL_VALIDATOR] = {"--validator", "SCHEMA.FUNC",
	                       "record a validator FUNC(kind text, target_id bigint) RETURNS text that every job "
	                       "create asks (a reason refuses the job)", NULL},
	[INSTALL_REMOVE_VALIDATOR] = {"--remove-validator", "SCHEMA.FUNC", "stop asking a recorded validator", NULL},
	[INSTALL_DEFAULT_MODE] = {"--default-mode", "MODE",
	                          "what job create uses without --mode: bounded (the default) or single-transaction "
	                          "(remove-library only)", "bounded single-transaction"},
	[INSTALL__N] = {NULL, NULL, NULL, NULL},
};

static int exec_install(cli_ctx *ctx, int argc, char **argv)
{
	const char *values[INSTALL__N] = {0}, *pos[1];
	cleanup_install_options opts;
	cleanup_install_result r;
	cleanup_engine *e = NULL;
	cleanup_error err;
	int rc, npos;

	if (!cli_parse_options(ctx, &cmd_install_entry, cmd_install_options, argc, argv, 1, values, pos, 0, &npos))
		return EXIT_USAGE;
	if (values[INSTALL_DEFAULT_MODE] && strcmp(values[INSTALL_DEFAULT_MODE], "bounded") &&
	    strcmp(values[INSTALL_DEFAULT_MODE], "single-transaction"))
		return cli_usage(ctx, &cmd_install_entry, "--default-mode must be bounded or single-transaction, not \"%s\"",
		                 values[INSTALL_DEFAULT_MODE]);
	opts.validator = values[INSTALL_VALIDATOR];
	opts.remove_validator = values[INSTALL_REMOVE_VALIDATOR];
	opts.default_mode = values[INSTALL_DEFAULT_MODE];
	/* As pg_dump and pg_restore: no statement or lock timeout unless
	 * --timeout says so (a role's statement_timeout does not apply). */
	if (ctx->timeout_s < 0)
		cleanup_engine_defaults(0, 0);
	if ((rc = cli_connect(ctx, &e, false)))
		return rc;
	/* One transaction: Ctrl-C cancels it and the database is unchanged. */
	cli_interrupt_begin(e, false);
	rc = cleanup_install_with(&r, e, &opts, &err);
	cli_interrupt_end();
	if (rc != CLEANUP_OK) {
		rc = cli_interrupts() > 0 ? cli_fail_interrupted(ctx, &err, "install") : cli_fail(ctx, &err);
		cleanup_engine_close(e);
		return rc;
	}
	if (ctx->json) {
		printf("{\"database\": ");
		cli_json_string(stdout, cleanup_engine_dbname(e));
		printf(", \"from_version\": %d, \"to_version\": %d, \"migrations_applied\": %d, "
		       "\"functions_applied\": %s, \"contract_repaired\": %s, \"contract_drift\": ",
		       r.from_version, r.to_version, r.migrations_applied, r.functions_applied ? "true" : "false",
		       r.contract_repaired ? "true" : "false");
		if (r.contract_repaired)
			cli_json_string(stdout, r.drift);
		else
			printf("null");
		printf(", \"contract_kept\": ");
		if (r.contract_repaired)
			cli_json_string(stdout, r.kept);
		else
			printf("null");
		printf(", \"default_mode\": ");
		cli_json_string(stdout, r.default_mode);
		printf(", \"validators\": ");
		cli_json_string(stdout, r.validators);
		printf(", \"plan_changed\": %s", r.plan_changed ? "true" : "false");
		printf(", \"changed\": %s}\n",
		       r.migrations_applied || r.functions_applied || r.plan_changed ? "true" : "false");
		cleanup_engine_close(e);
		return EXIT_DONE;
	}
	if (r.plan_changed)
		printf("plan phase of %s: default mode %s; validators: %s\n", cleanup_engine_dbname(e), r.default_mode,
		       r.validators[0] ? r.validators : "none");
	if (r.contract_repaired && !r.kept[0]) {
		printf("schema contract drift in %s (%s) repaired: definitions applied again, contract recorded again\n",
		       cleanup_engine_dbname(e), r.drift);
	} else if (r.contract_repaired) {
		printf("schema contract drift in %s (%s): definitions applied again; not undone by them and now recorded "
		       "as the contract: %s (review it, e.g. cleanupctl deps)\n",
		       cleanup_engine_dbname(e), r.drift, r.kept);
	} else if (r.migrations_applied || r.functions_applied) {
		printf("installed schema version %d into %s (was %d; %d migrations, definitions %s)\n", r.to_version,
		       cleanup_engine_dbname(e), r.from_version, r.migrations_applied,
		       r.functions_applied ? "applied" : "unchanged");
	} else if (!r.plan_changed) {
		printf("schema version %d is already installed in %s; nothing changed\n", r.to_version,
		       cleanup_engine_dbname(e));
	}
	cleanup_engine_close(e);
	return EXIT_DONE;
}

const cli_command cmd_install_entry = {
	"install", "[--validator SCHEMA.FUNC] [--remove-validator SCHEMA.FUNC] [--default-mode MODE]",
	"install or upgrade the schema (allowlisted databases only)", exec_install,
};
