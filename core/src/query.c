/* A client's own statements on an engine's connection (cleanup/query.h):
 * the public way for the lab, or any program built on the library, to run
 * SQL of its own without the engine's private helpers. */
#include <stdlib.h>
#include "cleanup/query.h"
#include "engine_int.h"

struct cleanup_rows {
	PGresult *res;
};

/* Runs SQL with PARAMS as an unnamed statement; *OUT the result. */
static int run(PGresult **out, cleanup_engine *e, const char *sql, int n, const char *const *params,
               const char *context, cleanup_error *err)
{
	PGresult *res = PQexecParams(e->conn, sql, n, NULL, params, NULL, NULL, 0);
	int rc = engine_check_result(e, res, context, err);

	if (rc != CLEANUP_OK) {
		PQclear(res);
		return rc;
	}
	*out = res;
	return CLEANUP_OK;
}

int cleanup_query(cleanup_rows **out, cleanup_engine *e, const char *sql, int n, const char *const *params,
                  const char *context, cleanup_error *err)
{
	PGresult *res = NULL;
	cleanup_rows *rows;
	bool own_tx = false;
	int rc;

	*out = NULL;
	if (!e || !e->conn)
		return cleanup_error_set(err, CLEANUP_ECONN, "not connected");
	/* Behind a pooler the session keeps no settings: a statement outside
	 * a transaction gets one of its own with the engine's timeouts. */
	if (e->pooled && PQtransactionStatus(e->conn) == PQTRANS_IDLE) {
		if ((rc = engine_begin(e, "BEGIN", context, err)) != CLEANUP_OK)
			return rc;
		own_tx = true;
	}
	rc = run(&res, e, sql, n, params, context, err);
	if (own_tx) {
		if (rc == CLEANUP_OK)
			rc = engine_script(e, "COMMIT", context, err);
		else if (cleanup_engine_ok(e))
			engine_script(e, "ROLLBACK", context, NULL);
	}
	if (rc != CLEANUP_OK) {
		PQclear(res);
		return rc;
	}
	rows = malloc(sizeof *rows);
	if (!rows) {
		PQclear(res);
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	}
	rows->res = res;
	*out = rows;
	return CLEANUP_OK;
}

int cleanup_query_script(cleanup_engine *e, const char *sql, const char *context, cleanup_error *err)
{
	return engine_script(e, sql, context, err);
}

int cleanup_query_begin(cleanup_engine *e, const char *context, cleanup_error *err)
{
	if (!e || !e->conn)
		return cleanup_error_set(err, CLEANUP_ECONN, "not connected");
	return engine_begin(e, "BEGIN", context, err);
}

int cleanup_rows_count(const cleanup_rows *rows)
{
	return rows ? PQntuples(rows->res) : 0;
}

bool cleanup_rows_null(const cleanup_rows *rows, int row, const char *column)
{
	int c;

	if (!rows || row < 0 || row >= PQntuples(rows->res))
		return true;
	c = PQfnumber(rows->res, column);
	return c < 0 || PQgetisnull(rows->res, row, c);
}

const char *cleanup_rows_text(const cleanup_rows *rows, int row, const char *column)
{
	return rows && row >= 0 ? col_text(rows->res, row, column) : "";
}

int64_t cleanup_rows_int64(const cleanup_rows *rows, int row, const char *column)
{
	return rows && row >= 0 ? col_int64(rows->res, row, column) : -1;
}

bool cleanup_rows_bool(const cleanup_rows *rows, int row, const char *column)
{
	const char *v = cleanup_rows_text(rows, row, column);

	return v[0] == 't' && v[1] == '\0';
}

void cleanup_rows_free(cleanup_rows *rows)
{
	if (!rows)
		return;
	PQclear(rows->res);
	free(rows);
}
