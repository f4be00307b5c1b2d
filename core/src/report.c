/* Status rows and JSON reports (sql/queries/status_*.sql, *_json.sql). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/report.h"
#include "engine_int.h"

int cleanup_status_rows(cleanup_server_row **servers, size_t *nservers, cleanup_library_row **libraries,
                        size_t *nlibraries, cleanup_engine *e, cleanup_error *err)
{
	PGresult *rs = NULL, *rl = NULL;
	cleanup_server_row *sv = NULL;
	cleanup_library_row *lb = NULL;
	int rc, i, ns, nl;

	*servers = NULL;
	*libraries = NULL;
	*nservers = *nlibraries = 0;
	if ((rc = engine_query(&rs, e, CLEANUP_Q_STATUS_SERVERS, 0, NULL, "reading servers", err)))
		goto out;
	if ((rc = engine_query(&rl, e, CLEANUP_Q_STATUS_LIBRARIES, 0, NULL, "reading libraries", err)))
		goto out;
	ns = PQntuples(rs);
	nl = PQntuples(rl);
	sv = calloc(ns ? (size_t)ns : 1, sizeof *sv);
	lb = calloc(nl ? (size_t)nl : 1, sizeof *lb);
	if (!sv || !lb) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < ns; i++) {
		sv[i].id = col_int64(rs, i, "id");
		col_copy(sv[i].name, sizeof sv[i].name, rs, i, "name");
		col_copy(sv[i].admission, sizeof sv[i].admission, rs, i, "admission");
		sv[i].job_id = col_int64(rs, i, "job_id");
		sv[i].item_count = col_int64(rs, i, "item_count");
		sv[i].library_count = (int32_t)col_int64(rs, i, "library_count");
	}
	for (i = 0; i < nl; i++) {
		lb[i].id = col_int64(rl, i, "id");
		lb[i].server_id = col_int64(rl, i, "server_id");
		col_copy(lb[i].name, sizeof lb[i].name, rl, i, "name");
		col_copy(lb[i].admission, sizeof lb[i].admission, rl, i, "admission");
		lb[i].job_id = col_int64(rl, i, "job_id");
		lb[i].item_count = col_int64(rl, i, "item_count");
	}
	*servers = sv;
	*libraries = lb;
	*nservers = (size_t)ns;
	*nlibraries = (size_t)nl;
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
