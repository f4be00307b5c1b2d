/* The installer: applies the embedded migrations and definitions in one
 * transaction, only to allowlisted databases (B2); the definitions end
 * with the privilege model (098_privileges.sql), whose read-only
 * connection string for the console is built here too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/install.h"
#include "engine_int.h"
#include "strbuf_int.h"

#define ALLOW_EXACT "cleanup_lab"
#define ALLOW_PREFIX "cleanup_lab_"
/* The definitions of the drift check (T6), run before anything else. */
#define DRIFT_FILE "096_drift"

int cleanup_schema_version(void)
{
	int v = 0, i;

	for (i = 0; i < sql_schema_count; i++)
		if (sql_schema_files[i].version > v)
			v = sql_schema_files[i].version;
	return v;
}

bool cleanup_db_allowed(const char *db)
{
	size_t i, n;

	if (!db)
		return false;
	if (strcmp(db, ALLOW_EXACT) == 0)
		return true;
	n = strlen(ALLOW_PREFIX);
	if (strncmp(db, ALLOW_PREFIX, n) != 0 || db[n] == '\0' || strlen(db) > 63)
		return false;
	for (i = n; db[i]; i++)
		if (!((db[i] >= 'a' && db[i] <= 'z') || (db[i] >= '0' && db[i] <= '9') || db[i] == '_'))
			return false;
	return true;
}

const char *cleanup_db_allowlist_rule(void)
{
	return "the installer writes only to databases named cleanup_lab or cleanup_lab_<suffix> "
	       "(suffix of lower-case letters, digits and _, 63 bytes in all)";
}

static int read_version(int *version, char *sha, size_t shalen, cleanup_engine *e, cleanup_error *err)
{
	PGresult *res = NULL;
	int rc;

	*version = 0;
	sha[0] = '\0';
	rc = engine_query(&res, e, CLEANUP_Q_INSTALL_PRESENT, 0, NULL, "reading the schema version", err);
	if (rc != CLEANUP_OK)
		return rc;
	if (strcmp(col_text(res, 0, "present"), "t") == 0) {
		PQclear(res);
		res = NULL;
		rc = engine_query(&res, e, CLEANUP_Q_INSTALL_VERSION, 0, NULL, "reading the schema version", err);
		if (rc != CLEANUP_OK)
			return rc;
		if (PQntuples(res) == 1) {
			*version = (int)col_int64(res, 0, "version");
			col_copy(sha, shalen, res, 0, "bundle_sha256");
		}
	}
	PQclear(res);
	return CLEANUP_OK;
}

/* With the bundle unchanged: compares the recorded schema contract with
 * the live schema. Sets OUT->drift (empty: none) and *RECORDED (malloc'd
 * text of the recorded components, NULL when none) for the caller to
 * report what a repair kept. */
static int contract_drift(cleanup_install_result *out, char **recorded, cleanup_engine *e, cleanup_error *err)
{
	PGresult *res = NULL;
	bool can_compare;
	int rc;

	*recorded = NULL;
	out->drift[0] = '\0';
	rc = engine_query(&res, e, CLEANUP_Q_INSTALL_CONTRACT_STATE, 0, NULL, "reading the schema contract", err);
	if (rc != CLEANUP_OK)
		return rc;
	can_compare = strcmp(col_text(res, 0, "can_compare"), "t") == 0;
	if (!PQgetisnull(res, 0, PQfnumber(res, "recorded")) &&
	    !(*recorded = engine_strdup(col_text(res, 0, "recorded"), err))) {
		PQclear(res);
		return CLEANUP_ENOMEM;
	}
	PQclear(res);
	res = NULL;
	if (!can_compare) {
		/* The comparison itself is gone: a replaced or dropped engine function. */
		snprintf(out->drift, sizeof out->drift, "functions");
		return CLEANUP_OK;
	}
	rc = engine_query(&res, e, CLEANUP_Q_INSTALL_CONTRACT_DRIFT, 0, NULL, "comparing the schema contract", err);
	if (rc == CLEANUP_OK)
		col_copy(out->drift, sizeof out->drift, res, 0, "drift");
	PQclear(res);
	return rc;
}

/* T6, before anything is applied: drift that no contract may record (a
 * cascade anywhere in the inventory's foreign-key graph, a disabled
 * foreign key or guard trigger, a foreign trigger, a child table, changed
 * engine function settings: 096_drift.sql) refuses the install, CU460,
 * naming it. Looked at on the schema as found, because applying the
 * definitions again would re-create a disabled guard and reset changed
 * settings without anyone being told. The check is this bundle's: its
 * file is applied in a savepoint, run, and rolled back (an older
 * installed check could otherwise refuse the very upgrade that mends it).
 * Schemas without a recorded contract (before migration 4) skip it;
 * 099_contract_record.sql checks the rest once the definitions are
 * applied. */
static int drift_refusals(cleanup_engine *e, cleanup_error *err)
{
	const char *file = NULL;
	int rc, i;

	for (i = 0; i < sql_function_count; i++)
		if (strcmp(sql_function_files[i].name, DRIFT_FILE) == 0)
			file = sql_function_files[i].text;
	if (!file)
		return cleanup_error_set(err, CLEANUP_ERROR, "the bundle has no %s", DRIFT_FILE);
	if ((rc = engine_script(e, "SAVEPOINT cleanup_drift", "looking for drift", err)))
		return rc;
	if ((rc = engine_script(e, file, "looking for drift", err)))
		return rc;
	if ((rc = engine_command(e, CLEANUP_Q_INSTALL_DRIFT_REFUSALS, 0, NULL, "looking for drift", err)))
		return rc;
	return engine_script(e, "ROLLBACK TO SAVEPOINT cleanup_drift", "looking for drift", err);
}

/* With the bundle unchanged: privileges on schema cleanup that the
 * privilege model did not grant (say, UPDATE on the admission rows given
 * by hand to a writer: defect 4), or objects no longer owned by
 * cleanup_owner. Appends "privileges" to OUT->drift when there are any;
 * applying the definitions again (098_privileges.sql) revokes them. */
static int privileges_drift(cleanup_install_result *out, cleanup_engine *e, cleanup_error *err)
{
	PGresult *res = NULL;
	size_t l;
	int rc;

	rc = engine_query(&res, e, CLEANUP_Q_INSTALL_PRIVILEGES_DRIFT, 0, NULL, "comparing the privileges", err);
	if (rc == CLEANUP_OK && !PQgetisnull(res, 0, 0)) {
		l = strlen(out->drift);
		snprintf(out->drift + l, sizeof out->drift - l, "%sprivileges", l ? ", " : "");
	}
	PQclear(res);
	return rc;
}

/* The plan phase's settings (migration 014_plan.sql): records OPTS, then
 * reads what is recorded into OUT. In the install transaction. */
static int plan_settings(cleanup_install_result *out, cleanup_engine *e, const cleanup_install_options *opts,
                         cleanup_error *err)
{
	PGresult *res = NULL;
	const char *params[3];
	int rc;

	params[0] = opts ? opts->validator : NULL;
	params[1] = opts ? opts->remove_validator : NULL;
	params[2] = opts ? opts->default_mode : NULL;
	rc = engine_query(&res, e, CLEANUP_Q_INSTALL_PLAN, 3, params, "recording the plan phase's settings", err);
	if (rc == CLEANUP_OK) {
		out->plan_changed = strcmp(col_text(res, 0, "changed"), "t") == 0;
		col_copy(out->default_mode, sizeof out->default_mode, res, 0, "default_mode");
		col_copy(out->validators, sizeof out->validators, res, 0, "validators");
	}
	PQclear(res);
	return rc;
}

int cleanup_install(cleanup_install_result *out, cleanup_engine *e, cleanup_error *err)
{
	return cleanup_install_with(out, e, NULL, err);
}

int cleanup_install_with(cleanup_install_result *out, cleanup_engine *e, const cleanup_install_options *opts,
                         cleanup_error *err)
{
	const char *db = cleanup_engine_dbname(e);
	int target = cleanup_schema_version(), version = 0, rc, i;
	char sha[80], ctx[160], verbuf[16];
	const char *params[2];
	char *recorded = NULL;
	PGresult *res = NULL;
	bool in_tx = false;

	memset(out, 0, sizeof *out);
	cleanup_error_clear(err);
	if (!cleanup_db_allowed(db)) {
		rc = cleanup_error_set(err, CLEANUP_EREFUSED,
		                       "database \"%s\" is not on the allowlist: %s; nothing was changed", db,
		                       cleanup_db_allowlist_rule());
		cleanup_error_hint(err, "create a disposable database, e.g. CREATE DATABASE cleanup_lab_demo, or use the "
		                        "sandbox: cleanupctl sandbox start");
		return rc;
	}
	rc = engine_begin(e, "BEGIN", "starting the install transaction", err);
	if (rc != CLEANUP_OK)
		goto out;
	in_tx = true;
	if ((rc = engine_command(e, CLEANUP_Q_INSTALL_LOCK, 0, NULL, "locking the installer", err)) ||
	    (rc = engine_command(e, CLEANUP_Q_INSTALL_SCHEMA, 0, NULL, "creating schema cleanup", err)) ||
	    (rc = read_version(&version, sha, sizeof sha, e, err)))
		goto out;
	out->from_version = version;
	out->to_version = version;
	if (version > target) {
		rc = cleanup_error_set(err, CLEANUP_EREFUSED,
		                       "database \"%s\" carries schema version %d, newer than this binary's %d; nothing was changed",
		                       db, version, target);
		goto out;
	}
	if (version >= 4 && (rc = drift_refusals(e, err)))
		goto out;
	for (i = 0; i < sql_schema_count; i++) {
		if (sql_schema_files[i].version <= version)
			continue;
		snprintf(ctx, sizeof ctx, "applying migration %s", sql_schema_files[i].name);
		if ((rc = engine_script(e, sql_schema_files[i].text, ctx, err)))
			goto out;
		out->migrations_applied++;
	}
	if (out->migrations_applied == 0 && strcmp(sha, sql_bundle_sha256) == 0) {
		/* Same bundle: anything to repair? (seed 001: a drifted contract
		 * stops every step until the installer records it again.) */
		if ((rc = contract_drift(out, &recorded, e, err)))
			goto out;
		if ((rc = privileges_drift(out, e, err)))
			goto out;
		out->contract_repaired = out->drift[0] != '\0';
	}
	if (out->migrations_applied > 0 || strcmp(sha, sql_bundle_sha256) != 0 || out->contract_repaired) {
		/* Definitions may refer to each other in any order across files
		 * (as pg_dump output does): SQL function bodies are checked when
		 * first run, not at CREATE. The tests run every one of them. */
		if ((rc = engine_script(e, "SET LOCAL check_function_bodies = off", "installing definitions", err)))
			goto out;
		for (i = 0; i < sql_function_count; i++) {
			snprintf(ctx, sizeof ctx, "applying definitions %s", sql_function_files[i].name);
			if ((rc = engine_script(e, sql_function_files[i].text, ctx, err)))
				goto out;
		}
		out->functions_applied = true;
		snprintf(verbuf, sizeof verbuf, "%d", target);
		params[0] = verbuf;
		params[1] = sql_bundle_sha256;
		if ((rc = engine_command(e, CLEANUP_Q_INSTALL_RECORD, 2, params, "recording the schema version", err)))
			goto out;
		if (out->contract_repaired) {
			params[0] = recorded;
			if ((rc = engine_query(&res, e, CLEANUP_Q_INSTALL_CONTRACT_KEPT, 1, params,
			                       "comparing the repaired schema contract", err)))
				goto out;
			col_copy(out->kept, sizeof out->kept, res, 0, "kept");
			PQclear(res);
			res = NULL;
		}
	}
	out->to_version = target;
	if ((rc = plan_settings(out, e, opts, err)))
		goto out;
	if ((rc = engine_command(e, CLEANUP_Q_INSTALL_FAILPOINT, 0, NULL, "before committing the install", err)))
		goto out;
	rc = engine_script(e, "COMMIT", "committing the install", err);
	in_tx = false;
out:
	PQclear(res);
	free(recorded);
	if (in_tx)
		engine_script(e, "ROLLBACK", "rolling back the install", NULL);
	if (rc != CLEANUP_OK)
		out->contract_repaired = false;
	return rc;
}

int cleanup_schema_check(cleanup_engine *e, cleanup_error *err)
{
	int version = 0, rc;
	char sha[80];

	rc = read_version(&version, sha, sizeof sha, e, err);
	if (rc != CLEANUP_OK)
		return rc;
	if (version == 0) {
		rc = cleanup_error_set(err, CLEANUP_EREFUSED, "database \"%s\" has no cleanup schema",
		                       cleanup_engine_dbname(e));
		cleanup_error_hint(err, "run: cleanupctl install");
		return rc;
	}
	if (version != cleanup_schema_version() || strcmp(sha, sql_bundle_sha256) != 0) {
		rc = cleanup_error_set(err, CLEANUP_EREFUSED,
		                       "database \"%s\" carries schema version %d (bundle %.12s), this binary expects %d (bundle %.12s)",
		                       cleanup_engine_dbname(e), version, sha, cleanup_schema_version(),
		                       sql_bundle_sha256);
		if (err)
			snprintf(err->sqlstate, sizeof err->sqlstate, "CU403");
		cleanup_error_hint(err, "run: cleanupctl install");
		return rc;
	}
	return CLEANUP_OK;
}

/* Appends " KEY='VALUE'" with ' and \ escaped (libpq's conninfo quoting). */
static void sb_keyval(strbuf *b, const char *key, const char *val)
{
	const char *s;

	if (b->len)
		strbuf_put(b, " ", 1);
	strbuf_put(b, key, strlen(key));
	strbuf_put(b, "='", 2);
	for (s = val; *s; s++) {
		if (*s == '\'' || *s == '\\')
			strbuf_put(b, "\\", 1);
		strbuf_put(b, s, 1);
	}
	strbuf_put(b, "'", 1);
}

/* True when libpq reads S as a connection string (key=value or a URI),
 * not as a bare database name (libpq's recognized_connection_string()). */
static bool is_conninfo_string(const char *s)
{
	return strncmp(s, "postgresql://", 13) == 0 || strncmp(s, "postgres://", 11) == 0 || strchr(s, '=') != NULL;
}

#define READONLY_OPTION "-c default_transaction_read_only=on"

int cleanup_conninfo_readonly(char **out, const char *conninfo, cleanup_error *err)
{
	PQconninfoOption *opts = NULL, *o;
	const char *options = NULL;
	char *perr = NULL;
	strbuf b = {0};
	int rc = CLEANUP_OK;

	*out = NULL;
	cleanup_error_clear(err);
	if (conninfo && *conninfo && is_conninfo_string(conninfo)) {
		opts = PQconninfoParse(conninfo, &perr);
		if (!opts) {
			char why[CLEANUP_ERR_TEXT / 2], shown[CLEANUP_ERR_TEXT / 2];
			size_t l;

			/* Neither the conninfo nor libpq's complaint may show its
			 * password (docs/security.md). */
			cleanup_text_copy(why, sizeof why, perr ? perr : "out of memory");
			cleanup_conninfo_scrub(why, sizeof why, conninfo);
			l = strlen(why);
			while (l > 0 && (why[l - 1] == '\n' || why[l - 1] == ' '))
				why[--l] = '\0';
			rc = cleanup_error_set(err, perr ? CLEANUP_EINVAL : CLEANUP_ENOMEM, "conninfo \"%s\" cannot be parsed: %s",
			                       cleanup_conninfo_redact(shown, sizeof shown, conninfo), why);
			goto out;
		}
		for (o = opts; o->keyword; o++) {
			if (!o->val)
				continue;
			if (strcmp(o->keyword, "options") == 0)
				options = o->val;
			else
				sb_keyval(&b, o->keyword, o->val);
		}
	} else if (conninfo && *conninfo) {
		sb_keyval(&b, "dbname", conninfo);
	}
	if (!options)
		options = getenv("PGOPTIONS");
	if (options && *options) {
		size_t n = strlen(options);
		char *merged = malloc(n + sizeof READONLY_OPTION + 1);

		if (!merged) {
			b.oom = true;
		} else {
			snprintf(merged, n + sizeof READONLY_OPTION + 1, "%s " READONLY_OPTION, options);
			sb_keyval(&b, "options", merged);
			free(merged);
		}
	} else {
		sb_keyval(&b, "options", READONLY_OPTION);
	}
	if (b.oom) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory building a read-only conninfo");
		goto out;
	}
	*out = b.s;
	b.s = NULL;
out:
	free(b.s);
	PQfreemem(perr);
	PQconninfoFree(opts);
	return rc;
}
