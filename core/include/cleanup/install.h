/* Installing and upgrading the schema embedded from sql/.
 *
 * The installer writes only to allowlisted databases (B2): names that are
 * exactly "cleanup_lab" (the sandbox's database) or begin with
 * "cleanup_lab_". Everything runs in one transaction; a second run with the
 * same bundle changes nothing, unless the live schema drifted from the
 * recorded schema contract (seed 001): then the definitions are applied
 * again and the contract recorded again, and the result says so.
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
	bool functions_applied; /* definitions (re)applied: bundle changed, or contract drift */
	bool contract_repaired; /* the bundle was unchanged but the live schema had drifted from
	                         * the recorded contract: definitions applied, contract recorded */
	char drift[256];        /* the components that had drifted (when contract_repaired) */
	char kept[256];         /* of those, the ones re-applying the definitions did not undo:
	                         * recorded as the new contract ("" when all were undone) */
} cleanup_install_result;

/* Installs or upgrades the schema in ENGINE's database, in one transaction
 * under an advisory lock. With the same bundle already installed it
 * compares the recorded schema contract with the live schema and, on
 * drift, applies the definitions again (restoring guards such as a
 * disabled trigger) and records the contract again (accepting what the
 * definitions do not undo, such as a new foreign key). EREFUSED (exit 4)
 * when the database name is not allowlisted, with a message naming it and
 * the rule; nothing is changed. */
int cleanup_install(cleanup_install_result *out, cleanup_engine *engine, cleanup_error *err);

/* Checks that ENGINE's database carries this binary's schema. EREFUSED with
 * a hint to run `cleanupctl install` when it does not. */
int cleanup_schema_check(cleanup_engine *engine, cleanup_error *err);

#endif
