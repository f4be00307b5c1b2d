/* Result rows into C structs by a table of columns (rowmap_int.h). */
#include <stdlib.h>
#include <string.h>
#include "cleanup/engine.h"
#include "engine_int.h"
#include "rowmap_int.h"

void engine_row_map(void *dst, const engine_col *cols, size_t ncols, const PGresult *res, int row)
{
	char *base = dst;
	size_t k;

	for (k = 0; k < ncols; k++) {
		const engine_col *c = &cols[k];
		int f = PQfnumber(res, c->name);
		bool null = f < 0 || row >= PQntuples(res) || PQgetisnull(res, row, f);
		const char *v = null ? "" : PQgetvalue(res, row, f);
		void *p = base + c->off;

		switch (c->kind) {
		case ECOL_TEXT:
			cleanup_text_copy(p, c->size, v);
			break;
		case ECOL_I64: {
			int64_t x = null ? (int64_t)c->dflt : strtoll(v, NULL, 10);
			memcpy(p, &x, sizeof x);
			break;
		}
		case ECOL_I32: {
			int32_t x = null ? (int32_t)c->dflt : (int32_t)strtoll(v, NULL, 10);
			memcpy(p, &x, sizeof x);
			break;
		}
		case ECOL_INT: {
			int x = null ? (int)c->dflt : (int)strtod(v, NULL);
			memcpy(p, &x, sizeof x);
			break;
		}
		case ECOL_DBL: {
			double x = null ? c->dflt : strtod(v, NULL);
			memcpy(p, &x, sizeof x);
			break;
		}
		case ECOL_BOOL: {
			bool x = !null && v[0] == 't';
			int flag = x;

			if (c->size == sizeof flag)
				memcpy(p, &flag, sizeof flag);
			else
				memcpy(p, &x, sizeof x);
			break;
		}
		}
	}
}

int engine_rows_map(void **out, size_t *n, size_t elem, const engine_col *cols, size_t ncols, engine_row_fn fn,
                    const PGresult *res, int limit, cleanup_error *err)
{
	int rows = PQntuples(res), i;
	char *v;

	*out = NULL;
	*n = 0;
	if (limit >= 0 && rows > limit)
		rows = limit;
	if (!(v = calloc(rows > 0 ? (size_t)rows : 1, elem)))
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	for (i = 0; i < rows; i++) {
		engine_row_map(v + (size_t)i * elem, cols, ncols, res, i);
		if (fn)
			fn(v + (size_t)i * elem, res, i);
	}
	*out = v;
	*n = (size_t)rows;
	return CLEANUP_OK;
}

int engine_query_rows(void **out, size_t *n, size_t elem, const engine_col *cols, size_t ncols, cleanup_engine *e,
                      enum sql_query_id q, int nparams, const char *const *params, const char *context,
                      cleanup_error *err)
{
	PGresult *res = NULL;
	int rc = engine_query(&res, e, q, nparams, params, context, err);

	*out = NULL;
	*n = 0;
	if (rc == CLEANUP_OK)
		rc = engine_rows_map(out, n, elem, cols, ncols, NULL, res, -1, err);
	PQclear(res);
	return rc;
}
