/* A client's own statements on an engine's connection.
 *
 * The engine runs the SQL of its embedded bundle by name; a program built
 * on the library that has SQL of its own (the lab: the sandbox, the seeder,
 * the simulated sync writer) runs it here, on the same connection and with
 * the same settings (statement and lock timeouts, also behind a pooler),
 * error records and SQLSTATE mapping as the engine's own statements. Rows
 * come back in an opaque cleanup_rows, read by column name, so that the
 * caller needs no libpq header.
 */
#ifndef CLEANUP_QUERY_H
#define CLEANUP_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

typedef struct cleanup_rows cleanup_rows;

/* Runs SQL, one statement with N text parameters $1..$N (a NULL entry is
 * SQL NULL), on ENGINE. On a direct connection it runs in the session's
 * settings; behind a pooler, outside a transaction, it runs in a
 * transaction of its own that sets the engine's timeouts first (inside the
 * caller's transaction, cleanup_query_begin set them). On success *OUT
 * owns the rows (none for a command); free them with cleanup_rows_free().
 * On failure *OUT is NULL, ERR is filled (CONTEXT, e.g. "seeding demo
 * data", prefixed; SQLSTATE, detail, hint) and the mapped status returned. */
int cleanup_query(cleanup_rows **out, cleanup_engine *engine, const char *sql, int n,
                  const char *const *params, const char *context, cleanup_error *err);

/* Runs SQL, a script of one or more statements without parameters and
 * without rows of interest (a definitions file), on ENGINE; errors as
 * cleanup_query()'s, with CONTEXT. */
int cleanup_query_script(cleanup_engine *engine, const char *sql, const char *context, cleanup_error *err);

/* Opens a transaction on ENGINE with the engine's timeouts set in it
 * (SET LOCAL), for several cleanup_query() calls that commit together; end
 * it with cleanup_query_script(engine, "COMMIT" or "ROLLBACK", ...). */
int cleanup_query_begin(cleanup_engine *engine, const char *context, cleanup_error *err);

/* The number of rows (0 for NULL). */
int cleanup_rows_count(const cleanup_rows *rows);

/* Column COLUMN of row ROW: true when it is NULL, or there is no such
 * column or row. */
bool cleanup_rows_null(const cleanup_rows *rows, int row, const char *column);

/* As text: "" when NULL or missing; owned by ROWS. */
const char *cleanup_rows_text(const cleanup_rows *rows, int row, const char *column);

/* As a 64-bit integer: -1 when NULL or missing. */
int64_t cleanup_rows_int64(const cleanup_rows *rows, int row, const char *column);

/* As a boolean: true only for PostgreSQL's "t". */
bool cleanup_rows_bool(const cleanup_rows *rows, int row, const char *column);

/* Frees ROWS. Accepts NULL. */
void cleanup_rows_free(cleanup_rows *rows);

#endif
