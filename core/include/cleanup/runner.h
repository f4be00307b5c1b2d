/* Who runs a job: the single-runner lock (issue 11, item 10).
 *
 * cleanup_job_run() holds the job's runner lock for as long as it steps the
 * job: a session-level advisory lock of the connection that runs it
 * (sql/queries/runner_claim.sql), visible to every other session in
 * pg_locks, released when the run ends or its session does (a killed
 * runner's backend takes it along). A second run of the same job is
 * refused with EBUSY naming the holder; the console shows the holder as
 * the job's runner (cleanup_mon_job.runner_*), and a draining job without
 * one as unattended.
 */
#ifndef CLEANUP_RUNNER_H
#define CLEANUP_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

/* The session holding a job's runner lock. */
typedef struct cleanup_runner_holder {
	int pid;                 /* its backend's process id, 0 when unknown */
	char app[64];            /* its application_name ("" when not visible) */
	char client[64];         /* client host or address, "local" for a Unix socket */
	char since[24];          /* its connection time, YYYY-MM-DD HH:MM:SS ("" when not visible) */
} cleanup_runner_holder;

/* Takes job JOB_ID's runner lock on ENGINE's session without waiting.
 * *CLAIMED true: this session holds it now (a session may take it again:
 * each claim needs a release). false: another session holds it; *HOLDER
 * (may be NULL) names it. Fails only on a database error. */
int cleanup_job_runner_claim(bool *claimed, cleanup_runner_holder *holder, cleanup_engine *engine, int64_t job_id,
                             cleanup_error *err);

/* Releases one hold of job JOB_ID's runner lock on ENGINE's session
 * (nothing when it holds none). */
int cleanup_job_runner_release(cleanup_engine *engine, int64_t job_id, cleanup_error *err);

/* Terminates the backend of job JOB_ID's runner if it still is backend
 * PID (pg_terminate_backend): the recovery demo's "kill the runner". The
 * runner's step in flight rolls back and the job resumes from its last
 * committed step under the next runner. ENOTFOUND (nothing done) when the
 * job has no runner or another backend holds it now (ERR names it);
 * EREFUSED when the server refused the termination (privileges). */
int cleanup_job_runner_terminate(cleanup_engine *engine, int64_t job_id, int pid, cleanup_error *err);

/* Fills ERR with EBUSY: job JOB_ID "is already being run by" HOLDER, with
 * a hint to stop that runner first. Returns CLEANUP_EBUSY. */
int cleanup_runner_busy_error(cleanup_error *err, int64_t job_id, const cleanup_runner_holder *holder);

#endif
