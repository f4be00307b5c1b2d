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
	bool app_name_fixed; /* application_name, not its fallback: PGAPPNAME does not rename it */
	bool prepared[CLEANUP_Q__COUNT];
	/* Settings every transaction of the engine runs with (F1):
	 * statement_timeout and lock_timeout in ms (0 none), the step commit
	 * mode (-1 the server's, 0 off, 1 on), read-only. On a direct
	 * connection they are session settings, set at connect; behind a
	 * pooler each transaction sets them locally (engine_query). */
	int timeout_ms;
	int lock_timeout_ms;
	int step_sync;
	bool read_only;
	/* What the connection is (engine_probe_result): behind a pooler
	 * (pg_backend_pid() differs from the BackendKeyData pid libpq got: a
	 * pooler answers the startup itself), a hot standby, the server pid. */
	bool probed;
	bool pooled;
	bool standby;
	int server_pid;
};

/* The statement that identifies the server of a new connection: its
 * backend pid and whether it is in recovery. Stateless, for any pooler. */
#define ENGINE_PROBE_SQL "SELECT pg_catalog.pg_backend_pid() AS pid, pg_catalog.pg_is_in_recovery() AS standby"

/* Reads RES, the answer to ENGINE_PROBE_SQL, into ENGINE (pooled, standby,
 * server_pid). */
int engine_probe_result(cleanup_engine *engine, const PGresult *res, cleanup_error *err);

/* How many keyword/value slots a connection's parameters take, NULL
 * included. */
#define ENGINE_CONN_PARAMS 6

/* A handle for CONNINFO (NULL or "": the libpq environment) and APP_NAME
 * (NULL: "cleanupctl"), not connected yet: for a caller that connects it
 * without blocking (engine_connect_start). Close it with
 * cleanup_engine_close(). */
int engine_new(cleanup_engine **out, const char *conninfo, const char *app_name, cleanup_error *err);

/* Starts a non-blocking connection of ENGINE with the parameters of every
 * engine connection (connect timeout, application name, UTF8), dropping
 * the one it had. On failure fills ERR (conninfo and message redacted,
 * "cannot connect to the database ...") and leaves ENGINE unconnected. */
int engine_connect_start(cleanup_engine *engine, cleanup_error *err);

/* One PQconnectPoll step of a connection engine_connect_start began.
 * PGRES_POLLING_OK: connected, set up as cleanup_engine_open's are (quiet
 * notices, nothing prepared). PGRES_POLLING_FAILED: ERR filled as by
 * engine_connect_start, ENGINE unconnected. Otherwise what to wait for. */
PostgresPollingStatusType engine_connect_poll(cleanup_engine *engine, cleanup_error *err);

/* Drops ENGINE's connection (if any) and forgets what was prepared on it. */
void engine_disconnect(cleanup_engine *engine);

/* CLEANUP_OK when RES is a PGRES_TUPLES_OK or PGRES_COMMAND_OK result;
 * otherwise fills ERR (SQLSTATE, message, detail, hint, CONTEXT) from RES
 * (or the connection when RES is NULL) and returns the mapped status. */
int engine_check_result(cleanup_engine *engine, const PGresult *res, const char *context, cleanup_error *err);

/* Runs named query Q with N text parameters (NULL entries are SQL NULL).
 * On success *OUT is a PGRES_TUPLES_OK or PGRES_COMMAND_OK result the
 * caller PQclear()s. On failure fills ERR (CONTEXT prefixed) and returns
 * the mapped status. Prepares Q on this connection the first time. */
int engine_query(PGresult **out, cleanup_engine *engine, enum sql_query_id q, int n,
                 const char *const *params, const char *context, cleanup_error *err);

/* engine_query for a statement run for its effect: the result, if any, is
 * discarded. */
int engine_command(cleanup_engine *engine, enum sql_query_id q, int n, const char *const *params,
                   const char *context, cleanup_error *err);

/* engine_query for a statement that answers exactly one row: any other
 * count is CLEANUP_ERROR ("WHAT returned N rows, expected 1"), *OUT NULL. */
int engine_query_one(PGresult **out, cleanup_engine *engine, enum sql_query_id q, int n,
                     const char *const *params, const char *context, const char *what, cleanup_error *err);

/* Prepares named query Q (N parameters) on ENGINE's connection unless it
 * already is; for callers that send it themselves (pipeline mode). */
int engine_prepare(cleanup_engine *engine, enum sql_query_id q, int n, const char *context,
                   cleanup_error *err);

/* Non-blocking counterparts, for a caller that drives the connection
 * itself (the console's monitor): engine_send_prepare sends the
 * preparation of Q, whose result goes to engine_prepare_result (which
 * records Q as prepared when it succeeded, as engine_prepare does);
 * engine_send_query sends prepared Q with N text parameters, and refuses
 * (CLEANUP_ERROR) a Q not prepared on this connection; engine_send_script
 * sends a parameterless script. Each returns CLEANUP_OK once sent, or
 * fills ERR when libpq refused to send. */
int engine_send_prepare(cleanup_engine *engine, enum sql_query_id q, int n, const char *context,
                        cleanup_error *err);
int engine_prepare_result(cleanup_engine *engine, enum sql_query_id q, const PGresult *res, const char *context,
                          cleanup_error *err);
int engine_send_query(cleanup_engine *engine, enum sql_query_id q, int n, const char *const *params,
                      const char *context, cleanup_error *err);
int engine_send_script(cleanup_engine *engine, const char *sql, const char *context, cleanup_error *err);

/* The statement that sets statement_timeout to TIMEOUT_MS (0 or less:
 * none) for the session, or with LOCAL for the transaction, into BUF. */
void engine_timeout_sql(char *buf, size_t len, int timeout_ms, bool local);

/* The server-side name of prepared query Q, into BUF. */
void engine_statement_name(char *buf, size_t len, enum sql_query_id q);

/* engine_script for a script that only sets settings (or opens a
 * transaction and sets them): sent again, after a ROLLBACK when needed,
 * when the role's own statement_timeout ended it (57014). */
int engine_script_settings(cleanup_engine *engine, const char *sql, const char *context, cleanup_error *err);

/* Opens a transaction with BEGIN_SQL ("BEGIN ...") and sets ENGINE's
 * timeouts locally in it at once (SET LOCAL), so that no statement of it
 * runs under the role's own timeouts; with engine_script_settings' retry. */
int engine_begin(cleanup_engine *engine, const char *begin_sql, const char *context, cleanup_error *err);

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
/* As a double; DFLT when NULL or missing. */
double col_number(const PGresult *res, int row, const char *name, double dflt);

/* strdup that reports ENOMEM through ERR. */
char *engine_strdup(const char *s, cleanup_error *err);

/* Formats a text[] literal from N strings into a malloc'd buffer. */
char *format_text_array(const char *const *items, size_t n);

#endif
