/* Dependency evidence through cleanup.dependency_edges() and
 * cleanup.dependency_evidence() (sql/functions/090_deps.sql). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/deps.h"
#include "engine_int.h"

/* "{a,b}" -> "a, b" */
static void array_text(char *dst, size_t len, const char *src)
{
	size_t j = 0;

	for (; *src && j + 2 < len; src++) {
		if (*src == '{' || *src == '}' || *src == '"')
			continue;
		if (*src == ',') {
			dst[j++] = ',';
			dst[j++] = ' ';
		} else {
			dst[j++] = *src;
		}
	}
	dst[j] = '\0';
}

int cleanup_deps(cleanup_dep_edge **edges, size_t *n, char **json, char *fingerprint, cleanup_engine *e,
                 int max_depth, int max_tables, cleanup_error *err)
{
	char dbuf[16], tbuf[16];
	const char *params[2] = {dbuf, tbuf};
	PGresult *res = NULL;
	cleanup_dep_edge *out = NULL;
	int rc, i, rows;

	*edges = NULL;
	*n = 0;
	if (json)
		*json = NULL;
	if (max_depth < 1 || max_depth > 64 || max_tables < 1 || max_tables > 1024)
		return cleanup_error_set(err, CLEANUP_EINVAL,
		                         "limits out of range: depth %d (1-64), tables %d (1-1024)", max_depth, max_tables);
	snprintf(dbuf, sizeof dbuf, "%d", max_depth);
	snprintf(tbuf, sizeof tbuf, "%d", max_tables);
	if ((rc = engine_query(&res, e, CLEANUP_Q_DEPS_EDGES, 2, params, "reading dependency edges", err)))
		return rc;
	rows = PQntuples(res);
	out = calloc(rows ? (size_t)rows : 1, sizeof *out);
	if (!out) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < rows; i++) {
		cleanup_dep_edge *d = &out[i];

		d->depth = (int)col_int64(res, i, "depth");
		col_copy(d->constraint_name, sizeof d->constraint_name, res, i, "constraint_name");
		col_copy(d->referencing, sizeof d->referencing, res, i, "referencing");
		array_text(d->referencing_columns, sizeof d->referencing_columns, col_text(res, i, "referencing_columns"));
		col_copy(d->referenced, sizeof d->referenced, res, i, "referenced");
		array_text(d->referenced_columns, sizeof d->referenced_columns, col_text(res, i, "referenced_columns"));
		col_copy(d->on_delete, sizeof d->on_delete, res, i, "on_delete");
		d->deferrable = strcmp(col_text(res, i, "is_deferrable"), "t") == 0;
		d->validated = strcmp(col_text(res, i, "validated"), "t") == 0;
		d->has_index = strcmp(col_text(res, i, "has_index"), "t") == 0;
		col_copy(d->index_name, sizeof d->index_name, res, i, "index_name");
		array_text(d->triggers, sizeof d->triggers, col_text(res, i, "triggers"));
		d->cycle = strcmp(col_text(res, i, "cycle"), "t") == 0;
		col_copy(d->disposition, sizeof d->disposition, res, i, "disposition");
	}
	PQclear(res);
	res = NULL;
	if (json || fingerprint) {
		if ((rc = engine_query(&res, e, CLEANUP_Q_DEPS_JSON, 2, params, "building dependency evidence", err)))
			goto out;
		if (fingerprint)
			snprintf(fingerprint, 65, "%s", col_text(res, 0, "fingerprint"));
		if (json && !(*json = engine_strdup(col_text(res, 0, "json"), err))) {
			rc = CLEANUP_ENOMEM;
			goto out;
		}
	}
	*edges = out;
	*n = (size_t)rows;
	out = NULL;
out:
	free(out);
	PQclear(res);
	return rc;
}
