/* Helpers for integration tests against the PostgreSQL that the pg_start
 * fixture started (CLEANUP_TEST_SANDBOX): fresh databases with the schema
 * installed, connections, one-value queries, expected failures, waiting for
 * a lock wait to be observable, and running the real cleanupctl binary.
 * Every helper fails the current cmocka test on unexpected errors. */
#ifndef PGTEST_H
#define PGTEST_H

#include "cleanup/engine.h"
#include "test_main.h"
#include <cmocka.h>
#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Conninfo of database DB in the test sandbox. malloc'd. */
char *pgtest_conninfo(const char *db);

/* Drops and creates database cleanup_lab_t_<NAME>, installs the schema with
 * cleanup_install(), then the lab with cleanup_lab_install() (schema
 * cleanup_lab: cleanup_lab.seed_demo); returns its conninfo (malloc'd). */
char *pgtest_fresh_db(const char *name);

/* pgtest_fresh_db(NAME) seeded with cleanup_lab.seed_demo(SERVERS, LIBRARIES,
 * ITEMS): servers 1..S, libraries numbered per server in order, items
 * "ext-<library>-<n>". Returns its conninfo (malloc'd). */
char *pgtest_seeded_db(const char *name, int servers, int libraries, int items);

/* Connects (application_name APP) or fails the test. */
PGconn *pgtest_connect(const char *conninfo, const char *app);

/* Opens an engine or fails the test. */
cleanup_engine *pgtest_engine(const char *conninfo);

/* Runs SQL (printf-style) and fails the test unless it succeeds. */
void pgtest_exec(PGconn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runs SQL expecting an error; returns its SQLSTATE (static buffer) and
 * copies the primary message into MSG when MSG is not NULL. Fails the test
 * when the statement succeeds. */
const char *pgtest_fail(PGconn *c, char *msg, size_t msglen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* First column of the first row as text (malloc'd; NULL for SQL NULL). */
char *pgtest_text(PGconn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* assert_string_equal() on a string this call site owns (pgtest_text()'s,
 * a helper's malloc'd copy), freed once it compared equal: LeakSanitizer
 * runs in the sanitizer build's tests. */
#define assert_text_equal(owned, expected)         \
	do {                                       \
		char *owned_text_ = (owned);       \
		assert_string_equal(owned_text_, expected); \
		free(owned_text_);                 \
	} while (0)

/* First column of the first row as an integer. */
int64_t pgtest_int(PGconn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sends SQL without waiting for its result (PQsendQuery). */
void pgtest_send(PGconn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Collects the result of a pgtest_send(); returns its SQLSTATE ("" on
 * success) in a static buffer. */
const char *pgtest_finish(PGconn *c);

/* Waits (at most TIMEOUT_MS) until backend PID is blocked by another
 * backend, as pg_blocking_pids() shows it, polling from OBSERVER. Fails the
 * test on timeout. */
void pgtest_wait_blocked(PGconn *observer, int pid, int timeout_ms);

/* Waits (at most TIMEOUT_MS) until backend PID has ended, as
 * pg_stat_activity shows it, polling from OBSERVER (a terminated backend
 * takes a moment to exit). Fails the test on timeout. */
void pgtest_wait_gone(PGconn *observer, int pid, int timeout_ms);

/* Runs the shell command (printf-style, via sh -c) with stdout captured into
 * *OUT (malloc'd, may be NULL to discard) and returns its exit status. */
int pgtest_sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Path of the cleanupctl binary under test ($CLEANUPCTL). */
const char *pgtest_cleanupctl(void);

/* Runs "cleanupctl --db CONNINFO ARGS" (printf-style ARGS) with stdout
 * and stderr together in *OUT (malloc'd; may be NULL to discard); returns
 * its exit status. */
int pgtest_cli(char **out, const char *conninfo, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* pgtest_cli() that must exit STATUS: otherwise its output is printed and
 * the test fails. The output is discarded. */
void pgtest_cli_expect(int status, const char *conninfo, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A fingerprint (md5) of the state a refused command must not change:
 * jobs, manifest, admission rows, events, inventory. Compare before and
 * after to prove "no change to the data". Returns a malloc'd string. */
char *pgtest_fingerprint(PGconn *c);

/* Asserts that SQL (run as is, not a format) fails on C with SQLSTATE
 * STATE, that its message contains every one of the NULL-terminated
 * fragments that follow, and that nothing changed (pgtest_fingerprint). */
void pgtest_refused(PGconn *c, const char *state, const char *sql, ...) __attribute__((sentinel));

/* Starts the shell command (printf-style, via sh -c) in the background with
 * stdout and stderr captured together; returns its pid. */
int pgtest_spawn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Waits for a command from pgtest_spawn(); returns its exit status and,
 * when OUT is not NULL, its output (malloc'd). */
int pgtest_wait(int pid, char **out);

/* Waits (at most TIMEOUT_MS) until a backend whose application_name is
 * APP is blocked by another backend (pg_blocking_pids); returns its pid.
 * Fails the test on timeout. */
int pgtest_wait_app_blocked(PGconn *observer, const char *app, int timeout_ms);

/* The database of a test file's group: the cmocka group setup creates it
 * with EXPR (pgtest_fresh_db or pgtest_seeded_db) into VAR, the group
 * teardown frees VAR. PGTEST_DB_GROUP also declares VAR. */
#define PGTEST_DB_SETUP(var, expr)            \
	static int setup(void **state)        \
	{                                     \
		(void)state;                  \
		var = (expr);                 \
		return 0;                     \
	}                                     \
	PGTEST_DB_TEARDOWN(var)
/* The group teardown alone, for a file whose setup does more: frees
 * VAR and any further malloc'd strings named after it. */
#define PGTEST_DB_TEARDOWN(...)                                            \
	static int teardown(void **state)                                  \
	{                                                                  \
		char *owned_[] = {__VA_ARGS__};                            \
		size_t i_;                                                 \
                                                                           \
		(void)state;                                               \
		for (i_ = 0; i_ < sizeof owned_ / sizeof *owned_; i_++)    \
			free(owned_[i_]);                                  \
		return 0;                                                  \
	}
#define PGTEST_DB_GROUP(var, expr) \
	static char *var;          \
	PGTEST_DB_SETUP(var, expr)

/* main() of a test file whose group setup and teardown are its setup()
 * and teardown() (PGTEST_DB_GROUP's, or the file's own): runs the
 * cmocka_unit_test() entries given as one group. */
#define PGTEST_MAIN(...) TEST_MAIN(setup, teardown, __VA_ARGS__)

/* CONNINFO with user=USER appended (malloc'd; fails the test when out of
 * memory). */
char *pgtest_with_user(const char *conninfo, const char *user);

/* Creates login role NAME if it does not exist (cluster-wide: test
 * programs running side by side may race to create it) and grants it
 * GROUP. */
void pgtest_login_role(PGconn *c, const char *name, const char *group);

/* BEGIN on C, then SQL (printf-style): C holds what SQL locks until it
 * ends its transaction. */
void pgtest_begin(PGconn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sends SQL (printf-style) on WAITER, then waits (at most 10 s) until
 * WAITER is blocked, as OBSERVER sees it (pgtest_wait_blocked). Collect
 * its result with pgtest_finish() once the lock is released. */
void pgtest_send_blocked(PGconn *observer, PGconn *waiter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* PQfinish() on each of the NULL-terminated connections. */
void pgtest_close_all(PGconn *c, ...) __attribute__((sentinel));

/* pgtest_engine() with application_name APP (what the engine's events
 * and pg_stat_activity name it by). */
cleanup_engine *pgtest_engine_as(const char *conninfo, const char *app);

/* pgtest_login_role(NAME, GROUP) on a connection of its own to CONNINFO;
 * returns CONNINFO as NAME (pgtest_with_user, malloc'd). */
char *pgtest_login_as(const char *conninfo, const char *name, const char *group);

/* Asserts that the pgtest_fingerprint() of C is still BEFORE (one taken
 * earlier), then frees BEFORE. */
void pgtest_unchanged(PGconn *c, char *before);

/* Runs SQL (printf-style) expecting it to fail with SQLSTATE STATE and,
 * when FRAGMENT is not NULL, a primary message containing FRAGMENT
 * (pgtest_fail); fails the test otherwise, printing what it got. */
void pgtest_fails(PGconn *c, const char *state, const char *fragment, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A new media server named NAME; returns its id. */
int64_t pgtest_new_server(PGconn *c, const char *name);

/* A new library NAME on SERVER holding N items with external IDs
 * "NAME-1" .. "NAME-N" (ascending ids); returns the library id. */
int64_t pgtest_new_library(PGconn *c, int64_t server, const char *name, int n);

/* cleanup.job_create(KIND, TARGET) on C; returns the new job's id. */
int64_t pgtest_job_create(PGconn *c, const char *kind, int64_t target);

/* pgtest_cli_expect() that returns the output (stdout and stderr,
 * malloc'd) instead of discarding it. */
char *pgtest_cli_out(int status, const char *conninfo, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A prune job of library LIB sealed with an empty manifest: LIB drains.
 * Returns the job id. */
int64_t pgtest_draining_prune(PGconn *c, int64_t lib);

/* A per-test observer connection O (application_name "observer") and
 * engine E on the file's database CONNINFO: declares O and E and the
 * cmocka per-test setup and teardown that open and close them.
 * PGTEST_WITH_OBSERVER(test) is the cmocka entry of a test using them. */
#define PGTEST_OBSERVER(conninfo)                           \
	static PGconn *o;                                   \
	static cleanup_engine *e;                           \
	static int open_observer(void **state)              \
	{                                                   \
		(void)state;                                \
		o = pgtest_connect(conninfo, "observer");   \
		e = pgtest_engine(conninfo);                \
		return 0;                                   \
	}                                                   \
	static int close_observer(void **state)             \
	{                                                   \
		(void)state;                                \
		cleanup_engine_close(e);                    \
		PQfinish(o);                                \
		return 0;                                   \
	}
#define PGTEST_WITH_OBSERVER(test) cmocka_unit_test_setup_teardown(test, open_observer, close_observer)

#endif
