/* Private to core/: result rows into C structs by a table of columns.
 *
 * A reader that turns a libpq result into structs states its columns once,
 * as a constant table (the column's name, its kind, and the field it fills),
 * instead of one col_* call per field in every parser:
 *
 *	static const engine_col audit_cols[] = {
 *		ROW_I64(cleanup_audit_row, id),
 *		ROW_TEXT(cleanup_audit_row, at),
 *	};
 *	engine_row_map(&audit_row, audit_cols, ROW_COUNT(audit_cols), res, i);
 *
 * The column is named as the field; the _AS forms name another one (for
 * a field of a member, or a renamed column; their numeric kinds take the
 * default explicitly). A missing or NULL column leaves the kind's
 * default: "" for text, -1 for integers (ROW_I64_OR, ROW_I32_OR, ROW_INT /
 * ROW_DBL name their own), false (0 for ROW_FLAG's int) for booleans. The
 * macros check the field's type at compile time (comparing
 * its address with a pointer of the kind's type), so a table cannot write
 * an int64_t into an int. */
#ifndef CLEANUP_ROWMAP_INT_H
#define CLEANUP_ROWMAP_INT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/error.h"
#include "engine_int.h"

typedef enum engine_col_kind {
	ECOL_TEXT, /* char[N], cut on a UTF-8 boundary (cleanup_text_copy) */
	ECOL_I64,  /* int64_t */
	ECOL_I32,  /* int32_t */
	ECOL_INT,  /* int */
	ECOL_DBL,  /* double */
	ECOL_BOOL  /* bool (or, by ROW_FLAG, int 1): true for 't' */
} engine_col_kind;

typedef struct engine_col {
	const char *name;
	engine_col_kind kind;
	size_t off;
	size_t size;
	double dflt;
} engine_col;

#define ROW_FIELD_(T, f, ctype) (offsetof(T, f) + 0 * sizeof(&((T *)0)->f == (ctype *)0))
#define ROW_TEXT_AS(T, f, col) \
	{col, ECOL_TEXT, offsetof(T, f) + 0 * sizeof(char[1 - 2 * (sizeof(((T *)0)->f[0]) != 1)]), \
	 sizeof(((T *)0)->f), 0}
#define ROW_I64_AS(T, f, col, d) {col, ECOL_I64, ROW_FIELD_(T, f, int64_t), sizeof(int64_t), (d)}
#define ROW_I32_AS(T, f, col, d) {col, ECOL_I32, ROW_FIELD_(T, f, int32_t), sizeof(int32_t), (d)}
#define ROW_INT_AS(T, f, col, d) {col, ECOL_INT, ROW_FIELD_(T, f, int), sizeof(int), (d)}
#define ROW_DBL_AS(T, f, col, d) {col, ECOL_DBL, ROW_FIELD_(T, f, double), sizeof(double), (d)}
#define ROW_BOOL_AS(T, f, col) {col, ECOL_BOOL, ROW_FIELD_(T, f, bool), sizeof(bool), 0}
#define ROW_FLAG_AS(T, f, col) {col, ECOL_BOOL, ROW_FIELD_(T, f, int), sizeof(int), 0}
#define ROW_TEXT(T, f) ROW_TEXT_AS(T, f, #f)
#define ROW_I64_OR(T, f, d) ROW_I64_AS(T, f, #f, d)
#define ROW_I64(T, f) ROW_I64_OR(T, f, -1)
#define ROW_I32_OR(T, f, d) ROW_I32_AS(T, f, #f, d)
#define ROW_I32(T, f) ROW_I32_OR(T, f, -1)
#define ROW_INT(T, f, d) ROW_INT_AS(T, f, #f, d)
#define ROW_DBL(T, f, d) ROW_DBL_AS(T, f, #f, d)
#define ROW_BOOL(T, f) ROW_BOOL_AS(T, f, #f)
#define ROW_FLAG(T, f) ROW_FLAG_AS(T, f, #f)
#define ROW_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Fills the fields of DST that COLS name from row ROW of RES. */
void engine_row_map(void *dst, const engine_col *cols, size_t ncols, const PGresult *res, int row);

/* Allocates max(rows, 1) zeroed elements of ELEM bytes into *OUT (rows in
 * *N, at most LIMIT when LIMIT >= 0) and maps each row through COLS, then,
 * when FN is not NULL, calls FN for what the table cannot say. Returns
 * CLEANUP_OK, or CLEANUP_ENOMEM through ERR with *OUT NULL and *N 0. */
typedef void (*engine_row_fn)(void *elem, const PGresult *res, int row);
int engine_rows_map(void **out, size_t *n, size_t elem, const engine_col *cols, size_t ncols, engine_row_fn fn,
                    const PGresult *res, int limit, cleanup_error *err);

/* Runs named query Q (NPARAMS text PARAMS, as engine_query) and maps all
 * its rows through COLS as engine_rows_map does (no FN); the result is
 * cleared. *OUT NULL and *N 0 on any failure. */
int engine_query_rows(void **out, size_t *n, size_t elem, const engine_col *cols, size_t ncols, cleanup_engine *e,
                      enum sql_query_id q, int nparams, const char *const *params, const char *context,
                      cleanup_error *err);

/* The columns of the status rows (cleanup/report.h), which the console's
 * server and library rows embed (report.c). */
extern const engine_col engine_server_row_cols[];
extern const size_t engine_server_row_ncols;
extern const engine_col engine_library_row_cols[];
extern const size_t engine_library_row_ncols;

#endif
