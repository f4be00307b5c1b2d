/* One operation layer under the CLI (cmd_job.c, cmd_job_step.c, cli.c) and
 * the console (actions.c, console_cmd.c): the job actions, each on an
 * engine handle the caller opened; the one mapping from a status to the
 * operator's words and the exit code; the one success wording of pause,
 * resume, cancel, seal and create; the one id rule; and the one retry rule
 * for busy answers (--wait, :wait), so that the
 * two front ends cannot disagree again.
 *
 * Each operation takes the runner lease where the one-runner rule says so
 * (a step: cleanup_job_runner_claim; a run takes it inside
 * cleanup_job_run), calls the engine, releases, and returns the engine's
 * status unchanged with ERR filled (the cause kept: SQLSTATE, message,
 * detail, hint). Results go into the engine's result structs (OUT, first;
 * the console keeps them in one tui_op_result). A step's or a run's lines
 * stay each front end's own (the CLI's step lines, the console's message
 * line); the words of an error and of a job action done, and the exit
 * code, come from here.
 */
#ifndef CLEANUP_TUI_OPS_H
#define CLEANUP_TUI_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"
#include "cleanup/job.h"
#include "cleanup/step.h"
#include "confirm.h"

/* ---- the error-to-message mapping (pure) ------------------------------ */

/* The words that start every busy answer, in both front ends. */
#define TUI_BUSY_PREFIX "busy, retry later: "

/* Which front end words a failure: the CLI prints "cleanupctl: " and the
 * words on stderr and exits with the code, so a failure needs no word of
 * its own; the console's message line does ("failed: ", "connection
 * lost: "). Busy and refused read the same in both. */
typedef enum tui_op_front { TUI_FRONT_CLI, TUI_FRONT_CONSOLE } tui_op_front;

/* One row of the table: a status and the words that start its message in
 * each front end. The status's name (JSON "status") and exit code stay the
 * engine's (cleanup_status_name, cleanup_exit_code: one place). */
typedef enum tui_op_severity {
	TUI_OP_SEVERITY_OK,      /* done */
	TUI_OP_SEVERITY_WARNING, /* nothing was done, and nothing is wrong: busy, refused */
	TUI_OP_SEVERITY_DANGER   /* a failure */
} tui_op_severity;

typedef struct tui_op_error_words {
	int status;             /* a cleanup_status */
	const char *cli_prefix; /* "" when the CLI adds nothing */
	const char *console_prefix;
	tui_op_severity severity; /* the console's colour role for the outcome */
} tui_op_error_words;

/* The row for STATUS (an unknown status: the row of CLEANUP_ERROR). Pure;
 * the result is static. */
const tui_op_error_words *tui_op_error_lookup(int status);

/* How the console shows an outcome with STATUS (its colour role). Pure. */
tui_op_severity tui_op_error_severity(int status);

/* Stopped by Ctrl-C (SIGINT), as shells report it: 128 + 2. */
enum { TUI_OP_EXIT_INTERRUPTED = 130 };

/* The CLI's exit code (PRODUCT.md) for an operation that ended with
 * STATUS: 0 done, 1 error, 2 usage or bad input, 3 busy, 4 refused; 130
 * whatever STATUS when INTERRUPTED (a Ctrl-C stopped it). Pure. */
int tui_op_exit_code(int status, bool interrupted);

/* The words that start the message of a failure with STATUS in FRONT
 * ("busy, retry later: ", "refused: ", ...; "" for none). Pure, static. */
const char *tui_op_error_prefix(int status, tui_op_front front);

/* The one-line message of ERR in FRONT into BUF (LEN > 0): "WHAT: " (when
 * WHAT is neither NULL nor ""), the prefix for ERR's status, ERR's message
 * (WHAT cut at 200 bytes, the message at 700, as the console always did).
 * Returns BUF. Pure. */
const char *tui_op_error_text(char *buf, size_t len, const char *what, const cleanup_error *err,
                              tui_op_front front);

/* ---- the success wording (pure) --------------------------------------- */

/* "job 12: prune of library 3 (Movies), phase paused, step 0": the one
 * line that names a job after an action, every text from the database
 * made terminal-safe (sanitize.h). Returns BUF. Pure. */
const char *tui_op_job_line(char *buf, size_t len, const cleanup_job *job);

/* The verb of a done ACTION: "created" (a create or a removal), "sealed",
 * "paused", "resumed", "cancelled"; NULL for any other action (a step, a
 * run, a preview say what they did in their own lines). Pure, static. */
const char *tui_op_done_verb(tui_action action);

/* The one success message of ACTION on JOB (the job after it), for both
 * front ends: the verb and the job line ("paused job 12: prune of library
 * 3 (Movies), phase paused, step 0"); a seal adds where it fenced the
 * library ("; library fenced at high-water id 20000"), a removal that
 * admission is closed. An action without a verb: the job line alone.
 * Returns BUF. Pure. */
const char *tui_op_done_text(char *buf, size_t len, tui_action action, const cleanup_job *job);

/* The success message of creating JOB, whatever its kind: "created" and
 * the job line (a removal's adds that admission is closed, as
 * tui_op_done_text says it). Returns BUF. Pure. */
const char *tui_op_created_text(char *buf, size_t len, const cleanup_job *job);

/* ---- the id rule (pure) ----------------------------------------------- */

/* The one rule for integers typed by an operator, in the CLI's options
 * and arguments and the console's `:` commands alike: S must be decimal
 * digits only (a leading '-' only when MIN < 0): no sign, space, prefix
 * ("0x"), fraction or trailing text, within [MIN, MAX] without overflow;
 * leading zeros are digits ("05" is 5). Returns NULL and sets *OUT, or
 * the rule S broke ("out of range", "digits only: ...", "an empty value")
 * with *OUT untouched. Pure. */
const char *tui_op_int_syntax(const char *s, int64_t min, int64_t max, int64_t *out);

/* Parses S for WHAT ("job id", "--steps") with tui_op_int_syntax. Returns
 * true and sets *OUT; else false with the one message of both front ends
 * in MSG: 'WHAT must be an integer from MIN to MAX, not "S": RULE'. */
bool tui_op_parse_int(int64_t *out, char *msg, size_t len, const char *what, const char *s, int64_t min,
                      int64_t max);

/* An id (job, library, server): tui_op_parse_int from 1 to INT64_MAX. */
bool tui_op_parse_id(int64_t *out, char *msg, size_t len, const char *what, const char *s);

/* ---- the retry rule for busy answers ----------------------------------
 *
 * `--wait SECONDS` in the CLI (job create, seal, pause, resume, cancel,
 * step) and `:wait SECONDS` in the console: after a busy answer, wait and
 * try again, the waits doubling from TUI_OP_WAIT_FIRST_MS up to
 * TUI_OP_WAIT_MAX_MS, none past the deadline; at the deadline the busy
 * error stands (exit 3), its detail saying after how long and how many
 * attempts. Usage:
 *     tui_op_wait_begin(&w, seconds, "--wait");
 *     do rc = call(..., &err); while (rc != CLEANUP_OK && tui_op_wait_again(&w, &err));
 */
enum { TUI_OP_WAIT_FIRST_MS = 50, TUI_OP_WAIT_MAX_MS = 2000 };
typedef struct tui_op_wait {
	double seconds;  /* the wait asked for; 0: one attempt */
	double deadline; /* monotonic seconds */
	int attempts;
	int delay_ms;    /* the next wait */
	const char *what; /* the setting's name for the note ("--wait", ":wait") */
	/* Optional (NULL: none): STOP(ARG) true ends the wait at once (the
	 * busy error stands); RETRYING(W, ERR, LEFT_S, ARG) is told before
	 * each wait, so a front end can say "busy, retrying (N s left)". The
	 * wait sleeps in naps of at most 50 ms when STOP is set. */
	bool (*stop)(void *arg);
	void (*retrying)(const struct tui_op_wait *w, const cleanup_error *err, double left_s, void *arg);
	void *arg;
} tui_op_wait;

/* Starts the clock for SECONDS (0: one attempt); WHAT names the setting
 * in the note ("--wait"); no hooks. */
void tui_op_wait_begin(tui_op_wait *w, double seconds, const char *what);

/* After a failed attempt with ERR: when ERR is busy, the deadline has not
 * passed and STOP did not say stop, tells RETRYING, sleeps the next
 * backoff (at most up to the deadline), clears ERR and returns true (try
 * again). Otherwise returns false, ERR kept; when the wait ran out, ERR's
 * detail says "still busy after WHAT S s (N attempts)". */
bool tui_op_wait_again(tui_op_wait *w, cleanup_error *err);

/* ---- operations on an engine handle ----------------------------------- */

/* What the console's worker hands to the operations and frees in one
 * place (tui_op_result_reset). The operations write into the engine's own
 * result structs (OUT, first), so the CLI passes its own. */
typedef struct tui_op_result {
	cleanup_job job;          /* create, seal, pause/resume/cancel: the job after */
	cleanup_step_result step; /* step, preview */
	cleanup_run_summary run;  /* run */
} tui_op_result;

/* Zeroes R (before first use). */
void tui_op_result_init(tui_op_result *r);

/* Frees what R holds and zeroes it. Accepts NULL. */
void tui_op_result_reset(tui_op_result *r);

/* One step of job JOB_ID into *OUT through the job driver
 * (cleanup/runner.h): open a runner (its lease, never waiting for another
 * runner), its next step, close. Busy (exit 3, naming the holder) beside a
 * runner. Returns the engine's status. */
int tui_op_step(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, cleanup_error *err);

/* What the next step of JOB_ID would do, rolled back, into *OUT. */
int tui_op_preview(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, cleanup_error *err);

/* Pause, resume or cancel (ACTION: ACT_PAUSE, ACT_RESUME, ACT_CANCEL) job
 * JOB_ID; the job after into *OUT. Another action: CLEANUP_EINVAL. */
int tui_op_transition(cleanup_job *out, cleanup_engine *e, int64_t job_id, tui_action action,
                      cleanup_error *err);

/* Seals JOB_ID with EXPECTED IDs (the traversal's unique count); the job
 * after into *OUT. */
int tui_op_seal(cleanup_job *out, cleanup_engine *e, int64_t job_id, int64_t expected, cleanup_error *err);

/* Creates a job of KIND ("prune", "remove-library", "remove-server") on
 * TARGET with MODE (NULL: the default); the new job into *OUT. */
int tui_op_create(cleanup_job *out, cleanup_engine *e, const char *kind, int64_t target, const char *mode,
                  cleanup_error *err);

/* The kind of job a removal action creates: "remove-library" for
 * ACT_REMOVE_LIBRARY, "remove-server" for ACT_REMOVE_SERVER, NULL for any
 * other. Pure. */
const char *tui_op_removal_kind(tui_action action);

/* B1: no statement of an operation waits without bound: the statement
 * timeout of the console's actions and the default --timeout of job step
 * and job run, in seconds (a step takes milliseconds). */
enum { TUI_OP_STATEMENT_TIMEOUT_S = 300 };

/* Fills O with what every run of both front ends shares: no callback, no
 * limits, asynchronous drain steps (durable completion; docs/steps.md,
 * Settings), and one step at a time when MAX_RATE > 0 (a throttled run: a
 * second step in flight would go at once after each pause). */
void tui_op_run_opts_init(cleanup_run_opts *o, double max_rate);

/* Monotonic seconds (CLOCK_MONOTONIC), for deadlines and the throttle. */
double tui_op_mono_s(void);

/* The throttle's sleep, for `job run --max-rate` and the console's runs
 * alike: a step has just ended; waits until tui_throttle_wait (progress.h)
 * lets the next one go, in naps of at most NAP_S seconds. Between naps it
 * asks STOP(ARG) (true: stop now) and RATE(ARG), the steps a second, again
 * (a throttle lifted to 0 ends the wait at once). *NEXT_AT is the
 * throttle's slot (0 before the first step). Returns false when STOP said
 * stop during the wait, true when the next step may go. */
bool tui_op_throttle_sleep(double *next_at, double (*rate)(void *arg), bool (*stop)(void *arg), void *arg,
                           double nap_s);

/* Runs job JOB_ID with O (the job driver's run: cleanup_job_run); the
 * summary into *OUT, also on failure. */
int tui_op_run(cleanup_run_summary *out, cleanup_engine *e, int64_t job_id, const cleanup_run_opts *o,
               cleanup_error *err);

/* Stops the runner of JOB_ID the operator saw, backend PID: its lease
 * ends and the backend is terminated (the engine refuses a PID its lease
 * does not prove, and a runner behind a pooler). */
int tui_op_kill_runner(cleanup_engine *e, int64_t job_id, int pid, cleanup_error *err);

#endif
