/* Lock contention now: who blocks whom in this database.
 *
 * A snapshot comes from one cheap query (sql/queries/locks_tree.sql) over
 * pg_stat_activity and pg_locks, calling pg_blocking_pids() only for the
 * backends that wait for a heavyweight lock. It returns the backends that
 * are blocked or blocking, plus every `cleanupctl:*` backend of the
 * database, and every backend holding a job's runner lease (cleanup/runner.h)
 * with the job and since when, with what a blocked backend waits for. application_name maps
 * backends to jobs (`cleanupctl:job:<id>:<verb>`) and writers
 * (`cleanupctl:writer:<server|all>`).
 *
 * cleanup_locks_tree() orders the rows for display as a blocking tree:
 * each blocker, then (indented) the backends it blocks.
 */
#ifndef CLEANUP_LOCKS_H
#define CLEANUP_LOCKS_H

#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

#define CLEANUP_LOCK_MAX_BLOCKERS 8

typedef struct cleanup_lock_row {
	int pid;
	int blocked_by[CLEANUP_LOCK_MAX_BLOCKERS]; /* pids that block this one (first 8) */
	int nblocked_by;
	char application_name[64];
	char state[24];           /* active, idle in transaction, ... */
	char wait_event_type[24]; /* "" when not waiting */
	char wait_event[40];
	char locktype[24];        /* of the lock it waits for: relation, tuple, transactionid, advisory ... */
	char mode[32];            /* e.g. ShareLock; "" when not waiting for a lock */
	char relation[64];        /* schema.table, or "coordinator of server 3" / "library 5" for
	                           * the engine's advisory locks; "" when unknown */
	double xact_age_ms;       /* age of its transaction, -1 when none */
	double wait_ms;           /* how long it has waited for the lock, -1 when not waiting */
	char query[160];          /* current or last statement, whitespace folded, truncated */
	int64_t job_id;           /* from application_name cleanupctl:job:<id>:<verb>, else -1 */
	int64_t runs_job;         /* the job whose runner lease it holds (job run, a worker's runner,
	                           * the console's run; the id modulo 2^31), else -1 */
	char runner_since[24];    /* with runs_job: its connection time, YYYY-MM-DD HH:MM:SS (each
	                           * run has a connection of its own); else "" */
} cleanup_lock_row;

/* Takes a snapshot with ENGINE's connection (its statement_timeout applies).
 * On success *OUT is a malloc'd array of *N rows (NULL when none; free()
 * it), ordered by pid. Fails with the mapped status of the query's error
 * (a statement timeout is CLEANUP_ERROR, SQLSTATE 57014). */
int cleanup_locks_snapshot(cleanup_lock_row **out, size_t *n, cleanup_engine *engine, cleanup_error *err);

/* The lock snapshot as one JSON document built by PostgreSQL
 * (sql/queries/locks_tree_json.sql): {"database", "at", "backends": [...],
 * "blocked": N}. *OUT is malloc'd; free() it. */
int cleanup_locks_json(char **out, cleanup_engine *engine, cleanup_error *err);

/* The outcome of cleanup_locks_terminate_holder(). */
typedef struct cleanup_holder_outcome {
	int terminated;           /* the backend ended (within 5 s) */
	int refused;              /* nothing was done: it held up no job, or the role may not end it */
	int64_t job_id;           /* the job it held up, -1 when none */
	char outcome[2048];       /* as recorded in cleanup.audit: "done: terminated: pid ..." or "refused: ..." */
	int64_t audit_id;         /* the audit row written */
} cleanup_holder_outcome;

/* Terminates backend PID only if, at the moment of the statement, it
 * still holds up a cleanup job: a job's session waits for a lock it holds,
 * or it holds what a job marked busy needs (cleanup.terminate_holder,
 * sql/functions/087_terminate_holder.sql, re-checks both server-side in
 * the statement that terminates). Done or refused, one audit row
 * (action "terminate-holder") names the holder: pid, role, application,
 * client, state, transaction age, what it holds. OS_USER NULL:
 * cleanup_audit_os_user(); CONFIRMATION what the operator typed (may be
 * NULL). A refusal is CLEANUP_OK with OUT->refused set (the outcome says
 * why); an error (a read-only connection: 25006, a role without EXECUTE)
 * writes no row. */
int cleanup_locks_terminate_holder(cleanup_holder_outcome *out, cleanup_engine *engine, int pid, const char *os_user,
                                   const char *confirmation, cleanup_error *err);

/* The job id in APP_NAME when it is "cleanupctl:job:<id>:<verb>" (or
 * "cleanupctl:job:<id>"), else -1. Pure. */
int64_t cleanup_locks_job_id(const char *app_name);

/* True when ROW is blocked by PID. Pure. */
int cleanup_lock_blocked_by(const cleanup_lock_row *row, int pid);

/* Orders N rows for display as a blocking tree. ORDER (N entries) receives
 * row indexes and DEPTH (N entries) their indentation: 0 for a root (a
 * backend no listed backend blocks), 1 for a backend it blocks, and so on.
 * A backend blocked by several listed backends appears once, under the
 * first of them in the list; cycles (a deadlock being detected) are cut.
 * Trees come first (a root that blocks someone; the tree whose waiter has
 * waited longest first, then in list order), then cycles, then the
 * backends that neither wait nor block, so the first row is the holder
 * that stalls the most whenever there is one. Every row appears exactly once. Returns the number of rows that are
 * blocked by a listed backend. Pure. */
size_t cleanup_locks_tree(size_t *order, int *depth, const cleanup_lock_row *rows, size_t n);

#endif
