/* The job driver: the one home of driving a job (F1-F3).
 * `job step`, `job run`, `worker` and the console's step and run
 * actions all open a runner, step or run it, and close it; they keep only
 * their options, words and drawing.
 *
 * A runner holds the job's runner lease (cleanup.job_runners,
 * sql/functions/062_runner.sql): a row, not a session lock, naming the
 * process that drives the job (host, OS pid, application) and the backend
 * of its last statement. Every step renews it in the step's own
 * transaction, and a heartbeat renews it while the runner waits (busy
 * backoff, a throttle), so it works the same on a direct connection and
 * through a transaction-pooling pooler, and leaves nothing on a pooled
 * server connection. A second runner is refused with EBUSY naming the
 * holder. A lease past its expiry (ttl), one whose direct backend is gone
 * (the runner was killed, the server restarted), or one whose holder runs
 * on this host under an OS pid that no longer exists, is taken over by the
 * next runner, which records "runner lost: HOST:PID (APP), last step N at
 * T" in cleanup.events.
 *
 * One rule each, here and nowhere else: the backoff after a busy step
 * (doubling from backoff_initial_ms to backoff_max_ms), the step commit
 * mode (set at open and after every reconnect), reconnection after a lost
 * connection or a failover (multi-host conninfo; a throttled run too), and
 * whether the job is still runnable (read once at open, then from each
 * step's answer).
 */
#ifndef CLEANUP_RUNNER_H
#define CLEANUP_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"
#include "cleanup/job.h"
#include "cleanup/step.h"

/* The runner holding a job's lease. */
typedef struct cleanup_runner_holder {
	int pid;                 /* the backend of its last statement, 0 when unknown */
	char host[64];           /* the host its process runs on */
	int os_pid;              /* its process id on that host (what to stop), 0 when unknown */
	char app[64];            /* its application_name */
	char client[64];         /* its backend's client address as the server sees it ("" when not visible) */
	char since[24];          /* when it took the lease, YYYY-MM-DD HH:MM:SS */
	char renewed[24];        /* its last renewal */
	int last_step;           /* the last step it ran, -1 none */
	double expires_s;        /* seconds until its lease expires */
	bool direct;             /* false: it connects through a pooler */
} cleanup_runner_holder;

typedef struct cleanup_runner cleanup_runner;

typedef struct cleanup_runner_opts {
	int ttl_s;               /* the lease's life without a renewal (0: 60 s) */
	bool announce;           /* record "runner started" (after the first committed step: a run
	                          * refused at its first step writes nothing) and "runner ended"
	                          * events (a run, the worker; not a single step) */
	double claim_grace_s;    /* how long a held lease is tried again before EBUSY (0: 2 s,
	                          * negative: not at all): a killed runner's backend may still be
	                          * ending when the next runner starts */
	int step_commit;         /* CLEANUP_STEP_COMMIT_*: set at open and after every reconnect */
	volatile sig_atomic_t *interrupt; /* may be NULL: ends waits early */
} cleanup_runner_opts;

/* Opens a runner of job JOB_ID on ENGINE: reads the job (CLEANUP_ENOTFOUND
 * when it does not exist, EREFUSED when it is finished), takes its lease,
 * sets the step commit mode. EBUSY when another runner holds the lease
 * (HOLDER, may be NULL, names it; the error says who). *OUT is released with
 * cleanup_runner_close(). ENGINE must outlive the runner. */
int cleanup_runner_open(cleanup_runner **out, cleanup_engine *engine, int64_t job_id, const cleanup_runner_opts *opts,
                        cleanup_runner_holder *holder, cleanup_error *err);

/* The job as the runner knows it: read at open, updated by every step. */
const cleanup_job *cleanup_runner_job(const cleanup_runner *runner);

/* True when the open took the lease over from a lost runner (HOLDER, may be
 * NULL, gets who it was). */
bool cleanup_runner_took_over(const cleanup_runner *runner, cleanup_runner_holder *holder);

/* Runs the job's next step into *OUT, renewing the lease in the step's
 * transaction (and before it when the last renewal is old: a caller that
 * retries busy steps with its own --wait keeps the lease). EBUSY as the
 * server answered (not retried here: a run's backoff is
 * cleanup_runner_run's, an operator's --wait is the front end's);
 * EREFUSED "lost the runner lease" when another runner took the job over
 * or a console stopped this one. */
int cleanup_runner_step(cleanup_runner *runner, cleanup_step_result *out, cleanup_error *err);

/* Steps the job until it completes or OPTS stops it (cleanup_job_run() is
 * open, this, close). OPTS->step_commit and ->interrupt override the
 * runner's own when set. */
int cleanup_runner_run(cleanup_runner *runner, cleanup_run_summary *out, const cleanup_run_opts *opts,
                       cleanup_error *err);

/* Renews the lease now (the heartbeat of a caller that waits between steps
 * on its own). */
int cleanup_runner_renew(cleanup_runner *runner, cleanup_error *err);

/* Ends the lease (REASON, may be NULL, goes in the "runner ended" event)
 * and frees RUNNER; NULL is fine. A lease lost meanwhile is not an error. */
int cleanup_runner_close(cleanup_runner *runner, const char *reason, cleanup_error *err);

/* Stops the runner of job JOB_ID from a console (kill-runner): only if its
 * live lease proves backend PID is the runner's (a direct connection, the
 * same server life, the backend there since the last renewal). The lease
 * ends, "runner stopped" is recorded, and the backend is terminated
 * (pg_terminate_backend, in ENGINE's rights): the step in flight rolls back
 * and the runner stops at its next step. ENOTFOUND (nothing done) when the
 * job has no runner or another backend holds it now (ERR names it);
 * EREFUSED when its runner connects through a pooler (its backend is
 * shared: stop the process named instead) or the server refused the
 * termination (privileges: the lease is ended all the same). */
int cleanup_job_runner_terminate(cleanup_engine *engine, int64_t job_id, int pid, cleanup_error *err);

/* Fills ERR with EBUSY: job JOB_ID "is already being run by" HOLDER, with
 * a hint to stop that runner first. Returns CLEANUP_EBUSY. */
int cleanup_runner_busy_error(cleanup_error *err, int64_t job_id, const cleanup_runner_holder *holder);

#endif
