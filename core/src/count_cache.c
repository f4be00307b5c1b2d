/* The count cache's visits and report (cleanup/count_cache.h) through the
 * named queries count_visit.sql and count_report.sql; the protocol itself
 * is in sql/functions/075_count_cache.sql. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/count_cache.h"
#include "engine_int.h"

static int64_t col_int64_or(const PGresult *res, int row, const char *name, int64_t dflt)
{
	int c = PQfnumber(res, name);

	if (c < 0 || PQgetisnull(res, row, c))
		return dflt;
	return col_int64(res, row, name);
}

int cleanup_count_visit_once(cleanup_count_visit *out, cleanup_engine *e, int64_t library_id, const char *now,
                             cleanup_error *err)
{
	char lib[32];
	const char *params[2] = {lib, now};
	PGresult *res = NULL;
	cleanup_count_visit v;
	int rc;

	cleanup_error_clear(err);
	if (library_id <= 0)
		return cleanup_error_set(err, CLEANUP_EINVAL, "library id %" PRId64 " is not a positive integer", library_id);
	snprintf(lib, sizeof lib, "%" PRId64, library_id);
	rc = engine_query(&res, e, CLEANUP_Q_COUNT_VISIT, 2, params, "visiting the count cache", err);
	if (rc != CLEANUP_OK)
		goto out;
	if (PQntuples(res) != 1) {
		rc = cleanup_error_set(err, CLEANUP_ERROR, "a count-cache visit returned %d rows", PQntuples(res));
		goto out;
	}
	memset(&v, 0, sizeof v);
	v.library_id = library_id;
	v.slot = (int)col_int64_or(res, 0, "slot", 0);
	col_copy(v.state, sizeof v.state, res, 0, "state");
	col_copy(v.reason, sizeof v.reason, res, 0, "reason");
	col_copy(v.action, sizeof v.action, res, 0, "action");
	v.ids_read = col_int64_or(res, 0, "ids_read", 0);
	v.count = col_int64_or(res, 0, "count", -1);
	v.published_count = col_int64_or(res, 0, "published_count", -1);
	v.revision = col_int64_or(res, 0, "revision", 0);
	v.epoch = col_int64_or(res, 0, "epoch", 0);
	v.pages = col_int64_or(res, 0, "pages", 0);
	v.dirty_pages = col_int64_or(res, 0, "dirty_pages", 0);
	*out = v;
out:
	PQclear(res);
	return rc;
}

int cleanup_count_settle(cleanup_count_visit *out, int *visits, cleanup_engine *e, int64_t library_id,
                         int max_visits, const char *now, cleanup_error *err)
{
	cleanup_count_visit v;
	int n = 0, rc = CLEANUP_OK;

	if (visits)
		*visits = 0;
	if (max_visits < 1)
		return cleanup_error_set(err, CLEANUP_EINVAL, "visits %d: at least one visit is needed", max_visits);
	while (n < max_visits) {
		rc = cleanup_count_visit_once(&v, e, library_id, now, err);
		if (rc != CLEANUP_OK)
			break;
		n++;
		*out = v;
		if (strcmp(v.state, "fresh") == 0)
			break;
		/* A visit that did nothing will not do more the next time. */
		if (strcmp(v.action, "none") == 0)
			break;
	}
	if (visits)
		*visits = n;
	return rc;
}

int cleanup_count_report(cleanup_count_row **out, size_t *n, cleanup_engine *e, const char *now,
                         cleanup_error *err)
{
	const char *params[1] = {now};
	cleanup_count_row *rows = NULL;
	PGresult *res = NULL;
	int rc, i, nr;

	*out = NULL;
	*n = 0;
	cleanup_error_clear(err);
	rc = engine_query(&res, e, CLEANUP_Q_COUNT_REPORT, 1, params, "reading the count cache", err);
	if (rc != CLEANUP_OK)
		goto out;
	nr = PQntuples(res);
	if (nr > 0 && !(rows = calloc((size_t)nr, sizeof *rows))) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nr; i++) {
		cleanup_count_row *r = &rows[i];

		r->library_id = col_int64(res, i, "library_id");
		r->server_id = col_int64(res, i, "server_id");
		col_copy(r->name, sizeof r->name, res, i, "name");
		r->slot = (int)col_int64_or(res, i, "slot", 0);
		col_copy(r->state, sizeof r->state, res, i, "state");
		col_copy(r->reason, sizeof r->reason, res, i, "reason");
		r->count = col_int64_or(res, i, "count", -1);
		r->published_count = col_int64_or(res, i, "published_count", -1);
		r->revision = col_int64_or(res, i, "revision", 0);
		r->applied_revision = col_int64_or(res, i, "applied_revision", 0);
		r->epoch = col_int64_or(res, i, "epoch", 0);
		r->pages = col_int64_or(res, i, "pages", 0);
		r->dirty_pages = col_int64_or(res, i, "dirty_pages", 0);
		r->visit_age_s = col_number(res, i, "visit_age_s", -1);
		col_copy(r->last_restart, sizeof r->last_restart, res, i, "last_restart");
	}
	*out = rows;
	*n = (size_t)nr;
	rows = NULL;
out:
	free(rows);
	PQclear(res);
	return rc;
}
