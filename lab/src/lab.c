/* The lab's install step (cleanup/lab.h) and its statements. */
#include <stdio.h>
#include <string.h>
#include "cleanup/lab.h"
#include "lab_int.h"

int lab_query(cleanup_rows **out, cleanup_engine *e, enum lab_sql_query_id q, int n,
              const char *const *params, const char *context, cleanup_error *err)
{
	return cleanup_query(out, e, lab_sql_query_files[q].text, n, params, context, err);
}

int cleanup_lab_install(bool *applied, cleanup_engine *e, cleanup_error *err)
{
	const char *params[1] = {lab_sql_bundle_sha256};
	cleanup_rows *rows = NULL;
	cleanup_error ignored;
	char want[128], ctx[160];
	bool in_tx = false;
	int rc, i;

	if (applied)
		*applied = false;
	cleanup_error_clear(err);
	if ((rc = cleanup_query_begin(e, "installing the lab", err)) != CLEANUP_OK)
		goto out;
	in_tx = true;
	if ((rc = lab_query(&rows, e, CLEANUP_LAB_Q_LAB_LOCK, 0, NULL, "locking the lab install", err)))
		goto out;
	cleanup_rows_free(rows);
	if ((rc = lab_query(&rows, e, CLEANUP_LAB_Q_LAB_BUNDLE, 0, NULL, "reading the lab bundle", err)))
		goto out;
	snprintf(want, sizeof want, "cleanupctl lab bundle %s", lab_sql_bundle_sha256);
	if (strcmp(cleanup_rows_text(rows, 0, "bundle"), want) != 0) {
		for (i = 0; i < lab_sql_function_count; i++) {
			snprintf(ctx, sizeof ctx, "applying lab definitions %s",
			         lab_sql_function_files[i].name);
			if ((rc = cleanup_query_script(e, lab_sql_function_files[i].text, ctx, err)) !=
			    CLEANUP_OK)
				goto out;
		}
		cleanup_rows_free(rows);
		rows = NULL;
		if ((rc = lab_query(&rows, e, CLEANUP_LAB_Q_LAB_RECORD, 1, params, "recording the lab bundle",
		                    err)))
			goto out;
		if (applied)
			*applied = true;
	}
	rc = cleanup_query_script(e, "COMMIT", "committing the lab install", err);
	in_tx = false;
out:
	cleanup_rows_free(rows);
	if (in_tx && cleanup_engine_ok(e))
		cleanup_query_script(e, "ROLLBACK", "rolling back the lab install", &ignored);
	return rc;
}
