/* cleanupctl install: installs or upgrades the embedded schema, in one
 * transaction, into allowlisted databases only. */
#include <stdio.h>
#include <string.h>
#include "cleanup/install.h"
#include "cli.h"

static const cli_option install_options[] = {
	CLI_ROW_STRING("--validator", "SCHEMA.FUNC",
	               "record a validator FUNC(kind text, target_id bigint) RETURNS text that every job create asks (a "
	               "reason refuses the job)", NULL, cleanup_install_options, validator, NULL),
	CLI_ROW_STRING("--remove-validator", "SCHEMA.FUNC", "stop asking a recorded validator", NULL,
	               cleanup_install_options, remove_validator, NULL),
	{"--default-mode", "MODE",
	 "what job create uses without --mode: bounded (the default) or single-transaction (remove-library only)",
	 "bounded single-transaction", CLI_ENUM, offsetof(cleanup_install_options, default_mode), 0, 0, 0, NULL, NULL},
	CLI_ROW_END,
};

static int exec_install(cli_ctx *ctx, void *opts, const cli_args *a)
{
	cleanup_install_result r;
	cleanup_engine *e = NULL;
	cleanup_error err;
	int rc;

	(void)a;
	/* One transaction: Ctrl-C cancels it and the database is unchanged. */
	if ((rc = cli_untimed_begin(ctx, &e, false)) ||
	    (rc = cli_untimed_end(ctx, e, cleanup_install_with(&r, e, opts, &err), &err, "install")))
		return rc;
	if (ctx->json) {
		printf("{\"database\": ");
		cli_json_string(stdout, cleanup_engine_dbname(e));
		printf(", \"from_version\": %d, \"to_version\": %d, \"migrations_applied\": %d, "
		       "\"functions_applied\": %s, \"contract_repaired\": %s, \"contract_drift\": ",
		       r.from_version, r.to_version, r.migrations_applied, r.functions_applied ? "true" : "false",
		       r.contract_repaired ? "true" : "false");
		cli_json_string_or_null(stdout, r.contract_repaired ? r.drift : NULL);
		printf(", \"contract_kept\": ");
		cli_json_string_or_null(stdout, r.contract_repaired ? r.kept : NULL);
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
	"install", "", "install or upgrade the schema (allowlisted databases only)", exec_install, install_options,
	CLI_DEFAULTS(cleanup_install_options, 0),
};
