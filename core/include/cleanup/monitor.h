/* The console's asynchronous data source.
 *
 * A cleanup_monitor owns one libpq connection that it drives without ever
 * blocking: connecting (PQconnectStart/PQconnectPoll), refresh queries sent
 * with PQsendQueryPrepared, results collected with PQconsumeInput /
 * PQisBusy / PQgetResult, and the LISTEN notifications of the engine
 * (cleanup_jobs, cleanup_events). The caller owns the poll() loop: it asks
 * the monitor for its socket, the events to wait for and the time until the
 * monitor needs attention, and calls cleanup_monitor_service() when either
 * comes. Each completed refresh yields a new snapshot of plain structs.
 *
 * Refresh queries (sql/queries/mon_*.sql) read job rows, admission rows and
 * cleanup.library_stats only: never a COUNT(*) over inventory. The lock
 * query runs on its own slower schedule inside a transaction with a short
 * SET LOCAL statement_timeout; when it times out the snapshot says so and
 * keeps the previous lock rows. When the connection is lost the monitor keeps
 * the last snapshot, marks it stale and reconnects with exponential backoff.
 *
 * Not thread-safe: one thread drives a monitor.
 */
#ifndef CLEANUP_MONITOR_H
#define CLEANUP_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"
#include "cleanup/job.h"
#include "cleanup/locks.h"
#include "cleanup/report.h"

typedef struct cleanup_monitor cleanup_monitor;

/* A server row plus its active job's kind and phase ("" when none). */
typedef struct cleanup_mon_server {
	cleanup_server_row row;
	char job_kind[24];
	char job_phase[16];
} cleanup_mon_server;

/* A library row plus its active job's kind and phase ("" when none) and
 * its count's state (seed 002). row.item_count is the count to show: the
 * count cache's published count for a watched library (fresh, dirty or
 * expired), the statement-trigger counter for an unwatched one, -1 when
 * the cache withholds it. */
typedef struct cleanup_mon_library {
	cleanup_library_row row;
	char job_kind[24];
	char job_phase[16];
	/* cleanup.count_report's state: "fresh", "dirty" (stale: changed since
	 * published), "expired", "withheld" (building, restart required,
	 * capacity, busy: COUNT_REASON says which) or "unwatched" (the count is
	 * the counter's). */
	char count_state[16];
	char count_reason[240];  /* "" when fresh */
} cleanup_mon_library;

/* A job row (json is always NULL here) plus its pace window and its runner
 * (tui/common/progress.h turns the window into a pace and an ETA). */
typedef struct cleanup_mon_job {
	cleanup_job job;
	char last_error_at[16];  /* HH:MM:SS, "" when none */
	/* Draining or finalizing: the steps that started in the last 60 s (at
	 * most the 2000 newest), only its current runner's when it has one. */
	int window_steps;
	int64_t window_rows;     /* their settled rows: deleted + moved + absent + kept */
	double window_first_start; /* epoch seconds: start of the oldest of them, -1 when none */
	double window_last_end;  /* epoch seconds: end of the newest of them, -1 when none */
	double last_step_age_s;  /* seconds since the end of the newest step, -1 when none */
	double unattended_s;     /* seconds since the newest step ended (else since the job was
	                          * sealed or created): how long it has had no runner, when it has
	                          * none; -1 unless draining or finalizing */
	double closed_s;         /* seconds since its library (server) was closed to writers:
	                          * a prune's seal, a removal's creation; -1 unless draining
	                          * or finalizing */
	/* The holder of the job's live runner lease (cleanup/runner.h), if any. */
	int runner_pid;          /* the backend of its last statement, 0 when nobody runs the job */
	char runner_app[64];     /* its application_name */
	char runner_client[64];  /* the host its process runs on */
	int runner_os_pid;       /* its OS process id there (what to stop) */
	char runner_since[16];   /* HH:MM:SS of when it took the lease */
	double runner_age_s;     /* seconds since it took the lease, -1 when unknown */
} cleanup_mon_job;

/* One recorded step of the detail job. */
typedef struct cleanup_mon_step {
	int32_t step_no;
	char action[32];
	int32_t pass_no;
	int64_t library_id;
	int32_t visited, deleted, moved, absent, retained, kept;
	int32_t libraries_deleted, servers_deleted, mutations;
	int32_t dependent_mutations; /* dependents deleted and history detached (seed 001) */
	int32_t claims_in_flight;    /* the job's claims after the step */
	int64_t cursor_from, cursor_to; /* the item-id cursor before and after the step, -1: none */
	/* The external-ID range of a drain step of a prune's first pass in
	 * key order, and of a final-check page (its first 40 characters; ""
	 * when none). */
	char key_from[164], key_to[164];
	double gap_s;            /* seconds from the end of the step before to this one's start, -1: first step */
	char phase_after[16];
	double started_epoch;    /* seconds since 1970 */
	char started[16];        /* HH:MM:SS */
	double duration_ms, lock_hold_ms;
	double parent_lock_ms;   /* -1 when none */
	/* Who ran the step: the backend pid and application_name (at most 64
	 * characters, so 256 bytes of UTF-8) of the session that committed
	 * it (cleanup.job_steps.runner_pid/runner_app); 0 and "" for a step
	 * recorded without them (before sql/schema/010_step_runner.sql). */
	int32_t runner_pid;
	char runner_app[257];
} cleanup_mon_step;

/* One line of the event and audit log. */
typedef struct cleanup_mon_event {
	bool audit;              /* from cleanup.audit, else cleanup.events */
	int64_t id;
	double at_epoch;
	char at[16];             /* HH:MM:SS */
	int64_t job_id;          /* -1 when none */
	char kind[41];           /* event kind or audit action */
	char source[64];         /* application_name of the writer of the row */
	char message[512];
} cleanup_mon_event;

/* A session that holds a lock others need, or may soon: who it is, as
 * the dialog of terminate-holder names it. */
typedef struct cleanup_mon_holder {
	int pid;
	char role[64];
	char application[64];
	char client[64];
	char state[32];
	double xact_age_ms;      /* -1 when no transaction */
	char holds[256];         /* "RowShareLock on cleanup.jobs, ..." ("" when none of our tables) */
	bool idle;               /* idle in a transaction older than 10 s */
} cleanup_mon_holder;

/* Recent NOWAIT rejections and busy retries. */
typedef struct cleanup_mon_contention {
	bool count;              /* a per-(kind, source) count of the last 60 s, else one event */
	char kind[16];           /* "rejected" or "busy" */
	char source[64];
	int64_t n;
	char at[16];             /* HH:MM:SS (of the newest, for counts) */
	int64_t job_id;
	char message[256];
} cleanup_mon_contention;

/* What the console shows. Every array is owned by the snapshot. */
typedef struct cleanup_mon_snapshot {
	uint64_t seq;                      /* increases with every completed refresh */
	double taken_at;                   /* wall clock, seconds since 1970 */
	double db_ms;                      /* time from sending the first query to the last result */
	cleanup_mon_server *servers;
	size_t nservers;
	cleanup_mon_library *libraries;
	size_t nlibraries;
	cleanup_mon_job *jobs;
	size_t njobs;
	int64_t detail_job_id;             /* the job whose steps are below, -1 when none */
	/* A page of its steps, newest first, contiguous in step number: the
	 * newest steps_limit steps numbered at most steps_upto (-1: the newest
	 * steps; cleanup_monitor_set_steps_upto chooses, so the whole history
	 * can be paged from the first step). */
	int64_t steps_upto;
	cleanup_mon_step *steps;
	size_t nsteps;
	/* Steps of the detail job started per second over the last
	 * CLEANUP_MON_RATE_SECONDS seconds, oldest first; rate[last] is the
	 * second that starts at rate_end_epoch. Counted from every step record
	 * (read incrementally), not from the listed steps. */
	int64_t rate_job_id;               /* -1 when none */
	double rate_end_epoch;
	uint32_t rate[120];
	cleanup_mon_event *events;         /* newest first */
	size_t nevents;
	cleanup_mon_contention *contention;
	size_t ncontention;
	/* Locks: refreshed on their own schedule. */
	cleanup_lock_row *locks;
	size_t nlocks;
	bool locks_valid;                  /* at least one lock query succeeded */
	double locks_at;                   /* wall clock of the rows above */
	double locks_ms;                   /* duration of that query */
	char locks_error[160];             /* "" when the last lock query succeeded, else
	                                    * e.g. "locks: timed out" */
	/* Holders (T3), read with the locks: sessions idle in a
	 * transaction for more than 10 s that hold a lock on an engine or
	 * inventory table (idle), and backends that block a lock waiter;
	 * sql/queries/mon_idle_xact.sql. The oldest transactions first. */
	cleanup_mon_holder *holders;
	size_t nholders;
	/* Refresh queries that timed out (statement_timeout, e.g. behind a
	 * locked catalog): a CLEANUP_MON_PART_* bit set. Those parts keep the
	 * previous snapshot's rows, read at stale_parts_at (wall clock), so the
	 * console degrades instead of waiting. 0 when every query answered. */
	unsigned stale_parts;
	double stale_parts_at;
	/* What the server is (F1), read with every refresh: a hot
	 * standby (read-only) and how far its replay is behind (seconds since
	 * the last replayed commit while WAL waits to be replayed; 0 when
	 * replay has caught up with what was received; -1 unknown), and
	 * whether the console reaches it through a pooler (no LISTEN there:
	 * the periodic refresh is what it has). */
	bool standby;
	double replay_lag_s;
	bool pooled;
} cleanup_mon_snapshot;

enum {
	CLEANUP_MON_PART_SERVERS = 1,
	CLEANUP_MON_PART_LIBRARIES = 2,
	CLEANUP_MON_PART_JOBS = 4,
	CLEANUP_MON_PART_STEPS = 8,
	CLEANUP_MON_PART_EVENTS = 16,
	CLEANUP_MON_PART_CONTENTION = 32,
};

#define CLEANUP_MON_RATE_SECONDS 120
/* The steps of one page of the detail job's history (mon_steps.sql). */
#define CLEANUP_MON_STEPS_PAGE 120

typedef struct cleanup_monitor_opts {
	const char *conninfo;    /* NULL or "": libpq environment */
	const char *app_name;    /* NULL: "cleanupctl:console" */
	int refresh_ms;          /* periodic refresh (0: 1000) */
	int locks_ms;            /* lock query interval (0: 3000; -1: never) */
	int locks_timeout_ms;    /* its statement_timeout (0: 250) */
	int notify_min_gap_ms;   /* least time between refreshes caused by NOTIFY (0: 30) */
	int jobs_limit;          /* finished jobs listed besides unfinished ones (0: 20) */
	int steps_limit;         /* steps of the detail job per page (0: 60; at most CLEANUP_MON_STEPS_PAGE) */
	int query_timeout_ms;    /* statement_timeout of every refresh query (0: 2000; -1: none) */
	int events_limit;        /* log lines of each kind: audit rows, lifecycle events, busy retries (0: 100) */
	int backoff_initial_ms;  /* first reconnect delay (0: 250) */
	int backoff_max_ms;      /* cap of the doubling delay (0: 8000) */
} cleanup_monitor_opts;

/* What cleanup_monitor_service() saw; a bit set. */
enum {
	CLEANUP_MON_SNAPSHOT = 1,   /* a new snapshot is available */
	CLEANUP_MON_NOTIFIED = 2,   /* a NOTIFY arrived (a refresh is scheduled) */
	CLEANUP_MON_STATE = 4,      /* connection state changed (lost, connected, ...) */
};

typedef enum cleanup_monitor_state {
	CLEANUP_MON_CONNECTING,     /* a connection attempt is in progress */
	CLEANUP_MON_READY,          /* connected and listening */
	CLEANUP_MON_WAITING         /* disconnected; the next attempt is scheduled */
} cleanup_monitor_state;

/* Creates a monitor and starts connecting (without waiting). On success *OUT
 * owns it; free it with cleanup_monitor_close(). Fails only on bad options
 * (EINVAL) or memory; an unreachable server is reported through the state. */
int cleanup_monitor_open(cleanup_monitor **out, const cleanup_monitor_opts *opts, cleanup_error *err);

/* Closes the connection and frees M and its snapshot. Accepts NULL. */
void cleanup_monitor_close(cleanup_monitor *m);

/* The socket to poll and the events (POLLIN / POLLOUT) to wait for in
 * *EVENTS; -1 when there is none (waiting for a reconnect). */
int cleanup_monitor_fd(const cleanup_monitor *m, short *events);

/* Milliseconds (>= 0) until the monitor wants cleanup_monitor_service()
 * called even without socket activity; NOW is CLOCK_MONOTONIC seconds. */
int cleanup_monitor_timeout_ms(const cleanup_monitor *m, double now);

/* Does whatever is due: advances a connection attempt, reads results and
 * notifications, sends the next query, starts a refresh or a reconnect.
 * Never blocks. Returns a CLEANUP_MON_* bit set. NOW: CLOCK_MONOTONIC s. */
int cleanup_monitor_service(cleanup_monitor *m, double now);

/* The last complete snapshot (never NULL; empty with seq 0 before the
 * first refresh). Valid until the next cleanup_monitor_service(). */
const cleanup_mon_snapshot *cleanup_monitor_snapshot(const cleanup_monitor *m);

/* Schedules a refresh as soon as possible (after the one in flight). */
void cleanup_monitor_refresh_now(cleanup_monitor *m);

/* Sets the periodic refresh interval, clamped to [100, 60000] ms. */
void cleanup_monitor_set_interval(cleanup_monitor *m, int refresh_ms);
int cleanup_monitor_interval(const cleanup_monitor *m);

/* Chooses the job whose recent steps the snapshots carry (-1: none); its
 * newest steps until cleanup_monitor_set_steps_upto says otherwise. */
void cleanup_monitor_set_detail_job(cleanup_monitor *m, int64_t job_id);

/* Chooses the page of the detail job's steps: the steps_limit steps
 * numbered at most UPTO, newest first (-1: the newest). A change
 * schedules a refresh. */
void cleanup_monitor_set_steps_upto(cleanup_monitor *m, int64_t upto);

cleanup_monitor_state cleanup_monitor_get_state(const cleanup_monitor *m);

/* True while the shown snapshot may be out of date because the connection
 * was lost; *SINCE (may be NULL) gets the wall-clock time of the loss. */
bool cleanup_monitor_stale(const cleanup_monitor *m, double *since);

/* The last connection or query error, "" when none. */
const char *cleanup_monitor_last_error(const cleanup_monitor *m);

/* The same failure as the engine's error record: status, SQLSTATE ("" when
 * it did not come from the server), message, detail, hint and what the
 * monitor was doing; status CLEANUP_OK when none. */
const cleanup_error *cleanup_monitor_last_error_record(const cleanup_monitor *m);

/* The statement_timeout of every refresh query in milliseconds (-1:
 * none): a part whose query hits it is kept stale (stale_parts). */
int cleanup_monitor_query_timeout_ms(const cleanup_monitor *m);

/* Connection attempts since the connection was lost (0 while connected). */
int cleanup_monitor_attempts(const cleanup_monitor *m);

/* The server process id of the monitor's connection (0 when none). */
int cleanup_monitor_backend_pid(const cleanup_monitor *m);

/* Where the monitor is connected, for the console's header: "user@host:port/db"
 * into BUF (host is the socket directory for a Unix socket) and the server's
 * version ("15.4") into VERSION; both "" before the first connection. The
 * last connection's values are kept while reconnecting. */
void cleanup_monitor_server(const cleanup_monitor *m, char *buf, size_t len, char *version, size_t vlen);

/* Internal, for tests (integration_test_monitor proves the session is
 * read-only): the engine handle of M's own connection while M is
 * connected, set up and has no query in flight; NULL otherwise (drive
 * cleanup_monitor_service and ask again). Owned by M, valid until the next
 * cleanup_monitor_service(); a statement run on it must leave no result
 * pending. The console never calls it. */
cleanup_engine *cleanup_monitor_engine_int(cleanup_monitor *m);

/* NOTIFY messages received since the monitor was opened. */
uint64_t cleanup_monitor_notifications(const cleanup_monitor *m);

/* A deep copy of SRC (for a paused display that keeps showing it while
 * the monitor goes on refreshing). *OUT is owned by the caller: free it
 * with cleanup_mon_snapshot_free(). */
int cleanup_mon_snapshot_copy(cleanup_mon_snapshot **out, const cleanup_mon_snapshot *src,
                              cleanup_error *err);

/* Frees a snapshot from cleanup_mon_snapshot_copy(). Accepts NULL. */
void cleanup_mon_snapshot_free(cleanup_mon_snapshot *s);

/* The time of a monotonic clock in seconds, as the functions above take it. */
double cleanup_monitor_now(void);

/* Runs the monitor's own poll loop until a snapshot newer than AFTER_SEQ is
 * available or TIMEOUT_MS passed. For tests, benchmarks and plain clients
 * (the console drives the monitor from its own loop instead). Returns 0 when
 * a newer snapshot came, CLEANUP_ECONN / CLEANUP_ERROR on timeout with
 * ERR saying what the monitor was doing. */
int cleanup_monitor_wait(cleanup_monitor *m, uint64_t after_seq, int timeout_ms, cleanup_error *err);

#endif
