/* Bounded steps of a draining job: run one, replay one, preview the next,
 * run until done, and read back the recorded steps.
 *
 * A step is one transaction and one round trip (the server function
 * cleanup.job_step): ordered locks, the schema contract compared, at most
 * 1024 rows of the range examined, 128 deletion candidates visited and 128
 * domain mutations, the job's counters and cursor and the step's record
 * committed together (S1-S13 in ../shared/INVARIANTS.md).
 */
#ifndef CLEANUP_STEP_H
#define CLEANUP_STEP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"
#include "cleanup/job.h"

#define CLEANUP_STEP_BUDGET 128   /* candidates visited and domain mutations per step */
#define CLEANUP_STEP_EXAMINE 1024 /* rows of the range a step may examine (visited + kept) */

/* One recorded step (a row of cleanup.job_steps), or a preview. */
typedef struct cleanup_step_result {
	int64_t job_id;
	int32_t step_no;
	char action[32];        /* drain, pass, drain-claims, drain-library-dependents, final-check,
	                         * delete-library, delete-server, single-transaction */
	int32_t pass_no;
	int64_t library_id;     /* -1 when none */
	int64_t cursor_from, cursor_to;
	int32_t examined;       /* rows of the range passed: visited + kept, <= CLEANUP_STEP_EXAMINE */
	int32_t visited;        /* deletion candidates locked, re-read and compared, <= CLEANUP_STEP_BUDGET:
	                         * deleted + moved + absent + retained */
	int32_t deleted, moved, absent, retained;
	int32_t kept;           /* examined rows passed over because they were seen (prune) */
	int32_t libraries_deleted, servers_deleted;
	int32_t mutations;      /* domain mutations, <= CLEANUP_STEP_BUDGET (except the
	                         * single-transaction comparison mode) */
	int32_t checked;        /* rows read by a final absence check (not visits) */
	/* Seed 001: claims (visited candidates with dependents, claimed instead
	 * of deleted; released when the job deletes them) and the domain
	 * mutations by kind (the budget counts them all). */
	int32_t claimed, released, claims_in_flight;
	int32_t retries_deleted, previews_deleted, collections_deleted, sync_status_deleted, history_detached;
	char check_from[264];   /* final check: the page's items follow this external ID ("" from the start) */
	char check_to[264];     /* final check: the last external ID of the page */
	char phase_after[16];
	double duration_ms;
	double lock_hold_ms;    /* job and library locks */
	double parent_lock_ms;  /* parent row lock of a finalize step, -1 otherwise */
	char started_at[40];
	bool replayed;          /* returned from the record; nothing was done */
	bool preview;           /* computed and rolled back; nothing was done */
	char *json;             /* server-built JSON of the result, owned */
} cleanup_step_result;

/* Frees what R owns and zeroes it. Accepts NULL. */
void cleanup_step_result_reset(cleanup_step_result *r);

/* Runs step STEP_NO of job JOB_ID (draining or finalizing) in one round trip. STEP_NO is the step the
 * caller intends to run: the job's last committed step_no + 1. If STEP_NO
 * has already been committed (a retry after a lost answer), its record is
 * returned with replayed set and nothing is done (S8). Any other number is
 * EINVAL. BUSY_SEEN is the number of busy answers the caller saw and could
 * not record (cleanup_job_note_busy() returned 0); the step adds them to the
 * job's busy_retries. EBUSY on lock contention (nothing changed; retry
 * later), EREFUSED when the job is in another phase, ECONN when the
 * connection drops (the transaction rolled back; the job resumes from its
 * last committed step). On failure *OUT is zeroed; on success release it
 * with cleanup_step_result_reset(). */
int cleanup_job_step_at(cleanup_step_result *out, cleanup_engine *engine, int64_t job_id,
                        int32_t step_no, int busy_seen, cleanup_error *err);

/* Records a busy answer for the console: an event row, and the job's
 * busy_retries / last_error when its row is not locked right now (never
 * waits). *RECORDED tells whether the counter was incremented. */
int cleanup_job_note_busy(bool *recorded, cleanup_engine *engine, int64_t job_id, const char *message,
                          cleanup_error *err);

/* Returns the recorded result of committed step STEP_NO (S8). Deletes
 * nothing. ENOTFOUND when that step has not been committed. */
int cleanup_job_step_replay(cleanup_step_result *out, cleanup_engine *engine, int64_t job_id,
                            int32_t step_no, cleanup_error *err);

/* Computes what the next step would delete, move and retain, in a READ
 * ONLY transaction that is rolled back: no locks, no mutations. A
 * prediction at one snapshot; the step itself re-validates every row. */
int cleanup_job_step_preview(cleanup_step_result *out, cleanup_engine *engine, int64_t job_id,
                             cleanup_error *err);

/* The most recent LIMIT steps of JOB_ID, newest first. *OUT is a calloc'd
 * array of *N results: release with cleanup_step_results_free(). */
int cleanup_job_steps_list(cleanup_step_result **out, size_t *n, cleanup_engine *engine,
                           int64_t job_id, int limit, cleanup_error *err);
void cleanup_step_results_free(cleanup_step_result *r, size_t n);

/* Progress of cleanup_job_run(), passed to the callback after every step. */
typedef struct cleanup_run_progress {
	const cleanup_job *job;           /* the job after the step */
	const cleanup_step_result *step;  /* the step just committed (its json is empty: the run
	                                   * loop does not build it); NULL after a busy answer */
	const cleanup_error *busy;        /* the busy answer, when step is NULL */
	int steps_done;                   /* steps committed by this run */
	int busy_retries;                 /* busy answers seen by this run */
	double elapsed_s;
} cleanup_run_progress;

/* Returns false to stop the run after this step. */
typedef bool (*cleanup_run_callback)(const cleanup_run_progress *p, void *arg);

/* The step commit mode a run keeps on its connection (cleanup_run_opts.step_commit). */
enum {
	CLEANUP_STEP_COMMIT_SESSION = 0, /* leave the session's setting alone */
	CLEANUP_STEP_COMMIT_SYNC = 1,    /* cleanup.step_synchronous_commit = on */
	CLEANUP_STEP_COMMIT_ASYNC = 2,   /* cleanup.step_synchronous_commit = off */
};

typedef struct cleanup_run_opts {
	int max_steps;           /* 0: no limit */
	double deadline_s;       /* 0: none; an option of the caller, never an engine constant */
	int backoff_initial_ms;  /* first wait after a busy step (0: 10 ms) */
	int backoff_max_ms;      /* cap of the doubling backoff (0: 1000 ms) */
	int max_busy_retries;    /* consecutive busy answers before giving up (0: 100) */
	int max_reconnects;      /* a lost connection: reconnect, read the job's last
	                          * committed step and go on, this many times in a row
	                          * (0: give up with ECONN) */
	bool no_pipeline;        /* one step at a time; by default the next step is sent
	                          * before the previous answer is read (libpq pipeline),
	                          * so one step already sent still runs after a stop */
	cleanup_run_callback callback; /* may be NULL */
	void *callback_arg;
	volatile sig_atomic_t *interrupt; /* may be NULL; when it becomes non-zero (a
	                          * signal handler sets it: Ctrl-C) no further step is
	                          * started: the step running (and one already sent)
	                          * finishes, and the run stops with "interrupted" */
	int step_commit;         /* CLEANUP_STEP_COMMIT_SYNC / _ASYNC: the run sets this
	                          * mode (cleanup_step_set_synchronous_commit) at its start
	                          * and again after every reconnect, whose new session has
	                          * none of the old one's settings; SESSION (0): the run
	                          * leaves the setting alone, and a mode set beforehand on
	                          * the connection is lost at the first reconnect */
} cleanup_run_opts;

typedef struct cleanup_run_summary {
	int steps;               /* steps committed by this run */
	int busy_retries;
	double elapsed_s;
	bool completed;          /* the job reached completed */
	bool stopped;            /* max_steps, deadline, the callback or the interrupt stopped it */
	char stop_reason[24];    /* "completed", "max-steps", "deadline", "callback", "interrupted",
	                          * "busy", "error" */
	int reconnects;          /* connections re-opened after a loss */
	int replayed;            /* steps returned as already committed (after a reconnect) */
	int32_t acked_step_no;   /* the highest step number the server acknowledged as
	                          * committed since the job row was last read */
	int lost_steps;          /* acknowledged steps that the job row, read again after a
	                          * reconnect or at the end, does not hold: an asynchronous
	                          * commit lost in a server crash (they run again) */
	bool verified;           /* job was read from the database at the end; false when it
	                          * could not be reached: job is then the run's own view of
	                          * acknowledged steps, which a crash may have undone */
	cleanup_job job;         /* the job at the end; release with cleanup_job_reset */
} cleanup_run_summary;

/* Reconciles OUT with DB, the job row as the database has it now (after a
 * reconnect, at the end of a run): acknowledged steps beyond DB->step_no
 * were lost (OUT->lost_steps grows by their number, which is returned);
 * OUT->job becomes DB (ownership of DB's json moves to OUT; *DB is zeroed),
 * OUT->acked_step_no becomes DB->step_no and OUT->verified true. Pure. */
int cleanup_run_reconcile(cleanup_run_summary *out, cleanup_job *db);

/* Sets the step commit mode of this connection (docs/steps.md, "Settings"):
 * SYNCHRONOUS true (the default) waits for each step's WAL flush; false sets
 * cleanup.step_synchronous_commit = off, so steps commit without waiting
 * (a server crash may lose the last steps whole; they run again). A session
 * setting: cleanup_engine_reconnect() does not carry it over, so a run
 * that may reconnect sets cleanup_run_opts.step_commit instead. */
int cleanup_step_set_synchronous_commit(cleanup_engine *engine, bool synchronous, cleanup_error *err);

/* Steps JOB_ID until it completes or OPTS stops it, retrying busy steps with
 * bounded exponential backoff. Returns CLEANUP_OK when the job completed or
 * was stopped by OPTS; EBUSY when max_busy_retries consecutive steps were
 * busy; another status on error (OUT still describes the progress made).
 * After every reconnect and at the end the job row is read again and
 * reconciled (cleanup_run_reconcile), so OUT->job.step_no is what the
 * database holds, not what was acknowledged; at the end a lost connection
 * is re-opened once just to read it (OUT->verified false when that fails). */
int cleanup_job_run(cleanup_run_summary *out, cleanup_engine *engine, int64_t job_id,
                    const cleanup_run_opts *opts, cleanup_error *err);

#endif
