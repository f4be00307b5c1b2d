/* busy-fence's admission holder (cleanupctl demo busy-fence).
 *
 * A writer's transaction (application_name cleanupctl:writer:holder)
 * holds a library's admission row FOR SHARE and stays open; a probe
 * (cleanupctl:fence-probe; the console's T may end the holder because the
 * job waits for its seal) asks for the row FOR UPDATE, as the fence does,
 * without NOWAIT or lock_timeout, and waits behind it, so the locks panel
 * shows the blocking tree with the holder at its root and `job seal`
 * answers busy. Two connections of their own, outside the engine's
 * settings (the probe must wait longer than any engine timeout).
 */
#ifndef CLEANUP_HOLD_H
#define CLEANUP_HOLD_H

#include <stdbool.h>
#include <stdint.h>
#include "cleanup/error.h"

typedef struct cleanup_admission_hold cleanup_admission_hold;

/* Connects the holder and the probe (cleanupctl:fence-probe; JOB is unused)
 * to CONNINFO, takes LIBRARY's admission
 * row FOR SHARE in the holder's open transaction and sends the probe's FOR
 * UPDATE (not waited for). On success *OUT owns both connections; end them
 * with cleanup_admission_hold_end(). On failure fills ERR (the conninfo's
 * secrets scrubbed) and leaves nothing open. */
int cleanup_admission_hold_start(cleanup_admission_hold **out, const char *conninfo, int64_t library, int64_t job,
                                 cleanup_error *err);

/* The holder's backend pid (what pg_terminate_backend ends). */
int cleanup_admission_hold_pid(const cleanup_admission_hold *hold);

/* True while the holder's connection is up: false once its backend was
 * terminated (its transaction rolled back). Reads what the server sent;
 * never waits. */
bool cleanup_admission_hold_alive(cleanup_admission_hold *hold);

/* Commits the holder's transaction: the row is free. */
int cleanup_admission_hold_commit(cleanup_admission_hold *hold, cleanup_error *err);

/* Reads the probe's answer (it got the row once the holder was gone) and
 * closes both connections. Accepts NULL. */
void cleanup_admission_hold_end(cleanup_admission_hold *hold);

/* kill-runner and server-crash's failpoint holder (cleanupctl demo): a
 * connection of its own (application_name cleanupctl:demo:failpoint)
 * holds failpoint NAME's advisory lock (sql/functions/012_failpoints.sql),
 * so that a runner started with the point on waits inside its next step,
 * its work written and not committed; ending the hold lets it go on. */
typedef struct cleanup_failpoint_hold cleanup_failpoint_hold;

/* Connects to CONNINFO and takes failpoint NAME's lock (waiting while a
 * step holds it: until that step commits). On failure fills ERR (the
 * conninfo's secrets scrubbed) and leaves nothing open. */
int cleanup_failpoint_hold_start(cleanup_failpoint_hold **out, const char *conninfo, const char *name,
                                 cleanup_error *err);

/* The backend that waits at the point now: its pid, 0 when none does yet,
 * -1 when the holder's connection failed (ERR says why). */
int cleanup_failpoint_hold_waiter(cleanup_failpoint_hold *hold, cleanup_error *err);

/* 1 while backend PID is connected to the database, 0 once it is gone, -1
 * when the holder's connection failed (ERR says why). */
int cleanup_failpoint_hold_backend_alive(cleanup_failpoint_hold *hold, int pid, cleanup_error *err);

/* Releases the point (closes the connection). Accepts NULL. */
void cleanup_failpoint_hold_end(cleanup_failpoint_hold *hold);

#endif
