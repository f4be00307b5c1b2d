/* Test-only fault injection in the engine's C code (S7-S9). The SQL side
 * of the failpoints is sql/functions/012_failpoints.sql; these are the
 * points no SQL statement can reach, such as the moment after a step's
 * commit was acknowledged and before the runner acted on it. */
#ifndef CLEANUP_FAILPOINT_INT_H
#define CLEANUP_FAILPOINT_INT_H

#include <stdbool.h>

/* True when the environment variable CLEANUP_FAILPOINTS (a comma-separated
 * list of names) names NAME. Production never sets it. */
bool failpoint_enabled(const char *name);

/* Failpoint NAME: when enabled, the process stops itself with SIGSTOP, so
 * a test observes the stopped state (/proc/PID/stat, 'T'), does what it
 * wants (kill -9, pg_ctl stop -m immediate, ...) and may send SIGCONT.
 * Otherwise does nothing. Never fails. */
void failpoint(const char *name);

#endif
