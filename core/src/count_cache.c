/* The count cache's visits and report (cleanup/count_cache.h) through the
 * named queries count_visit.sql and count_report.sql; the protocol itself
 * is in sql/functions/075_count_cache.sql. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/count_cache.h"
#include "engine_int.h"
#include "rowmap_int.h"

#define COUNT_VISIT cleanup_count_visit
static const engine_col visit_cols[] = {
	ROW_INT(COUNT_VISIT, slot, "slot", 0),
	ROW_TEXT(COUNT_VISIT, state, "state"),
	ROW_TEXT(COUNT_VISIT, reason, "reason"),
	ROW_TEXT(COUNT_VISIT, action, "action"),
	ROW_I64_OR(COUNT_VISIT, ids_read, "ids_read", 0),
	ROW_I64_OR(COUNT_VISIT, count, "count", -1),
	ROW_I64_OR(COUNT_VISIT, published_count, "published_count", -1),
	ROW_I64_OR(COUNT_VISIT, revision, "revision", 0),
	ROW_I64_OR(COUNT_VISIT, epoch, "epoch", 0),
	ROW_I64_OR(COUNT_VISIT, pages, "pages", 0),
	ROW_I64_OR(COUNT_VISIT, dirty_pages, "dirty_pages", 0),
};

#define COUNT_ROW cleanup_count_row
static const engine_col row_cols[] = {
	ROW_I64(COUNT_ROW, library_id, "library_id"),
	ROW_I64(COUNT_ROW, server_id, "server_id"),
	ROW_TEXT(COUNT_ROW, name, "name"),
	ROW_INT(COUNT_ROW, slot, "slot", 0),
	ROW_TEXT(COUNT_ROW, state, "state"),
	ROW_TEXT(COUNT_ROW, reason, "reason"),
	ROW_I64_OR(COUNT_ROW, count, "count", -1),
	ROW_I64_OR(COUNT_ROW, published_count, "published_count", -1),
	ROW_I64_OR(COUNT_ROW, revision, "revision", 0),
	ROW_I64_OR(COUNT_ROW, applied_revision, "applied_revision", 0),
	ROW_I64_OR(COUNT_ROW, epoch, "epoch", 0),
	ROW_I64_OR(COUNT_ROW, pages, "pages", 0),
	ROW_I64_OR(COUNT_ROW, dirty_pages, "dirty_pages", 0),
	ROW_DBL(COUNT_ROW, visit_age_s, "visit_age_s", -1),
	ROW_TEXT(COUNT_ROW, last_restart, "last_restart"),
};

int cleanup_count_visit_once(cleanup_count_visit *out, cleanup_engine *e, int64_t library_id, const char *now,
                             cleanup_error *err)
{
	char lib[32];
	const char *params[2] = {lib, now};
	PGresult *res = NULL;
	int rc;

	cleanup_error_clear(err);
	if (library_id <= 0)
		return cleanup_error_set(err, CLEANUP_EINVAL, "library id %" PRId64 " is not a positive integer", library_id);
	snprintf(lib, sizeof lib, "%" PRId64, library_id);
	rc = engine_query_one(&res, e, CLEANUP_Q_COUNT_VISIT, 2, params, "visiting the count cache",
	                      "a count-cache visit", err);
	if (rc == CLEANUP_OK) {
		memset(out, 0, sizeof *out);
		out->library_id = library_id;
		engine_row_map(out, visit_cols, ROW_COUNT(visit_cols), res, 0);
	}
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
	void *rows;
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	cleanup_error_clear(err);
	rc = engine_query(&res, e, CLEANUP_Q_COUNT_REPORT, 1, params, "reading the count cache", err);
	if (rc == CLEANUP_OK && PQntuples(res) > 0 &&
	    (rc = engine_rows_map(&rows, n, sizeof **out, row_cols, ROW_COUNT(row_cols), NULL, res, -1, err)) ==
	        CLEANUP_OK)
		*out = rows;
	PQclear(res);
	return rc;
}
