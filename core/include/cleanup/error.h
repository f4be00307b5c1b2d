/* Status codes and error records of the cleanup engine.
 *
 * Every public function returns an int status: CLEANUP_OK (0) or a negative
 * cleanup_status. When it fails it also fills a cleanup_error, which keeps
 * the cause: the SQLSTATE and the server's message, detail and hint, plus
 * what we were doing. cleanup_exit_code() maps a status to the CLI's exit
 * codes in one place.
 */
#ifndef CLEANUP_ERROR_H
#define CLEANUP_ERROR_H

#include <stddef.h>

typedef enum cleanup_status {
	CLEANUP_OK = 0,
	CLEANUP_ERROR = -1,    /* anything else: server error, I/O, bug   exit 1 */
	CLEANUP_EINVAL = -2,   /* bad input: usage or a value's rule        exit 2 */
	CLEANUP_EBUSY = -3,    /* lock contention (55P03): retry later      exit 3 */
	CLEANUP_EREFUSED = -4, /* refused by a job's phase or a guard       exit 4 */
	CLEANUP_ENOTFOUND = -5,/* job, library, server or step unknown      exit 1 */
	CLEANUP_ECONN = -6,    /* connection failed or was lost             exit 1 */
	CLEANUP_ENOMEM = -7,   /*                                           exit 1 */
	CLEANUP_EREADONLY = -8 /* a write sent to a read-only server (a hot
	                        * standby, 25006): run it on the primary    exit 5 */
} cleanup_status;

#define CLEANUP_ERR_TEXT 1024

typedef struct cleanup_error {
	int status;                       /* a cleanup_status */
	char sqlstate[6];                 /* "" when not from the server */
	char message[CLEANUP_ERR_TEXT];   /* primary message */
	char detail[CLEANUP_ERR_TEXT];    /* "" when none */
	char hint[CLEANUP_ERR_TEXT];      /* "" when none */
	char context[256];                /* what we were doing, e.g. "sealing job 12" */
} cleanup_error;

/* Clears ERR (may be NULL). */
void cleanup_error_clear(cleanup_error *err);

/* Sets ERR (may be NULL) to STATUS with a printf-style message and no
 * SQLSTATE. Returns STATUS, so callers can `return cleanup_error_set(...)`. */
int cleanup_error_set(cleanup_error *err, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Sets ERR's hint (ERR may be NULL). */
void cleanup_error_hint(cleanup_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Maps a SQLSTATE to a status: 55P03 -> EBUSY, CU001 -> ENOTFOUND,
 * CU1xx -> EINVAL, CU4xx and CUAxx -> EREFUSED, class 08 and 57P0x ->
 * ECONN, 22021 (bad UTF-8) -> EINVAL, 25006 (read-only transaction, a
 * standby) -> EREADONLY, else ERROR. */
int cleanup_status_from_sqlstate(const char *sqlstate);

/* Copies SRC (NULL: "") into DST (LEN > 0 bytes, always NUL-terminated).
 * When SRC does not fit, the copy is cut at a UTF-8 character boundary: it
 * never ends in part of a multi-byte character (text from the database is
 * UTF-8; a byte cut would print a lone lead byte). Returns the number of
 * bytes copied, without the NUL. */
size_t cleanup_text_copy(char *dst, size_t len, const char *src);

/* The process exit code for STATUS: 0, 1, 2, 3, 4 or 5. */
int cleanup_exit_code(int status);

/* A short name for STATUS: "ok", "error", "invalid", "busy", ... */
const char *cleanup_status_name(int status);

#endif
