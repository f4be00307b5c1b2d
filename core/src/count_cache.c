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

/* The columns a visit and a report row share: the slot's state and count. */
#define COUNT_SLOT_COLS(T)                                                                                    \
	ROW_INT(T, slot, 0), ROW_TEXT(T, state), ROW_TEXT(T, reason), ROW_I64_OR(T, count, -1),               \
	    ROW_I64_OR(T, published_count, -1), ROW_I64_OR(T, revision, 0), ROW_I64_OR(T, epoch, 0),         \
	    ROW_I64_OR(T, pages, 0), ROW_I64_OR(T, dirty_pages, 0)

static const engine_col visit_cols[] = {
	COUNT_SLOT_COLS(cleanup_count_visit),
	ROW_TEXT(cleanup_count_visit, action),
	ROW_I64_OR(cleanup_count_visit, ids_read, 0),
};

static const engine_col row_cols[] = {
	COUNT_SLOT_COLS(cleanup_count_row),
	ROW_I64(cleanup_count_row, library_id),
	ROW_I64(cleanup_count_row, server_id),
	ROW_TEXT(cleanup_count_row, name),
	ROW_I64_OR(cleanup_count_row, applied_revision, 0),
	ROW_DBL(cleanup_count_row, visit_age_s, -1),
	ROW_TEXT(cleanup_count_row, last_restart),
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
