/* Installing and upgrading the schema embedded from sql/.
 *
 * The installer writes only to allowlisted databases (B2): names that are
 * exactly "cleanup_lab" (the sandbox's database) or begin with
 * "cleanup_lab_". Everything runs in one transaction; a second run with the
 * same bundle changes nothing.
 */
#ifndef CLEANUP_INSTALL_H
#define CLEANUP_INSTALL_H

#include <stdbool.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

/* The schema version this binary carries (highest sql/schema/NNN). */
int cleanup_schema_version(void);

/* True when DBNAME is on the installer's allowlist. Pure. */
bool cleanup_db_allowed(const char *dbname);

/* The allowlist rule, for messages and docs. */
const char *cleanup_db_allowlist_rule(void);

typedef struct cleanup_install_result {
	int from_version;      /* 0 on a fresh database */
	int to_version;
	int migrations_applied;
	bool functions_applied; /* definitions (re)applied: bundle changed */
} cleanup_install_result;

/* Installs or upgrades the schema in ENGINE's database, in one transaction
 * under an advisory lock. EREFUSED (exit 4) when the database name is not
 * allowlisted, with a message naming it and the rule; nothing is changed. */
int cleanup_install(cleanup_install_result *out, cleanup_engine *engine, cleanup_error *err);

/* Checks that ENGINE's database carries this binary's schema. EREFUSED with
 * a hint to run `cleanupctl install` when it does not. */
int cleanup_schema_check(cleanup_engine *engine, cleanup_error *err);

#endif
