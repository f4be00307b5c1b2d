/* busy-fence's admission holder (cleanupctl demo busy-fence).
 *
 * A writer's transaction (application_name cleanupctl:writer:holder)
 * holds a library's admission row FOR SHARE and stays open; a probe
 * (cleanupctl:fence-probe) asks for the row FOR UPDATE, as the fence does,
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

/* Connects the holder and the probe to CONNINFO, takes LIBRARY's admission
 * row FOR SHARE in the holder's open transaction and sends the probe's FOR
 * UPDATE (not waited for). On success *OUT owns both connections; end them
 * with cleanup_admission_hold_end(). On failure fills ERR (the conninfo's
 * secrets scrubbed) and leaves nothing open. */
int cleanup_admission_hold_start(cleanup_admission_hold **out, const char *conninfo, int64_t library,
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

#endif
