/* Installing and upgrading the schema embedded from sql/.
 *
 * The installer writes only to allowlisted databases (B2): names that are
 * exactly "cleanup_lab" (the sandbox's database) or begin with
 * "cleanup_lab_". Everything runs in one transaction; a second run with the
 * same bundle changes nothing, unless the live schema drifted from the
 * recorded schema contract (seed 001): then the definitions are applied
 * again and the contract recorded again, and the result says so. Drift no
 * contract may record is refused instead (T6, CU460).
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
	char drift[256];        /* the components that had drifted (when contract_repaired),
	                         * "privileges" among them when schema cleanup carried grants
	                         * the privilege model did not make (docs/roles.md) */
	char kept[256];         /* of those, the ones re-applying the definitions did not undo:
	                         * recorded as the new contract ("" when all were undone) */
	bool plan_changed;      /* a validator recorded or removed, or the default mode changed */
	char default_mode[32];  /* the default mode of `job create` after the install */
	char validators[512];   /* the recorded validators after the install, ", "-separated
	                         * signatures ("" when none; cut at a name when too long) */
} cleanup_install_result;

/* The plan phase's settings an install records (seed 004;
 * migration 014_plan.sql): NULL members leave things as they are. */
typedef struct cleanup_install_options {
	const char *validator;        /* SCHEMA.FUNC(kind text, target_id bigint) RETURNS text to record:
	                               * every `job create` asks it (a reason refuses, CU461) */
	const char *remove_validator; /* SCHEMA.FUNC to stop asking */
	const char *default_mode;     /* "bounded" or "single-transaction": what `job create`
	                               * uses without --mode (the rollout switch) */
} cleanup_install_options;

/* Installs or upgrades the schema in ENGINE's database, in one transaction
 * under an advisory lock. With the same bundle already installed it
 * compares the recorded schema contract with the live schema and, on
 * drift, applies the definitions again (restoring a replaced engine
 * function) and records the contract again (accepting what the
 * definitions do not undo, such as a new column); privileges on
 * schema cleanup granted by hand count as drift and are revoked. The
 * definitions end with the privilege model (roles created when missing,
 * objects owned by cleanup_owner: a superuser, cleanup_owner or a member
 * of it installs). EREFUSED (exit 4)
 * when the database name is not allowlisted, with a message naming it and
 * the rule; nothing is changed. */
int cleanup_install(cleanup_install_result *out, cleanup_engine *engine, cleanup_error *err);

/* cleanup_install() that also records OPTS (NULL: none) in the same
 * transaction, after the definitions. A validator that is not a function
 * SCHEMA.FUNC(text, bigint) returning text, owned by cleanup_owner or a
 * superuser, a validator to remove that is not recorded, or another mode:
 * EINVAL (CU102, exit 2) naming it, and nothing of the install is
 * committed. Drift that no contract may record (T6: a cascade anywhere in
 * the inventory's foreign-key graph, a disabled foreign key or guard
 * trigger, a foreign trigger, a child table, changed settings of an engine
 * function) refuses any install: EREFUSED, CU460, the object named,
 * nothing changed (sql/functions/096_drift.sql). */
int cleanup_install_with(cleanup_install_result *out, cleanup_engine *engine, const cleanup_install_options *opts,
                         cleanup_error *err);

/* Checks that ENGINE's database carries this binary's schema. EREFUSED with
 * a hint to run `cleanupctl install` when it does not. */
int cleanup_schema_check(cleanup_engine *engine, cleanup_error *err);

/* The privilege model the installer sets up (sql/functions/098_privileges.sql,
 * docs/roles.md): four NOLOGIN roles, cluster-wide; login roles are made
 * members of them. */
#define CLEANUP_ROLE_OWNER "cleanup_owner"     /* owns schemas cleanup and inventory */
#define CLEANUP_ROLE_RUNNER "cleanup_runner"   /* the job API and what reports read */
#define CLEANUP_ROLE_WRITER "cleanup_writer"   /* a sync writer: inventory only */
#define CLEANUP_ROLE_CONSOLE "cleanup_console" /* read-only: reports and the console */

/* Builds in *OUT a conninfo string that connects like CONNINFO (NULL or "":
 * libpq's environment; a bare word is a database name; key=value strings
 * and postgresql:// URIs are parsed) but makes every transaction of the
 * session read-only at the server: "-c default_transaction_read_only=on"
 * is appended to the options the connection would otherwise have (those
 * of CONNINFO, else PGOPTIONS), after them, so it wins over a setting of
 * its own there. (Options a service file would supply are not merged.)
 * A client can still switch it off in its session: it guards against
 * accidents, the cleanup_console role is the boundary. On success *OUT is
 * malloc'd (the caller frees it); EINVAL names a conninfo libpq cannot
 * parse, with libpq's reason. */
int cleanup_conninfo_readonly(char **out, const char *conninfo, cleanup_error *err);

#endif
