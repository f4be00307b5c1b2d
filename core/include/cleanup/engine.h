/* A connection to the database the engine works on.
 *
 * cleanup_engine is an opaque handle around one libpq connection with the
 * engine's named queries prepared on it lazily. It is not thread-safe; use
 * one per thread. The console uses the asynchronous calls at the end.
 */
#ifndef CLEANUP_ENGINE_H
#define CLEANUP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/error.h"

/* Library and server names are at most 200 characters (the schema's
 * CHECK (length(name) BETWEEN 1 AND 200) in a UTF8 database), and a
 * character is up to 4 bytes of UTF-8: a buffer of CLEANUP_NAME_SIZE bytes
 * holds any name whole, with its NUL. Size every name buffer with it. */
#define CLEANUP_NAME_MAX_CHARS 200
#define CLEANUP_NAME_SIZE (CLEANUP_NAME_MAX_CHARS * 4 + 1)

typedef struct cleanup_engine cleanup_engine;

/* Connects with CONNINFO (NULL or "" means libpq's environment defaults:
 * PGHOST, PGDATABASE, PGSERVICE, ...) and sets application_name to
 * APP_NAME (NULL: "cleanupctl"). On success *OUT owns the handle; free it
 * with cleanup_engine_close(). Returns CLEANUP_ECONN when the server cannot
 * be reached. */
int cleanup_engine_open(cleanup_engine **out, const char *conninfo, const char *app_name,
                        cleanup_error *err);

/* Closes the connection and frees ENGINE. Accepts NULL. */
void cleanup_engine_close(cleanup_engine *engine);

/* Drops and re-opens the connection with the same parameters (prepared
 * statements are prepared again on first use). */
int cleanup_engine_reconnect(cleanup_engine *engine, cleanup_error *err);

/* True while the connection is up. */
bool cleanup_engine_ok(const cleanup_engine *engine);

/* The database name and a printable conninfo summary (owned by ENGINE). */
const char *cleanup_engine_dbname(const cleanup_engine *engine);

/* The server's process id of this connection (for lock displays). */
int cleanup_engine_backend_pid(const cleanup_engine *engine);

/* Sets a statement_timeout (milliseconds, 0 = none) for later commands. */
int cleanup_engine_set_timeout(cleanup_engine *engine, int timeout_ms, cleanup_error *err);

/* Sets the lock_timeout (milliseconds, 0 = none) for later commands. */
int cleanup_engine_set_lock_timeout(cleanup_engine *engine, int timeout_ms, cleanup_error *err);

/* The timeouts every transaction of an engine runs with unless told
 * otherwise (F1: a role's statement_timeout = 20ms must not break a
 * command, and no setting may stay behind on a pooled connection). */
#define CLEANUP_DEFAULT_STATEMENT_TIMEOUT_MS 60000
#define CLEANUP_DEFAULT_LOCK_TIMEOUT_MS 10000

/* Changes the defaults for engines opened from now on (negative: keep);
 * the CLI's --timeout. */
void cleanup_engine_defaults(int statement_timeout_ms, int lock_timeout_ms);

/* True when the connection goes through a connection pooler (PgBouncer,
 * ...): the backend pid libpq was given at startup is not the server's.
 * The engine then keeps no session state: settings per transaction, no
 * named prepared statements, no pipelined transactions, no LISTEN. */
bool cleanup_engine_pooled(const cleanup_engine *engine);

/* True when the server was in recovery (a hot standby) when the engine
 * connected, or at the last cleanup_engine_recheck(). */
bool cleanup_engine_standby(const cleanup_engine *engine);

/* Asks the server again whether it is in recovery (a promotion, a
 * failover); updates cleanup_engine_standby(). */
int cleanup_engine_recheck(cleanup_engine *engine, cleanup_error *err);

/* Runs the SQL command TEXT, which takes no parameters and returns no rows
 * of interest (e.g. "LISTEN cleanup_jobs"). */
int cleanup_engine_exec(cleanup_engine *engine, const char *text, cleanup_error *err);

/* Ctrl-C support (psql's cancel token): arms cancellation of the queries
 * of ENGINE (NULL disarms). One engine per process is armed at a time; the
 * engine keeps its cancel key current across cleanup_engine_reconnect() and
 * disarms itself in cleanup_engine_close(). Returns CLEANUP_OK, or
 * CLEANUP_ERROR when libpq could not make a cancel key. Call from the main
 * flow of the program, never from a signal handler. */
int cleanup_engine_cancel_arm(cleanup_engine *engine);

/* Asks the server to cancel the query now running on the armed engine's
 * connection (PQcancel). Async-signal-safe: for a SIGINT handler. Returns
 * true when the request was sent (the server may still finish the query
 * first), false when nothing is armed or the request failed. */
bool cleanup_engine_cancel_armed(void);

/* The version of the libpq the engine runs with, as PQlibVersion() gives
 * it: MAJOR * 10000 + MINOR (PostgreSQL 10 and later). For --version,
 * without including libpq-fe.h outside core/. */
int cleanup_libpq_version(void);

/* CONNINFO fit to print: a libpq key=value string or URI with the value of
 * every secret (password=, sslpassword=, and the password of a URI's
 * user:password@) replaced by "***", the rest as the user wrote it (a bare
 * database name comes back unchanged). Used for every message that echoes
 * a conninfo; works on strings libpq cannot parse too. Writes at most LEN
 * bytes (LEN > 0, always NUL-terminated, cut at a character boundary) into
 * BUF and returns BUF. */
const char *cleanup_conninfo_redact(char *buf, size_t len, const char *conninfo);

/* Replaces, in MSG (NUL-terminated, LEN bytes of room), every occurrence of
 * a secret CONNINFO holds (as cleanup_conninfo_redact() finds them, raw and
 * as libpq decodes them) with "***": for libpq's own messages about a
 * conninfo, which may quote part of it. No-op when CONNINFO has no secret. */
void cleanup_conninfo_scrub(char *msg, size_t len, const char *conninfo);

#endif
