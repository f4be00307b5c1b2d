/* Private to core/: the console monitor's state machine (monitor.c).
 *
 * The monitor runs "cycles" of operations on its one connection, one
 * operation in flight at a time: a setup cycle after connecting (LISTEN,
 * prepare the named queries), refresh cycles (servers, libraries, jobs,
 * steps of the detail job, events, contention) and lock cycles (BEGIN +
 * SET LOCAL statement_timeout, the lock query, COMMIT or ROLLBACK). A
 * refresh cycle fills a pending snapshot that replaces the visible one only
 * when the cycle completes, so the console never shows a half-read state.
 */
#ifndef CLEANUP_MONITOR_INT_H
#define CLEANUP_MONITOR_INT_H

#include <libpq-fe.h>
#include "cleanup/monitor.h"
#include "engine_int.h"

typedef enum mon_op {
	MON_OP_NONE = 0,
	MON_OP_PROBE,        /* what the server is: pooled, standby (engine_probe_result) */
	MON_OP_LISTEN,       /* direct connections only; no LISTEN on a standby */
	MON_OP_PREPARE,      /* prepare[prep_index] */
	MON_OP_SERVERS,
	MON_OP_LIBRARIES,
	MON_OP_JOBS,
	MON_OP_STEPS,
	MON_OP_STEP_RATE,    /* new step records of the detail job, for its step-rate ring */
	MON_OP_EVENTS,
	MON_OP_CONTENTION,
	MON_OP_ROLE,         /* standby and replay lag, each refresh */
	MON_OP_TX_BEGIN,     /* behind a pooler: the refresh is one read-only transaction */
	MON_OP_TX_END,       /* with its settings local to it, then ROLLBACK */
	MON_OP_REFRESH_DONE, /* marker: the refresh cycle is complete */
	MON_OP_LOCKS_BEGIN,
	MON_OP_LOCKS,
	MON_OP_HOLDERS,      /* mon_idle_xact.sql, in the lock query's transaction */
	MON_OP_LOCKS_END,
	MON_OP_LOCKS_DONE    /* marker */
} mon_op;

#define MON_MAX_OPS 16

struct cleanup_monitor {
	/* options */
	int refresh_ms, locks_ms, locks_timeout_ms, notify_gap_ms;
	int jobs_limit, steps_limit, events_limit;
	int query_timeout_ms;                /* -1: none */
	int backoff_initial_ms, backoff_max_ms;

	/* connection: an engine handle (its conninfo, application name,
	 * connection parameters, prepared statements and error records),
	 * driven without blocking; db->conn is NULL while waiting */
	cleanup_engine *db;
	cleanup_monitor_state state;
	PostgresPollingStatusType poll_want; /* while connecting */
	double connect_started;              /* monotonic */
	double next_attempt;                 /* monotonic, while waiting */
	int attempts;
	int backoff_ms;
	bool stale;
	double stale_since;                  /* wall clock */
	cleanup_error error;                 /* the last failure, as the engine records it */
	char last_error[256];                /* the same as one line: "what: message" */

	/* the cycle in flight */
	mon_op ops[MON_MAX_OPS];
	int nops, opi;
	bool op_sent;                        /* ops[opi] has been sent, results pending */
	bool op_failed;                      /* ops[opi] returned an error */
	int prep_index;
	double cycle_started;                /* monotonic */

	/* schedule (monotonic seconds) */
	double refresh_due;
	double locks_due;
	double last_refresh_start;

	int64_t detail_job_id;
	int64_t steps_upto;                  /* the detail job's step page: -1 newest */
	uint64_t notifications;

	/* Where we are connected (kept while reconnecting). */
	char where[256];
	char server_version[32];

	/* Engine events read so far (newest first, at most events_limit), so
	 * that each refresh reads only the events after events_seen (less a
	 * margin for transactions that commit out of id order): a rejection
	 * storm costs a refresh only its new rows. */
	cleanup_mon_event *ecache;
	size_t necache;
	int64_t events_seen;                 /* the newest event id seen, 0: none yet */

	/* The detail job's step-rate ring: steps started per epoch second,
	 * rate[sec % CLEANUP_MON_RATE_SECONDS] for the seconds up to
	 * rate_head; fed with the steps after rate_last_step. */
	int64_t rate_job_id;
	int64_t rate_last_step;              /* -1: nothing read yet */
	int64_t rate_head;                   /* newest second the ring holds */
	uint32_t rate[CLEANUP_MON_RATE_SECONDS];

	cleanup_mon_snapshot *pending;       /* being filled by a refresh cycle */
	cleanup_mon_snapshot *current;       /* what the console shows */
	cleanup_lock_row *pending_locks;
	size_t pending_nlocks;
	char pending_locks_error[160];
	cleanup_mon_holder *pending_holders;
	size_t pending_nholders;
	double locks_started;
};

/* The reconnect delay after ATTEMPT (1-based) failed attempts: INITIAL_MS
 * doubled per attempt, capped at MAX_MS. Pure. */
int monitor_backoff_ms(int attempt, int initial_ms, int max_ms);

#endif
