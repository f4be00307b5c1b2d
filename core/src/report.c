/* Status rows and JSON reports (sql/queries/status_*.sql, *_json.sql). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/report.h"
#include "engine_int.h"
#include "rowmap_int.h"

const engine_col engine_server_row_cols[] = {
	ROW_I64(cleanup_server_row, id),
	ROW_TEXT(cleanup_server_row, name),
	ROW_TEXT(cleanup_server_row, admission),
	ROW_I64(cleanup_server_row, job_id),
	ROW_I64(cleanup_server_row, item_count),
	ROW_I32(cleanup_server_row, library_count),
};
const size_t engine_server_row_ncols = ROW_COUNT(engine_server_row_cols);

const engine_col engine_library_row_cols[] = {
	ROW_I64(cleanup_library_row, id),
	ROW_I64(cleanup_library_row, server_id),
	ROW_TEXT(cleanup_library_row, name),
	ROW_TEXT(cleanup_library_row, admission),
	ROW_I64(cleanup_library_row, job_id),
	ROW_I64(cleanup_library_row, item_count),
};
const size_t engine_library_row_ncols = ROW_COUNT(engine_library_row_cols);

int cleanup_status_rows(cleanup_server_row **servers, size_t *nservers, cleanup_library_row **libraries,
                        size_t *nlibraries, cleanup_engine *e, cleanup_error *err)
{
	PGresult *rs = NULL, *rl = NULL;
	void *sv = NULL, *lb = NULL;
	size_t ns = 0, nl = 0;
	int rc;

	*servers = NULL;
	*libraries = NULL;
	*nservers = *nlibraries = 0;
	if ((rc = engine_query(&rs, e, CLEANUP_Q_STATUS_SERVERS, 0, NULL, "reading servers", err)) ||
	    (rc = engine_query(&rl, e, CLEANUP_Q_STATUS_LIBRARIES, 0, NULL, "reading libraries", err)) ||
	    (rc = engine_rows_map(&sv, &ns, sizeof **servers, engine_server_row_cols, engine_server_row_ncols, NULL,
	                          rs, -1, err)) ||
	    (rc = engine_rows_map(&lb, &nl, sizeof **libraries, engine_library_row_cols, engine_library_row_ncols,
	                          NULL, rl, -1, err)))
		goto out;
	*servers = sv;
	*libraries = lb;
	*nservers = ns;
	*nlibraries = nl;
	sv = NULL;
	lb = NULL;
out:
	free(sv);
	free(lb);
	PQclear(rs);
	PQclear(rl);
	return rc;
}

static int one_json(char **out, cleanup_engine *e, enum sql_query_id q, int n, const char *const *params,
                    const char *context, cleanup_error *err)
{
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	rc = engine_query(&res, e, q, n, params, context, err);
	if (rc != CLEANUP_OK)
		return rc;
	*out = engine_strdup(col_text(res, 0, "json"), err);
	PQclear(res);
	return *out ? CLEANUP_OK : CLEANUP_ENOMEM;
}

int cleanup_status_json(char **out, cleanup_engine *e, cleanup_error *err)
{
	return one_json(out, e, CLEANUP_Q_STATUS_JSON, 0, NULL, "reading status", err);
}

int cleanup_jobs_json(char **out, cleanup_engine *e, int limit, cleanup_error *err)
{
	char lbuf[16];
	const char *params[1] = {lbuf};

	snprintf(lbuf, sizeof lbuf, "%d", limit);
	return one_json(out, e, CLEANUP_Q_JOBS_JSON, 1, params, "listing jobs", err);
}

int cleanup_job_show_json(char **out, cleanup_engine *e, int64_t job_id, int steps, cleanup_error *err)
{
	char jbuf[24], sbuf[16], ctx[64];
	const char *params[2] = {jbuf, sbuf};

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(sbuf, sizeof sbuf, "%d", steps);
	snprintf(ctx, sizeof ctx, "reading job %s", jbuf);
	return one_json(out, e, CLEANUP_Q_JOB_SHOW_JSON, 2, params, ctx, err);
}
