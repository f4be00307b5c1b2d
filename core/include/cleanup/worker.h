/* What a worker (cleanupctl worker) asks the engine: the
 * runnable jobs that no runner holds.
 *
 * A worker's runners each open the job driver on a job (cleanup_runner_open:
 * the per-job runner lease, never waiting) on the connection that will run
 * it, then run it (cleanup_runner_run). This list only says where to try:
 * two workers reading the same list cannot both claim a job, and a job
 * claimed meanwhile by `job run`, the console or another worker is refused
 * to the later claimant with the holder named (cleanup/runner.h).
 */
#ifndef CLEANUP_WORKER_H
#define CLEANUP_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

/* A runnable job: draining or finalizing, with no runner now. */
typedef struct cleanup_worker_candidate {
	int64_t job_id;
	int64_t server_id;
	char kind[24];  /* prune, remove-library, remove-server */
	char phase[16]; /* draining, finalizing */
} cleanup_worker_candidate;

/* Lists at most LIMIT (1 to 10000) runnable jobs without a runner, oldest
 * first, of the NSERVERS servers in SERVERS (0: every server)
 * (sql/queries/worker_candidates.sql). On success *OUT is a malloc'd array
 * of *N entries (NULL when none): free() it. EINVAL for a LIMIT out of
 * range or more than 1000 servers; otherwise fails only on a database
 * error (*OUT NULL, *N 0). */
int cleanup_worker_candidates(cleanup_worker_candidate **out, size_t *n, cleanup_engine *engine,
                              const int64_t *servers, size_t nservers, int limit, cleanup_error *err);

/* Sets *MISSING to the first of the NSERVERS ids in SERVERS (1 to 1000)
 * that names no media server, 0 when every one does
 * (sql/queries/worker_servers.sql). Fails only on a database error. */
int cleanup_worker_servers_missing(int64_t *missing, cleanup_engine *engine, const int64_t *servers,
                                   size_t nservers, cleanup_error *err);

/* The wait before a runner tries again a job that failed (not busy) for
 * the FAILURES-th time in a row: BASE_MS doubled per failure, at most
 * MAX_MS. Pure. */
int cleanup_worker_retry_ms(int failures, int base_ms, int max_ms);

#endif
