/* The audit trail of operator actions (cleanup.audit).
 *
 * Every action taken from the console, and every refusal of one, is
 * recorded with the OS user, the connection's application_name (the
 * column's default), the action, the job, the confirmation the operator
 * typed and the outcome. Recording also announces the row on the
 * cleanup_events channel so open consoles show it at once.
 */
#ifndef CLEANUP_AUDIT_H
#define CLEANUP_AUDIT_H

#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

typedef struct cleanup_audit_entry {
	const char *os_user;      /* NULL: cleanup_audit_os_user() */
	const char *action;       /* "step", "run", "pause", ... (at most 40 bytes kept) */
	int64_t job_id;           /* -1 when none */
	const char *confirmation; /* what the operator typed or answered; NULL when none */
	const char *outcome;      /* "done: ...", "refused: ...", ... (at most 2000 bytes kept) */
} cleanup_audit_entry;

/* A row of cleanup.audit as read back. */
typedef struct cleanup_audit_row {
	int64_t id;
	char at[24];
	char os_user[64];
	char application_name[64];
	char action[41];
	int64_t job_id;           /* -1 when none */
	char confirmation[400 * 4 + 1]; /* cleanup.audit keeps 400 characters */
	char outcome[512];
} cleanup_audit_row;

/* The name of the OS user running this process (getpwuid of the real uid,
 * else $USER, else "uid <n>"). Returns a static buffer. */
const char *cleanup_audit_os_user(void);

/* Records ENTRY in its own transaction on ENGINE. *OUT_ID (may be NULL)
 * gets the new row's id. */
int cleanup_audit_record(int64_t *out_id, cleanup_engine *engine, const cleanup_audit_entry *entry,
                         cleanup_error *err);

/* The LIMIT most recent audit rows, newest first. *OUT is malloc'd (free()
 * it); *N rows. */
int cleanup_audit_recent(cleanup_audit_row **out, size_t *n, cleanup_engine *engine, int limit,
                         cleanup_error *err);

#endif
