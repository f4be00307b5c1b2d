/* The audit trail of operator actions (cleanup/audit.h): one call of
 * cleanup.audit_record (sql/functions/070_console.sql) per action. */
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cleanup/audit.h"
#include "engine_int.h"
#include "rowmap_int.h"

const char *cleanup_audit_os_user(void)
{
	static char name[64];
	struct passwd pw, *res = NULL;
	char buf[1024];
	const char *env;

	if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res && res->pw_name)
		snprintf(name, sizeof name, "%s", res->pw_name);
	else if ((env = getenv("USER")) && *env)
		snprintf(name, sizeof name, "%s", env);
	else
		snprintf(name, sizeof name, "uid %u", (unsigned)getuid());
	return name;
}

int cleanup_audit_record(int64_t *out_id, cleanup_engine *e, const cleanup_audit_entry *entry,
                         cleanup_error *err)
{
	char jbuf[24];
	const char *params[5];
	PGresult *res = NULL;
	int rc;

	if (out_id)
		*out_id = -1;
	if (!entry || !entry->action || !*entry->action)
		return cleanup_error_set(err, CLEANUP_EINVAL, "an audit entry needs an action");
	snprintf(jbuf, sizeof jbuf, "%" PRId64, entry->job_id);
	params[0] = entry->os_user ? entry->os_user : cleanup_audit_os_user();
	params[1] = entry->action;
	params[2] = entry->job_id >= 0 ? jbuf : NULL;
	params[3] = entry->confirmation;
	params[4] = entry->outcome ? entry->outcome : "";
	rc = engine_query(&res, e, CLEANUP_Q_AUDIT_INSERT, 5, params, "recording an audit row", err);
	if (rc == CLEANUP_OK && out_id)
		*out_id = col_int64(res, 0, "id");
	PQclear(res);
	return rc;
}

static const engine_col audit_cols[] = {
	ROW_I64(cleanup_audit_row, id),
	ROW_TEXT(cleanup_audit_row, at),
	ROW_TEXT(cleanup_audit_row, os_user),
	ROW_TEXT(cleanup_audit_row, application_name),
	ROW_TEXT(cleanup_audit_row, action),
	ROW_I64(cleanup_audit_row, job_id),
	ROW_TEXT(cleanup_audit_row, confirmation),
	ROW_TEXT(cleanup_audit_row, outcome),
};

int cleanup_audit_recent(cleanup_audit_row **out, size_t *n, cleanup_engine *e, int limit,
                         cleanup_error *err)
{
	char lbuf[16];
	const char *params[1] = {lbuf};
	void *rows;
	int rc;

	snprintf(lbuf, sizeof lbuf, "%d", limit);
	rc = engine_query_rows(&rows, n, sizeof **out, audit_cols, ROW_COUNT(audit_cols), e, CLEANUP_Q_AUDIT_RECENT, 1,
	                       params, "reading the audit trail", err);
	*out = rows;
	return rc;
}
