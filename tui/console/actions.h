/* The console's actions: a worker thread that runs the blocking engine
 * calls (step, run, pause, resume, cancel, seal, preview, create a removal,
 * kill a job's runner)
 * on its own connections, so that the console's poll() loop never waits
 * for the database.
 *
 * One action at a time. Each action opens its own engine connection with
 * application_name "cleanupctl:job:<id>:console" (a removal:
 * "cleanupctl:console"), re-reads the job and refuses when it is no longer
 * what the confirmation showed (confirm_check_binding), calls the engine,
 * records the outcome in cleanup.audit, and posts a result. Results are
 * picked up with actions_poll(); the worker writes one byte to the
 * console's wake-up pipe whenever one is posted. A run steps the job until
 * it completes, fails or is stopped with actions_stop_run() (checked
 * between steps; the step in flight always finishes).
 */
#ifndef CLEANUP_TUI_ACTIONS_H
#define CLEANUP_TUI_ACTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include "cleanup/error.h"
#include "confirm.h"

typedef struct tui_actions tui_actions;

typedef struct tui_request {
	confirm_target target;     /* what the confirmation bound to (target.action is the action) */
	char confirmation[208];    /* what the operator answered or typed ("" when none was asked) */
	bool audit_only;           /* nothing to do: record OUTCOME (e.g. a mismatched confirmation) */
	char outcome[512];         /* for audit_only */
} tui_request;

typedef struct tui_result {
	tui_action action;
	int64_t job_id;            /* the job acted on (a removal: the new job, -1 when none) */
	int status;                /* a cleanup_status */
	bool final;                /* false: progress of a run still going */
	char message[1024];        /* what happened, for the log and the message line */
	char hint[512];            /* the engine's hint, "" when none */
	int steps;                 /* steps committed by this action */
	bool audited;              /* the audit row was written */
} tui_result;

/* Starts the worker. CONNINFO (NULL: libpq environment) is copied. WAKE_FD
 * (>= 0) is written one byte per posted result. */
int actions_start(tui_actions **out, const char *conninfo, int wake_fd, cleanup_error *err);

/* Hands REQ to the worker. Returns 0, or -1 when an action is still in
 * progress (then nothing was queued). */
int actions_submit(tui_actions *a, const tui_request *req);

/* True while an action is in progress; *WHAT (may be NULL) gets it and
 * *JOB its job. */
bool actions_busy(tui_actions *a, tui_action *what, int64_t *job);

/* Asks a run to stop after the step in flight, or an action waiting out
 * a busy answer (:wait) to stop waiting. */
void actions_stop_run(tui_actions *a);

/* Throttles runs (a demo job an operator can watch):
 * at most STEPS_PER_S steps a second from the next step on, also for a run
 * in progress; 0 lifts the throttle. A throttled run sleeps between steps
 * holding no transaction (t still stops it at once). */
void actions_set_max_rate(tui_actions *a, double steps_per_s);
double actions_max_rate(tui_actions *a);

/* :wait SECONDS (the operation layer's retry rule, ops.h tui_op_wait, the
 * same as the CLI's --wait): a busy answer to a step, pause, resume,
 * cancel, seal or removal is retried with bounded backoff for up to
 * SECONDS on the worker (the console's loop never waits), each retry
 * posted as progress ("busy, retrying (N s left)"); actions_stop_run()
 * ends the wait at once and the busy answer stands. 0 (the default):
 * busy is answered at once. A run has its own busy rule (the engine's
 * backoff, --max-busy). */
void actions_set_wait(tui_actions *a, double seconds);
double actions_wait(tui_actions *a);

/* Takes the oldest posted result into *OUT; false when there is none. */
bool actions_poll(tui_actions *a, tui_result *out);

/* Stops a run in progress, waits for the worker to finish its current
 * engine call and frees A. Accepts NULL. */
void actions_shutdown(tui_actions *a);

#endif
