/* A simulated sync writer: an ordinary client that inserts, updates and
 * moves inventory items with plain SQL (lab/sql/queries/writer_*.sql) at a
 * given rate, the way a media server's sync does, so that admission and
 * contention can be seen and tested.
 *
 * Each write is one statement in its own short transaction (autocommit,
 * lock_timeout 2 s, statement_timeout 5 s). When the database refuses a
 * write (admission CUAxx, busy 55P03, a timeout, a conflict ...) the writer
 * records a rejection and logs it to cleanup.events (kind 'rejected', via
 * cleanup.log_event, with the job that owns the library when there is one)
 * in a separate short transaction, so the console can show recent NOWAIT
 * rejections.
 *
 * The caller opens the engine with application_name
 * "cleanupctl:writer:<server id|all>". Not thread-safe.
 */
#ifndef CLEANUP_WRITER_H
#define CLEANUP_WRITER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

typedef struct cleanup_writer cleanup_writer;

typedef enum cleanup_writer_op {
	CLEANUP_WRITER_INSERT = 0, /* a new item in a library */
	CLEANUP_WRITER_UPDATE,     /* a new title for an item */
	CLEANUP_WRITER_MOVE        /* an item to another library of the same server */
} cleanup_writer_op;

typedef enum cleanup_writer_outcome {
	CLEANUP_WRITER_OK = 0,     /* the write committed */
	CLEANUP_WRITER_NOOP,       /* no item to update or move (empty library) */
	CLEANUP_WRITER_REJECTED,   /* the database refused it (see sqlstate) */
	CLEANUP_WRITER_LOST,       /* the connection was lost */
	CLEANUP_WRITER_RECONNECTED /* connected again after a loss (ms: how long it took; no write) */
} cleanup_writer_outcome;

typedef struct cleanup_writer_opts {
	double rate;          /* operations per second; 0: as fast as possible */
	int64_t server_id;    /* the server whose libraries get writes; -1: all */
	double duration_s;    /* stop after this long; 0: until stopped */
	int64_t max_ops;      /* stop after this many operations; 0: no limit */
	uint64_t seed;        /* seeds the choice of operations and libraries */
	bool no_log;          /* do not log rejections to cleanup.events */
} cleanup_writer_opts;

/* What one operation did. */
typedef struct cleanup_writer_event {
	cleanup_writer_op op;
	cleanup_writer_outcome outcome;
	int64_t library_id;     /* insert: the library; update, move: the item's library */
	int64_t to_library_id;  /* move: the destination; -1 otherwise */
	int64_t server_id;
	int64_t item_id;        /* the item written; -1 when none */
	int64_t job_id;         /* rejected: the job that owns the library, -1 when none */
	bool logged;            /* the rejection was logged to cleanup.events */
	char sqlstate[6];       /* rejected, lost: the SQLSTATE ("" when none) */
	char message[512];      /* rejected, lost: the server's message */
	double ms;              /* the write's time */
	double at;              /* wall clock, seconds since 1970 */
} cleanup_writer_event;

#define CLEANUP_WRITER_STATES 16

typedef struct cleanup_writer_stats {
	int64_t ops;            /* operations tried */
	int64_t inserted, updated, moved, noop, rejected, lost;
	int64_t logged;         /* rejections logged to cleanup.events */
	int64_t log_failures;   /* rejections that could not be logged */
	int64_t reconnects;
	struct {
		char sqlstate[6];
		int64_t n;
	} rejections[CLEANUP_WRITER_STATES]; /* per SQLSTATE, in order of first appearance */
	size_t nrejections;
	double elapsed_s;       /* of cleanup_writer_run() */
	double total_ms, max_ms;/* write times */
	bool stopped;           /* the run ended because *STOP was set */
} cleanup_writer_stats;

/* Creates a writer on ENGINE (borrowed; it must outlive the writer): sets
 * the session's timeouts and reads the libraries to write to. Fails with
 * CLEANUP_EINVAL for bad options, CLEANUP_ENOTFOUND when OPTS->server_id
 * does not exist or there is no library to write to. On success *OUT owns
 * the writer; free it with cleanup_writer_free(). */
int cleanup_writer_new(cleanup_writer **out, cleanup_engine *engine, const cleanup_writer_opts *opts,
                       cleanup_error *err);

/* Frees W. Accepts NULL. */
void cleanup_writer_free(cleanup_writer *w);

/* Re-reads the libraries to write to (the run does so every few seconds
 * and after a library vanished). */
int cleanup_writer_refresh(cleanup_writer *w, cleanup_error *err);

/* Number of libraries the writer currently writes to. */
size_t cleanup_writer_library_count(const cleanup_writer *w);

/* Does one operation OP on library LIBRARY_ID (move: to TO_LIBRARY_ID) and
 * fills *EV. A refused write is not a failure: it returns CLEANUP_OK with
 * EV->outcome CLEANUP_WRITER_REJECTED (logged unless OPTS->no_log). Returns
 * CLEANUP_ECONN when the connection is lost (EV->outcome LOST), and
 * CLEANUP_ERROR for an error that is our own bug (syntax, undefined
 * object), which stops a run. Counts into the stats. */
int cleanup_writer_do(cleanup_writer_event *ev, cleanup_writer *w, cleanup_writer_op op, int64_t library_id,
                      int64_t to_library_id, cleanup_error *err);

/* Does one operation chosen by the writer's generator: half inserts, three
 * tenths updates, a fifth moves (an update when the library's server has
 * no other library), on a library chosen uniformly. Returns as
 * cleanup_writer_do(); CLEANUP_OK with EV->outcome NOOP and
 * EV->library_id -1 when there is no library. */
int cleanup_writer_tick(cleanup_writer_event *ev, cleanup_writer *w, cleanup_error *err);

/* Called for every operation of a run (REPORT may be NULL). */
typedef void (*cleanup_writer_report_fn)(const cleanup_writer_event *ev, void *arg);

/* Runs operations at OPTS->rate until OPTS->duration_s or OPTS->max_ops is
 * reached or *STOP (may be NULL) becomes non-zero (a signal handler sets
 * it). A lost connection is reconnected with backoff (the run goes on).
 * Returns CLEANUP_OK, or CLEANUP_ERROR (with ERR) when an operation failed
 * with our own bug. */
int cleanup_writer_run(cleanup_writer *w, volatile sig_atomic_t *stop, cleanup_writer_report_fn report,
                       void *arg, cleanup_error *err);

/* The counters so far (owned by W). */
const cleanup_writer_stats *cleanup_writer_get_stats(const cleanup_writer *w);

/* "insert", "update", "move". */
const char *cleanup_writer_op_name(cleanup_writer_op op);

/* Whether W writes through the count cache's mutation gateway
 * inventory.write_items (its role may execute it: the owner, a superuser,
 * a login in cleanup_writer) rather than plain SQL, which a library the
 * cache watches refuses (CU410). */
bool cleanup_writer_uses_gateway(const cleanup_writer *w);

/* Dependent rows (seed 001: retries, review previews, collections, sync
 * status, history) W committed with its inserts; -1 when it writes none
 * (the tables are missing or its role may not write them). */
int64_t cleanup_writer_dependents(const cleanup_writer *w);

/* The simulated writers (application_name cleanupctl:writer:<server>)
 * connected to ENGINE's database now, into *N. */
int cleanup_writer_sessions(int64_t *n, cleanup_engine *engine, cleanup_error *err);

#endif
