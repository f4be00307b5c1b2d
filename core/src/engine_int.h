/* Private to core/: the engine handle and the helpers every module uses to
 * run embedded named queries and turn libpq results into error records. */
#ifndef CLEANUP_ENGINE_INT_H
#define CLEANUP_ENGINE_INT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"
#include "sql_bundle.h"

/* Seconds libpq waits for a connection unless the conninfo or
 * PGCONNECT_TIMEOUT says otherwise: an unreachable host fails promptly. */
#define ENGINE_CONNECT_TIMEOUT "10"

struct cleanup_engine {
	PGconn *conn;
	char *conninfo;      /* as given; NULL for environment defaults */
	char *app_name;
	bool prepared[CLEANUP_Q__COUNT];
	int timeout_ms;
};

/* Runs named query Q with N text parameters (NULL entries are SQL NULL).
 * On success *OUT is a PGRES_TUPLES_OK or PGRES_COMMAND_OK result the
 * caller PQclear()s. On failure fills ERR (CONTEXT prefixed) and returns
 * the mapped status. Prepares Q on this connection the first time. */
int engine_query(PGresult **out, cleanup_engine *engine, enum sql_query_id q, int n,
                 const char *const *params, const char *context, cleanup_error *err);

/* Prepares named query Q (N parameters) on ENGINE's connection unless it
 * already is; for callers that send it themselves (pipeline mode). */
int engine_prepare(cleanup_engine *engine, enum sql_query_id q, int n, const char *context,
                   cleanup_error *err);

/* The server-side name of prepared query Q, into BUF. */
void engine_statement_name(char *buf, size_t len, enum sql_query_id q);

/* Runs a parameterless script (several statements allowed). */
int engine_script(cleanup_engine *engine, const char *sql, const char *context, cleanup_error *err);

/* Fills ERR from a failed RES (or from the connection when RES is NULL)
 * and returns the status. */
int engine_error_from_result(cleanup_error *err, cleanup_engine *engine, const PGresult *res,
                             const char *context);

/* Column helpers: by name, "" / -1 when NULL or missing. */
const char *col_text(const PGresult *res, int row, const char *name);
int64_t col_int64(const PGresult *res, int row, const char *name);
void col_copy(char *dst, size_t len, const PGresult *res, int row, const char *name);

/* strdup that reports ENOMEM through ERR. */
char *engine_strdup(const char *s, cleanup_error *err);

/* Formats a text[] literal from N strings into a malloc'd buffer. */
char *format_text_array(const char *const *items, size_t n);

#endif
