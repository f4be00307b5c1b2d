/* bench_cleanup: the headline figures, measured side by side in one run on
 * one data set (docs/benchmarks.md).
 *
 *  1. Manifest loading: the seen IDs of a prune job appended through the real
 *     append path (cleanup_job_append, 128 IDs a call, one transaction and
 *     one round trip each), then through cleanup_job_append_many (the same
 *     calls pipelined, still one transaction each), and that with
 *     synchronous_commit off for the session.
 *  2. Prune: one DELETE ... WHERE NOT EXISTS (manifest) vs. the bounded prune
 *     (cleanup_job_run) of the same data, with steps committed synchronously
 *     and with the step setting synchronous_commit off, each on a fresh copy
 *     of one template database; the times and ratios, and the steps' lock
 *     holds.
 *  3. Remove-library: single-transaction mode vs. bounded mode on fresh
 *     copies of one template, each with a concurrent writer on another
 *     library of the same server timing every statement; the writer's
 *     maximum and p99 wait, the steps' lock holds and the parent lock hold.
 *
 * Machines are noisy: compare the ratios of one run, not absolute times
 * across runs. The program talks to the PostgreSQL given by --db (the
 * sandbox that scripts/bench.sh starts) and creates and drops databases
 * named cleanup_lab_bench_*. Its SQL lives in bench/sql/, one statement a
 * file; database names come from the fixed list below.
 */
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/engine.h"
#include "cleanup/install.h"
#include "cleanup/job.h"
#include "cleanup/seed.h"
#include "cleanup/step.h"
#include "bench_common.h"

/* The databases this program creates: a fixed list, so that no identifier
 * ever comes from input. */
#define DB_PRUNE_TPL  "cleanup_lab_bench_prune_tpl"
#define DB_APPEND     "cleanup_lab_bench_append"
#define DB_REMOVE_TPL "cleanup_lab_bench_remove_tpl"
#define DB_RUN        "cleanup_lab_bench_run"
/* The parent-row reader's target wait during a bounded removal. */
#define READER_TARGET_MS 15
static const char *const bench_dbs[] = {DB_PRUNE_TPL, DB_APPEND, DB_REMOVE_TPL, DB_RUN, NULL};

typedef struct bench_opts {
	const char *db;           /* conninfo of the server (any database) */
	const char *sql_dir;
	int64_t items;            /* prune library size */
	int64_t seen_every;       /* every N-th item was seen: 2 = half unseen */
	int64_t library_items;    /* remove-library target size */
	int64_t writer_items;     /* the writer's own library */
	int writer_interval_ms;   /* pause between writer statements */
	int rounds;               /* prune and removal comparisons */
	bool skip_prune, skip_remove, skip_append_pipeline, keep;
} bench_opts;

/* One timed writer statement. */
typedef struct writer_sample {
	double at;      /* start, seconds since the bench started */
	double ms;      /* until success, busy retries included */
	int busy;       /* 55P03 answers before success */
	bool failed;    /* another error */
} writer_sample;

typedef struct writer_state {
	const bench_opts *opts;
	char conninfo[4096];
	int64_t library_id;
	bool target;          /* writes into the library being removed */
	bool reader;          /* reads the target library's and server's rows */
	int64_t server_id;    /* reader: the server's row */
	int lock_timeout_ms;  /* reader: its session's lock_timeout (0: none); a
	                       * statement cancelled by it is counted busy */
	volatile int stop;
	writer_sample *samples;
	size_t n, cap;
	int errors;
	int64_t inserts_ok;
	char first_error[512];
} writer_state;

/* Latency figures of a set of samples, in milliseconds. */
typedef struct lat_stats {
	size_t n;
	double p50, p99, max;
	int busy, errors;
} lat_stats;

/* Figures of job_steps for one job. */
typedef struct step_stats {
	int64_t steps, examined, visited, deleted, max_mutations, max_visited, max_examined, parent_steps, check_steps;
	double lock_p50, lock_p99, lock_max, dur_p50, dur_p99, dur_max, parent_lock_max, check_ms, check_lock_max;
} step_stats;

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static double col_d(const PGresult *r, const char *name)
{
	int k = PQfnumber(r, name);

	return k < 0 || PQgetisnull(r, 0, k) ? -1 : strtod(PQgetvalue(r, 0, k), NULL);
}

/* The bench's own statements in plain libpq, on O's server (bench_common.h). */
static PGconn *pg_open(const bench_opts *o, const char *db, const char *app)
{
	return bench_open(o->db, db, app);
}

static void admin(const bench_opts *o, const char *name, const char *db, const char *tpl)
{
	bench_admin(o->db, name, db, tpl);
}

/* A fresh copy of TPL as DB_RUN, checkpointed so each timed run starts from
 * the same state. */
static void fresh_copy(const bench_opts *o, const char *tpl)
{
	PGconn *c;

	admin(o, "db_drop", DB_RUN, NULL);
	admin(o, "db_copy", DB_RUN, tpl);
	c = pg_open(o, DB_RUN, "bench:checkpoint");
	PQclear(bench_run(c, "checkpoint", 0, NULL));
	PQfinish(c);
}

static void vacuum_checkpoint(const bench_opts *o, const char *db)
{
	PGconn *c = pg_open(o, db, "bench:vacuum");

	PQclear(bench_run(c, "vacuum", 0, NULL));
	PQclear(bench_run(c, "checkpoint", 0, NULL));
	PQfinish(c);
}

static cleanup_engine *engine_open(const bench_opts *o, const char *db, const char *app)
{
	char ci[4096];
	cleanup_engine *e = NULL;
	cleanup_error err;

	bench_conninfo(ci, sizeof ci, o->db, db);
	if (cleanup_engine_open(&e, ci, app, &err) != CLEANUP_OK)
		bench_fatal_err("connecting", &err);
	return e;
}

/* A new database DB with the schema and SERVERS x LIBRARIES x ITEMS. */
static void fresh_db(const bench_opts *o, const char *db, int64_t items)
{
	cleanup_seed_spec spec = {1, 1, items, 0};
	cleanup_install_result ir;
	cleanup_seed_result sr;
	cleanup_engine *e;
	cleanup_error err;

	admin(o, "db_drop", db, NULL);
	admin(o, "db_create", db, NULL);
	e = engine_open(o, db, "bench:setup");
	if (cleanup_install(&ir, e, &err) != CLEANUP_OK)
		bench_fatal_err("install", &err);
	if (cleanup_seed(&sr, e, &spec, &err) != CLEANUP_OK)
		bench_fatal_err("seed", &err);
	bench_note("%s: seeded %" PRId64 " items in %.1f s", db, sr.items, sr.seconds);
	cleanup_engine_close(e);
}

static void first_library(PGconn *c, int64_t *library, int64_t *server)
{
	PGresult *r = bench_run(c, "first_library", 0, NULL);

	if (PQntuples(r) != 1)
		bench_fatal("no library in the seeded database");
	*library = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	*server = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	PQclear(r);
}

static void step_stats_of(step_stats *s, PGconn *c, int64_t job)
{
	char jb[24];
	const char *p[1] = {jb};
	PGresult *r;

	snprintf(jb, sizeof jb, "%" PRId64, job);
	r = bench_run(c, "step_stats", 1, p);
	s->steps = (int64_t)col_d(r, "steps");
	s->examined = (int64_t)col_d(r, "examined");
	s->visited = (int64_t)col_d(r, "visited");
	s->deleted = (int64_t)col_d(r, "deleted");
	s->max_mutations = (int64_t)col_d(r, "max_mutations");
	s->max_visited = (int64_t)col_d(r, "max_visited");
	s->max_examined = (int64_t)col_d(r, "max_examined");
	s->check_steps = (int64_t)col_d(r, "check_steps");
	s->check_ms = col_d(r, "check_ms");
	s->check_lock_max = col_d(r, "check_lock_max");
	s->parent_steps = (int64_t)col_d(r, "parent_steps");
	s->lock_p50 = col_d(r, "lock_p50");
	s->lock_p99 = col_d(r, "lock_p99");
	s->lock_max = col_d(r, "lock_max");
	s->dur_p50 = col_d(r, "dur_p50");
	s->dur_p99 = col_d(r, "dur_p99");
	s->dur_max = col_d(r, "dur_max");
	s->parent_lock_max = col_d(r, "parent_lock_max");
	PQclear(r);
}

static void print_step_stats(const char *label, const step_stats *s)
{
	printf("  %s: %" PRId64 " steps, %" PRId64 " examined, %" PRId64 " visited, %" PRId64 " deleted; per step at most "
	       "%" PRId64 " examined, %" PRId64 " visited, %" PRId64 " mutations\n",
	       label, s->steps, s->examined, s->visited, s->deleted, s->max_examined, s->max_visited, s->max_mutations);
	printf("    step lock hold (job + library locks): p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", s->lock_p50,
	       s->lock_p99, s->lock_max);
	printf("    step duration (server side):          p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", s->dur_p50,
	       s->dur_p99, s->dur_max);
	if (s->check_steps > 0)
		printf("    final absence check: %" PRId64 " pages, %.1f ms in all, longest lock hold %.3f ms\n", s->check_steps,
		       s->check_ms, s->check_lock_max);
	if (s->parent_steps > 0)
		printf("    parent row lock (finalize steps: %" PRId64 "): max %.3f ms\n", s->parent_steps,
		       s->parent_lock_max);
}

/* ---- 1. manifest loading ---- */

/* The external IDs of library LIB that a traversal saw (every SEEN_EVERY-th). */
static char **seen_ids(PGconn *c, int64_t lib, int64_t every, size_t *n)
{
	char lb[24], eb[24];
	const char *p[2] = {lb, eb};
	PGresult *r;
	char **ids;
	int i, rows;

	snprintf(lb, sizeof lb, "%" PRId64, lib);
	snprintf(eb, sizeof eb, "%" PRId64, every);
	r = bench_run(c, "seen_ids", 2, p);
	rows = PQntuples(r);
	ids = calloc((size_t)rows + 1, sizeof *ids);
	if (!ids)
		bench_fatal("out of memory");
	for (i = 0; i < rows; i++)
		if (!(ids[i] = strdup(PQgetvalue(r, i, 0))))
			bench_fatal("out of memory");
	PQclear(r);
	*n = (size_t)rows;
	return ids;
}

/* Appends IDS through cleanup_job_append, 128 a call; returns seconds. */
static double append_sequential(cleanup_engine *e, int64_t job, char **ids, size_t n, int *calls)
{
	cleanup_append_result ar;
	cleanup_error err;
	double t0 = bench_now();
	size_t i, k;

	*calls = 0;
	for (i = 0; i < n; i += k) {
		k = n - i < CLEANUP_APPEND_MAX ? n - i : CLEANUP_APPEND_MAX;
		if (cleanup_job_append(&ar, e, job, (const char *const *)ids + i, k, &err) != CLEANUP_OK)
			bench_fatal_err("append", &err);
		cleanup_job_reset(&ar.job);
		(*calls)++;
	}
	return bench_now() - t0;
}

typedef struct prune_setup {
	int64_t library, server, job, high_water, seen;
	double append_s, append_pipe_s, append_async_s;
	int append_calls, append_pipe_calls, append_async_calls;
} prune_setup;

/* Creates a prune job in DB_APPEND (a copy of the unsealed data), appends
 * IDS with cleanup_job_append_many (the engine's pipelined path: up to
 * CLEANUP_APPEND_WINDOW calls of 128 in flight, each its own transaction),
 * with synchronous_commit off for the session when ASYNC, checks the
 * manifest and returns the seconds the appends took. */
static double pipelined_variant(const bench_opts *o, int64_t library, char **ids, size_t n, bool async,
                                int *calls)
{
	cleanup_append_totals tot;
	cleanup_engine *e;
	cleanup_job job;
	cleanup_error err;
	int64_t pjob;
	double t0, secs;

	admin(o, "db_drop", DB_APPEND, NULL);
	admin(o, "db_copy", DB_APPEND, DB_PRUNE_TPL);
	e = engine_open(o, DB_APPEND, "bench:collector");
	if (cleanup_job_create(&job, e, "prune", library, NULL, &err) != CLEANUP_OK)
		bench_fatal_err("job create prune (pipelined copy)", &err);
	pjob = job.id;
	cleanup_job_reset(&job);
	if (async && cleanup_engine_exec(e, bench_sql("async_commit"), &err) != CLEANUP_OK)
		bench_fatal_err("synchronous_commit off", &err);
	bench_note("appending %zu seen IDs with cleanup_job_append_many (%d calls in flight%s)", n, CLEANUP_APPEND_WINDOW,
	     async ? ", synchronous_commit off" : "");
	memset(&tot, 0, sizeof tot);
	t0 = bench_now();
	if (cleanup_job_append_many(&tot, e, pjob, (const char *const *)ids, n, &err) != CLEANUP_OK)
		bench_fatal_err("append_many", &err);
	secs = bench_now() - t0;
	*calls = (int)tot.calls;
	if (cleanup_job_get(&job, e, pjob, &err) != CLEANUP_OK)
		bench_fatal_err("job get", &err);
	if (job.manifest_count != (int64_t)n)
		bench_fatal("pipelined append left %" PRId64 " IDs in the manifest, expected %zu", job.manifest_count, n);
	cleanup_job_reset(&job);
	cleanup_engine_close(e);
	admin(o, "db_drop", DB_APPEND, NULL);
	return secs;
}

/* Builds DB_PRUNE_TPL: one library of o->items items, a prune job whose
 * manifest holds every o->seen_every-th external ID (loaded through the
 * real append path and timed), sealed. Also times the pipelined append on
 * a copy. */
static void setup_prune(prune_setup *ps, const bench_opts *o)
{
	cleanup_engine *e;
	cleanup_job job;
	cleanup_error err;
	PGconn *c;
	char **ids;
	size_t n, i;

	memset(ps, 0, sizeof *ps);
	fresh_db(o, DB_PRUNE_TPL, o->items);
	vacuum_checkpoint(o, DB_PRUNE_TPL);

	c = pg_open(o, DB_PRUNE_TPL, "bench:setup");
	first_library(c, &ps->library, &ps->server);
	ids = seen_ids(c, ps->library, o->seen_every, &n);
	ps->seen = (int64_t)n;
	PQfinish(c);

	/* The pipelined variants first, on copies of the unsealed data. */
	if (!o->skip_append_pipeline) {
		ps->append_pipe_s = pipelined_variant(o, ps->library, ids, n, false, &ps->append_pipe_calls);
		ps->append_async_s = pipelined_variant(o, ps->library, ids, n, true, &ps->append_async_calls);
	}

	e = engine_open(o, DB_PRUNE_TPL, "bench:collector");
	if (cleanup_job_create(&job, e, "prune", ps->library, NULL, &err) != CLEANUP_OK)
		bench_fatal_err("job create prune", &err);
	ps->job = job.id;
	cleanup_job_reset(&job);
	bench_note("appending %zu seen IDs to job %" PRId64 " (cleanup_job_append, 128 a call)", n, ps->job);
	ps->append_s = append_sequential(e, ps->job, ids, n, &ps->append_calls);
	if (cleanup_job_seal(&job, e, ps->job, ps->seen, &err) != CLEANUP_OK)
		bench_fatal_err("seal", &err);
	ps->high_water = job.high_water_id;
	cleanup_job_reset(&job);
	cleanup_engine_close(e);
	vacuum_checkpoint(o, DB_PRUNE_TPL);
	for (i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

/* ---- 2. prune: one DELETE vs. bounded ---- */

/* One bounded run of a job on a fresh copy. */
typedef struct bounded_run {
	double seconds;
	cleanup_run_summary sum;
	step_stats st;
	bool exact;
} bounded_run;

typedef struct prune_round {
	double delete_s;
	int64_t delete_rows;
	bounded_run sync, async; /* steps with synchronous_commit on / off */
} prune_round;

static void run_one_delete(prune_round *pr, const bench_opts *o, const prune_setup *ps)
{
	char jb[24], lb[24], hb[24];
	const char *p[3] = {jb, lb, hb};
	PGconn *c;
	PGresult *r;
	double t0;

	fresh_copy(o, DB_PRUNE_TPL);
	c = pg_open(o, DB_RUN, "bench:one-delete");
	snprintf(jb, sizeof jb, "%" PRId64, ps->job);
	snprintf(lb, sizeof lb, "%" PRId64, ps->library);
	snprintf(hb, sizeof hb, "%" PRId64, ps->high_water);
	PQclear(bench_run(c, "anchor_open", 1, p)); /* the library open, as a sync finds it */
	t0 = bench_now();
	r = bench_run(c, "prune_one_delete", 3, p);
	pr->delete_s = bench_now() - t0;
	pr->delete_rows = strtoll(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	PQfinish(c);
	bench_note("one DELETE: %" PRId64 " rows in %.3f s", pr->delete_rows, pr->delete_s);
}

/* The bounded prune of a fresh copy, steps committed with or without
 * waiting for the WAL flush (cleanup_step_set_synchronous_commit). */
static void run_bounded_prune(bounded_run *br, const bench_opts *o, const prune_setup *ps, bool synchronous)
{
	cleanup_run_opts ro;
	cleanup_engine *e;
	cleanup_error err;
	PGconn *c;
	char lb[24];
	const char *p[1] = {lb};
	int64_t left;
	double t0;
	int rc;

	fresh_copy(o, DB_PRUNE_TPL);
	memset(&ro, 0, sizeof ro);
	e = engine_open(o, DB_RUN, "bench:bounded-prune");
	if (cleanup_step_set_synchronous_commit(e, synchronous, &err) != CLEANUP_OK)
		bench_fatal_err("step commit mode", &err);
	t0 = bench_now();
	rc = cleanup_job_run(&br->sum, e, ps->job, &ro, &err);
	br->seconds = bench_now() - t0;
	if (rc != CLEANUP_OK)
		bench_fatal_err("bounded prune", &err);
	cleanup_engine_close(e);
	c = pg_open(o, DB_RUN, "bench:check");
	snprintf(lb, sizeof lb, "%" PRId64, ps->library);
	left = bench_int(c, "item_count", 1, p);
	step_stats_of(&br->st, c, ps->job);
	PQfinish(c);
	br->exact = br->sum.completed && strcmp(br->sum.job.phase, "completed") == 0 &&
	            br->sum.job.deleted == o->items - ps->seen && left == ps->seen;
	bench_note("bounded prune (synchronous_commit %s): %" PRId64 " deleted in %d steps, %.3f s (%s)",
	     synchronous ? "on" : "off", br->sum.job.deleted, br->sum.steps, br->seconds,
	     br->exact ? "exact" : "NOT EXACT");
}

/* ---- 3. remove-library with a concurrent writer ---- */

static void writer_record(writer_state *w, double at, double ms, int busy, bool failed)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 4096;
		writer_sample *s = realloc(w->samples, cap * sizeof *s);

		if (!s)
			bench_fatal("out of memory");
		w->samples = s;
		w->cap = cap;
	}
	w->samples[w->n].at = at;
	w->samples[w->n].ms = ms;
	w->samples[w->n].busy = busy;
	w->samples[w->n].failed = failed;
	w->n++;
}

/* A writer thread. WRITER_OTHER alternately inserts a new item into its
 * library and updates an existing one, each statement its own transaction,
 * timed from its first attempt to its success (busy answers retried after
 * 1 ms). WRITER_TARGET is a sync writer unaware of the removal: it inserts
 * into the library being removed and times each statement until its answer,
 * whatever it is (a success before the fence, a rejection after it). */
static void *writer_main(void *arg)
{
	writer_state *w = arg;
	const char *keys[] = {"dbname", "application_name", NULL};
	const char *vals[] = {w->conninfo, w->target ? "bench:writer-target" : "bench:writer-other", NULL};
	char lb[24], xb[64], tb[64];
	const char *ins[2] = {lb, xb}, *upd[3] = {lb, xb, tb};
	PGconn *c = PQconnectdbParams(keys, vals, 1);
	unsigned seed = 12345;
	int64_t k = 0;

	if (PQstatus(c) != CONNECTION_OK)
		bench_fatal("writer: %s", PQerrorMessage(c));
	snprintf(lb, sizeof lb, "%" PRId64, w->library_id);
	while (!w->stop) {
		bool insert = w->target || (k % 2) == 0, failed = false;
		double t0 = bench_now();
		int busy = 0;

		if (insert)
			snprintf(xb, sizeof xb, "%s-%" PRId64, w->target ? "wt-new" : "w-new", k);
		else
			snprintf(xb, sizeof xb, "w-%" PRId64, 1 + (int64_t)(rand_r(&seed) % w->opts->writer_items));
		snprintf(tb, sizeof tb, "update %" PRId64, k);
		for (;;) {
			PGresult *r = PQexecParams(c, bench_sql(insert ? "writer_insert" : "writer_update"),
			                           insert ? 2 : 3, NULL, insert ? ins : upd, NULL, NULL, 0);
			ExecStatusType st = PQresultStatus(r);
			const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

			if (st == PGRES_COMMAND_OK) {
				w->inserts_ok += insert;
				PQclear(r);
				break;
			}
			if (!w->target && state && strcmp(state, "55P03") == 0 && !w->stop) {
				busy++;
				PQclear(r);
				sleep_ms(1);
				continue;
			}
			if (w->errors++ == 0)
				snprintf(w->first_error, sizeof w->first_error, "%s", PQresultErrorMessage(r));
			failed = true;
			PQclear(r);
			if (PQstatus(c) != CONNECTION_OK)
				w->stop = 1;
			break;
		}
		writer_record(w, t0, (bench_now() - t0) * 1000.0, busy, failed);
		k++;
		if (w->opts->writer_interval_ms > 0)
			sleep_ms(w->opts->writer_interval_ms);
	}
	PQfinish(c);
	return NULL;
}

/* The parent-row reader: reads the target library's row and its server's
 * row FOR KEY SHARE (bench/sql/parent_read.sql), one statement its own
 * transaction, back to back, each timed to its answer: its waits are the
 * parent row locks the removal holds (the finalize step's, or the whole
 * single transaction's). A statement's time is also the machine's (on 2
 * busy cores the reader alone reaches tens of ms): with lock_timeout_ms
 * its session's lock_timeout, which counts only the time spent waiting
 * for a lock, cancels a statement that waited longer for the parent rows
 * (55P03, counted busy): the lock waits over the target, apart from the
 * machine's delays. */
static void *reader_main(void *arg)
{
	writer_state *w = arg;
	const char *keys[] = {"dbname", "application_name", NULL};
	const char *vals[] = {w->conninfo, "bench:parent-reader", NULL};
	char lb[24], sb[24];
	const char *p[2] = {lb, sb};
	PGconn *c = PQconnectdbParams(keys, vals, 1);

	if (PQstatus(c) != CONNECTION_OK)
		bench_fatal("reader: %s", PQerrorMessage(c));
	snprintf(lb, sizeof lb, "%" PRId64, w->library_id);
	snprintf(sb, sizeof sb, "%" PRId64, w->server_id);
	if (w->lock_timeout_ms > 0) {
		char tb[24];
		const char *pt[1] = {tb};

		snprintf(tb, sizeof tb, "%dms", w->lock_timeout_ms);
		PQclear(bench_run(c, "reader_lock_timeout", 1, pt));
	}
	while (!w->stop) {
		double t0 = bench_now();
		PGresult *r = PQexecParams(c, bench_sql("parent_read"), 2, NULL, p, NULL, NULL, 0);
		const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		bool busy = PQresultStatus(r) != PGRES_TUPLES_OK && state && strcmp(state, "55P03") == 0;
		bool failed = PQresultStatus(r) != PGRES_TUPLES_OK && !busy;

		if (failed && w->errors++ == 0)
			snprintf(w->first_error, sizeof w->first_error, "%s", PQresultErrorMessage(r));
		PQclear(r);
		writer_record(w, t0, (bench_now() - t0) * 1000.0, busy, failed);
		if (failed && PQstatus(c) != CONNECTION_OK)
			break;
		sleep_ms(1);
	}
	PQfinish(c);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Latencies of the samples that started in [FROM, TO). */
static void lat_of(lat_stats *s, const writer_state *w, double from, double to)
{
	double *v = malloc((w->n + 1) * sizeof *v);
	size_t i, n = 0;

	if (!v)
		bench_fatal("out of memory");
	memset(s, 0, sizeof *s);
	for (i = 0; i < w->n; i++) {
		if (w->samples[i].at < from || w->samples[i].at >= to)
			continue;
		v[n++] = w->samples[i].ms;
		s->busy += w->samples[i].busy;
		s->errors += w->samples[i].failed;
	}
	s->n = n;
	if (n > 0) {
		qsort(v, n, sizeof *v, cmp_double);
		s->p50 = v[(size_t)ceil(0.50 * (double)n) - 1];
		s->p99 = v[(size_t)ceil(0.99 * (double)n) - 1];
		s->max = v[n - 1];
	}
	free(v);
}

typedef struct remove_setup {
	int64_t library, server, writer_library;
} remove_setup;

/* Builds DB_REMOVE_TPL: a server with the target library of
 * o->library_items items and the writer's library of o->writer_items. */
static void setup_remove(remove_setup *rs, const bench_opts *o)
{
	char sb[24], lb[24], nb[24];
	const char *p1[1] = {sb}, *p2[2] = {lb, nb};
	PGconn *c;

	fresh_db(o, DB_REMOVE_TPL, o->library_items);
	c = pg_open(o, DB_REMOVE_TPL, "bench:setup");
	first_library(c, &rs->library, &rs->server);
	snprintf(sb, sizeof sb, "%" PRId64, rs->server);
	rs->writer_library = bench_int(c, "writer_library", 1, p1);
	snprintf(lb, sizeof lb, "%" PRId64, rs->writer_library);
	snprintf(nb, sizeof nb, "%" PRId64, o->writer_items);
	PQclear(bench_run(c, "writer_fill", 2, p2));
	PQfinish(c);
	vacuum_checkpoint(o, DB_REMOVE_TPL);
}

typedef struct remove_round {
	const char *mode;
	double seconds;
	lat_stats idle, during;        /* the writer on another library */
	lat_stats target_during;       /* the writer on the library being removed */
	lat_stats reader_idle, reader_during; /* the parent-row reader: alone, and during the removal */
	int create_busy;               /* busy answers of job create (a writer in flight) */
	cleanup_run_summary sum;
	step_stats st;
	bool exact;
	char writer_error[512];
	char target_answer[512];       /* the target writer's first rejection */
} remove_round;

static void start_writer(writer_state *w, pthread_t *th, const bench_opts *o, int64_t library, bool target,
                         int64_t reader_server, int lock_timeout_ms)
{
	memset(w, 0, sizeof *w);
	w->opts = o;
	w->library_id = library;
	w->target = target;
	w->reader = reader_server != 0;
	w->server_id = reader_server;
	w->lock_timeout_ms = lock_timeout_ms;
	bench_conninfo(w->conninfo, sizeof w->conninfo, o->db, DB_RUN);
	if (pthread_create(th, NULL, w->reader ? reader_main : writer_main, w) != 0)
		bench_fatal("cannot start a writer thread");
}

/* Removes the target library of a fresh copy in MODE while two writers run,
 * one on another library of the same server, one on the target itself, and
 * a parent-row reader; without CLIENTS, with nobody else connected: the
 * removal's own cost. (With the clients the bounded side is also charged
 * for their statements, which the single transaction holds off: on 2
 * cores, 13,000 statements against 1,100 in one run.) */
static void run_remove(remove_round *rr, const bench_opts *o, const remove_setup *rs, const char *mode,
                       bool clients)
{
	writer_state w, wt, rd;
	pthread_t th, tht, thr;
	cleanup_run_opts ro;
	cleanup_engine *e;
	cleanup_job job;
	cleanup_error err;
	PGconn *c;
	char lb[24], wb[24];
	const char *pl[1] = {lb}, *pw[1] = {wb};
	double t_idle, t0, t1;
	int64_t left, lib_rows, writer_rows;
	int rc;

	memset(rr, 0, sizeof *rr);
	rr->mode = mode;
	fresh_copy(o, DB_REMOVE_TPL);
	e = engine_open(o, DB_RUN, "bench:remove");
	memset(&w, 0, sizeof w);
	memset(&wt, 0, sizeof wt);
	memset(&rd, 0, sizeof rd);
	t_idle = bench_now();
	if (clients) {
		start_writer(&w, &th, o, rs->writer_library, false, 0, 0);
		start_writer(&wt, &tht, o, rs->library, true, 0, 0);
		/* The bounded removal's reader counts its lock waits over the
		 * target (READER_TARGET_MS); the single transaction's shows the
		 * whole wait. */
		start_writer(&rd, &thr, o, rs->library, false, rs->server,
		             strcmp(mode, "bounded") == 0 ? READER_TARGET_MS : 0);
		t_idle = bench_now();
		sleep_ms(1000); /* the writers alone: their baseline latency */
	}

	t0 = bench_now();
	/* Creating a removal fences the library: busy while a writer's insert is
	 * in flight (A2). Retry as an operator would. */
	while ((rc = cleanup_job_create(&job, e, "remove-library", rs->library, mode, &err)) == CLEANUP_EBUSY) {
		rr->create_busy++;
		sleep_ms(1);
	}
	if (rc != CLEANUP_OK)
		bench_fatal_err("job create remove-library", &err);
	memset(&ro, 0, sizeof ro);
	rc = cleanup_job_run(&rr->sum, e, job.id, &ro, &err);
	t1 = bench_now();
	if (rc != CLEANUP_OK)
		bench_fatal_err("remove-library run", &err);
	rr->seconds = t1 - t0;
	if (clients) {
		sleep_ms(200);
		w.stop = 1;
		wt.stop = 1;
		rd.stop = 1;
		pthread_join(th, NULL);
		pthread_join(tht, NULL);
		pthread_join(thr, NULL);
	}
	cleanup_engine_close(e);

	lat_of(&rr->idle, &w, t_idle, t0);
	lat_of(&rr->during, &w, t0, t1);
	lat_of(&rr->target_during, &wt, t0, t1);
	lat_of(&rr->reader_idle, &rd, t_idle, t0);
	lat_of(&rr->reader_during, &rd, t0, t1);
	snprintf(rr->writer_error, sizeof rr->writer_error, "%s", w.first_error);
	snprintf(rr->target_answer, sizeof rr->target_answer, "%s", wt.first_error);
	rr->target_answer[strcspn(rr->target_answer, "\n")] = '\0';

	c = pg_open(o, DB_RUN, "bench:check");
	snprintf(lb, sizeof lb, "%" PRId64, rs->library);
	snprintf(wb, sizeof wb, "%" PRId64, rs->writer_library);
	left = bench_int(c, "library_exists", 1, pl);
	lib_rows = bench_int(c, "item_count", 1, pl);
	writer_rows = bench_int(c, "item_count", 1, pw);
	step_stats_of(&rr->st, c, job.id);
	PQfinish(c);
	/* The target is gone, its rows (and the target writer's early inserts)
	 * deleted exactly once; every statement of the other writer landed. */
	rr->exact = rr->sum.completed && left == 0 && lib_rows == 0 &&
	            rr->sum.job.deleted == o->library_items + wt.inserts_ok && w.errors == 0 &&
	            writer_rows == o->writer_items + w.inserts_ok && rd.errors == 0;
	bench_note("remove-library %s%s: %" PRId64 " deleted in %d steps, %.3f s; writer max %.1f ms, target writer max "
	     "%.1f ms, parent-row reader max %.1f ms (%s)",
	     mode, clients ? "" : " alone", rr->sum.job.deleted, rr->sum.steps, rr->seconds, rr->during.max, rr->target_during.max,
	     rr->reader_during.max, rr->exact ? "exact" : "NOT EXACT");
	if (rd.first_error[0])
		bench_note("parent-row reader error: %s", rd.first_error);
	/* When the reader's lock waits over the target came: at the create
	 * (its plan phase locks the parent row), at the finalize step, or
	 * between. */
	for (size_t k = 0; k < rd.n; k++)
		if (rd.samples[k].busy && rd.samples[k].at >= t0 && rd.samples[k].at < t1)
			bench_note("parent-row reader: a lock wait over %d ms from %.3f s of the removal's %.3f s",
			           READER_TARGET_MS, rd.samples[k].at - t0, t1 - t0);
	cleanup_job_reset(&job);
	free(w.samples);
	free(wt.samples);
	free(rd.samples);
}

static void print_lat(const char *label, const lat_stats *s)
{
	printf("    %-34s %6zu statements, p50 %7.2f ms, p99 %7.2f ms, max %8.2f ms, %d busy, %d errors\n", label,
	       s->n, s->p50, s->p99, s->max, s->busy, s->errors);
}

static void print_remove(const remove_round *r)
{
	printf("  %s: %.3f s, %d steps, job create busy %d times (%s)\n", r->mode, r->seconds, r->sum.steps,
	       r->create_busy, r->exact ? "exact" : "NOT EXACT");
	print_lat("other-library writer, before:", &r->idle);
	print_lat("other-library writer, during:", &r->during);
	print_lat("target-library writer, during:", &r->target_during);
	print_lat("parent-row reader, before:", &r->reader_idle);
	print_lat("parent-row reader, during:", &r->reader_during);
	if (r->target_answer[0])
		printf("      target writer's answer: %s\n", r->target_answer);
	if (r->writer_error[0])
		printf("      other-library writer error: %s\n", r->writer_error);
	print_step_stats(r->mode, &r->st);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_cleanup --db CONNINFO [--items N] [--seen-every N] [--library-items N]\n"
	           "                     [--writer-items N] [--writer-interval-ms N] [--rounds N]\n"
	           "                     [--skip-prune] [--skip-remove] [--skip-pipeline] [--keep] [--sql-dir DIR]\n"
	           "Creates and drops databases cleanup_lab_bench_* on the server of CONNINFO.\n");
}

static int64_t arg_int(const char *opt, const char *v, int64_t min, int64_t max)
{
	char *end;
	long long x;

	errno = 0;
	x = v ? strtoll(v, &end, 10) : 0;
	if (!v || errno || *end || x < min || x > max) {
		fprintf(stderr, "bench_cleanup: %s needs an integer from %" PRId64 " to %" PRId64 ", not \"%s\"\n", opt,
		        min, max, v ? v : "");
		exit(2);
	}
	return x;
}

static void print_settings(const bench_opts *o)
{
	PGconn *c = pg_open(o, "postgres", "bench:settings");
	PGresult *r = bench_run(c, "settings", 0, NULL);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	printf("server: %s\n", PQgetvalue(r, 0, 0));
	printf("settings: fsync=%s synchronous_commit=%s shared_buffers=%s wal_level=%s max_wal_size=%s; %ld cores\n",
	       PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 2), PQgetvalue(r, 0, 3), PQgetvalue(r, 0, 4),
	       PQgetvalue(r, 0, 5), cores);
	PQclear(r);
	PQfinish(c);
}

int main(int argc, char **argv)
{
	bench_opts o = {NULL, BENCH_SQL_DIR, 1000000, 2, 500000, 10000, 5, 1, false, false, false, false};
	prune_setup ps;
	remove_setup rs;
	prune_round *pr = NULL;
	remove_round *single = NULL, *bounded = NULL;
	double *ratios = NULL, *aratios = NULL;
	int i;

	bench_name = "bench_cleanup";
	bench_db_list = bench_dbs;
	bench_t0 = bench_now();
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--db") == 0 && v)
			o.db = argv[++i];
		else if (strcmp(a, "--sql-dir") == 0 && v)
			o.sql_dir = argv[++i];
		else if (strcmp(a, "--items") == 0)
			o.items = arg_int(a, v ? argv[++i] : NULL, 1000, 100000000);
		else if (strcmp(a, "--seen-every") == 0)
			o.seen_every = arg_int(a, v ? argv[++i] : NULL, 2, 1000);
		else if (strcmp(a, "--library-items") == 0)
			o.library_items = arg_int(a, v ? argv[++i] : NULL, 1000, 100000000);
		else if (strcmp(a, "--writer-items") == 0)
			o.writer_items = arg_int(a, v ? argv[++i] : NULL, 1, 10000000);
		else if (strcmp(a, "--writer-interval-ms") == 0)
			o.writer_interval_ms = (int)arg_int(a, v ? argv[++i] : NULL, 0, 1000);
		else if (strcmp(a, "--rounds") == 0)
			o.rounds = (int)arg_int(a, v ? argv[++i] : NULL, 1, 20);
		else if (strcmp(a, "--skip-prune") == 0)
			o.skip_prune = true;
		else if (strcmp(a, "--skip-remove") == 0)
			o.skip_remove = true;
		else if (strcmp(a, "--skip-pipeline") == 0)
			o.skip_append_pipeline = true;
		else if (strcmp(a, "--keep") == 0)
			o.keep = true;
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "bench_cleanup: unexpected argument \"%s\"\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (!o.db) {
		usage(stderr);
		return 2;
	}
	bench_sql_dir = o.sql_dir;
	pr = calloc((size_t)o.rounds, sizeof *pr);
	single = calloc((size_t)o.rounds, sizeof *single);
	bounded = calloc((size_t)o.rounds, sizeof *bounded);
	ratios = calloc((size_t)o.rounds, sizeof *ratios);
	aratios = calloc((size_t)o.rounds, sizeof *aratios);
	if (!pr || !single || !bounded || !ratios || !aratios)
		bench_fatal("out of memory");

	print_settings(&o);
	printf("data: prune library of %" PRId64 " items, every %" PRId64 "-th seen; remove-library target of %" PRId64
	       " items; writer library of %" PRId64 " items, a statement every %d ms; %d round%s\n\n",
	       o.items, o.seen_every, o.library_items, o.writer_items, o.writer_interval_ms, o.rounds,
	       o.rounds == 1 ? "" : "s");
	fflush(stdout);

	if (!o.skip_prune) {
		char pload[64];

		setup_prune(&ps, &o);
		printf("== Manifest loading: %" PRId64 " seen IDs, 128 a call ==\n", ps.seen);
		printf("  cleanup_job_append, one call a round trip: %d calls in %.3f s (%.0f IDs/s, %.3f ms a call)\n",
		       ps.append_calls, ps.append_s, (double)ps.seen / ps.append_s, ps.append_s * 1000.0 / ps.append_calls);
		if (!o.skip_append_pipeline)
			printf("  cleanup_job_append_many (%d in flight): %d calls in %.3f s (%.0f IDs/s, %.2fx faster)\n",
			       CLEANUP_APPEND_WINDOW, ps.append_pipe_calls, ps.append_pipe_s, (double)ps.seen / ps.append_pipe_s,
			       ps.append_s / ps.append_pipe_s);
		if (!o.skip_append_pipeline)
			printf("  same, synchronous_commit off:          %d calls in %.3f s (%.0f IDs/s, %.2fx faster)\n",
			       ps.append_async_calls, ps.append_async_s, (double)ps.seen / ps.append_async_s,
			       ps.append_s / ps.append_async_s);
		printf("\n== Prune: %" PRId64 " unseen of %" PRId64 " items ==\n", o.items - ps.seen, o.items);
		fflush(stdout);
		for (i = 0; i < o.rounds; i++) {
			/* Alternate the order so no side always runs on a warmer machine. */
			if (i % 2 == 0) {
				run_one_delete(&pr[i], &o, &ps);
				run_bounded_prune(&pr[i].sync, &o, &ps, true);
				run_bounded_prune(&pr[i].async, &o, &ps, false);
			} else {
				run_bounded_prune(&pr[i].async, &o, &ps, false);
				run_bounded_prune(&pr[i].sync, &o, &ps, true);
				run_one_delete(&pr[i], &o, &ps);
			}
			ratios[i] = pr[i].sync.seconds / pr[i].delete_s;
			aratios[i] = pr[i].async.seconds / pr[i].delete_s;
			printf("  round %d: one DELETE %.3f s (%" PRId64 " rows)\n", i + 1, pr[i].delete_s,
			       pr[i].delete_rows);
			printf("    bounded prune:                         %.3f s, %d steps, %.3f ms a step (%s); "
			       "ratio %.2fx\n",
			       pr[i].sync.seconds, pr[i].sync.sum.steps, pr[i].sync.seconds * 1000 / pr[i].sync.sum.steps,
			       pr[i].sync.exact ? "exact" : "NOT EXACT", ratios[i]);
			printf("    bounded prune, synchronous_commit off: %.3f s, %d steps, %.3f ms a step (%s); "
			       "ratio %.2fx\n",
			       pr[i].async.seconds, pr[i].async.sum.steps,
			       pr[i].async.seconds * 1000 / pr[i].async.sum.steps, pr[i].async.exact ? "exact" : "NOT EXACT",
			       aratios[i]);
			print_step_stats("bounded prune", &pr[i].sync.st);
			print_step_stats("bounded prune, synchronous_commit off", &pr[i].async.st);
			fflush(stdout);
		}
		printf("  ratio bounded / one DELETE: median %.2fx; with synchronous_commit off %.2fx (over %d round%s; "
		       "target <= 1.5x)\n\n",
		       median(ratios, o.rounds), median(aratios, o.rounds), o.rounds, o.rounds == 1 ? "" : "s");
		/* The line scripts/bench.sh gathers into the run's summary. */
		printf("summary: prune %" PRId64 " unseen of %" PRId64 " items (one library, vacuumed) / one DELETE: "
		       "%.2fx, step synchronous_commit off %.2fx (target <= 1.5x; medians over %d round%s; load %s)\n",
		       o.items - ps.seen, o.items, median(ratios, o.rounds), median(aratios, o.rounds), o.rounds,
		       o.rounds == 1 ? "" : "s", bench_load_avg(pload, sizeof pload));
		fflush(stdout);
	}

	if (!o.skip_remove) {
		double maxes[20], tmaxes[20], rmaxes[20], rp99s[20], rsec[20], rratio[20], ridle[20], plock[20];
		double asec[20], aratio[20];
		char load[64];
		size_t reads = 0;
		int over = 0; /* reader statements whose lock wait passed READER_TARGET_MS */

		setup_remove(&rs, &o);
		printf("== Remove-library of %" PRId64 " items with a concurrent writer on another library of the "
		       "same server ==\n",
		       o.library_items);
		for (i = 0; i < o.rounds; i++) {
			remove_round as, ab; /* the same pair with nobody else connected */

			if (i % 2 == 0) {
				run_remove(&single[i], &o, &rs, "single-transaction", true);
				run_remove(&bounded[i], &o, &rs, "bounded", true);
				run_remove(&ab, &o, &rs, "bounded", false);
				run_remove(&as, &o, &rs, "single-transaction", false);
			} else {
				run_remove(&bounded[i], &o, &rs, "bounded", true);
				run_remove(&single[i], &o, &rs, "single-transaction", true);
				run_remove(&as, &o, &rs, "single-transaction", false);
				run_remove(&ab, &o, &rs, "bounded", false);
			}
			asec[i] = ab.seconds;
			aratio[i] = ab.seconds / as.seconds;
			printf("  round %d:\n", i + 1);
			printf("  alone (no writer, no reader): single-transaction %.3f s (%s), bounded %.3f s, %d steps "
			       "(%s): %.2fx\n",
			       as.seconds, as.exact ? "exact" : "NOT EXACT", ab.seconds, ab.sum.steps,
			       ab.exact ? "exact" : "NOT EXACT", aratio[i]);
			cleanup_job_reset(&as.sum.job);
			cleanup_job_reset(&ab.sum.job);
			print_remove(&single[i]);
			print_remove(&bounded[i]);
			maxes[i] = bounded[i].during.max;
			tmaxes[i] = bounded[i].target_during.max;
			rmaxes[i] = bounded[i].reader_during.max;
			rp99s[i] = bounded[i].reader_during.p99;
			rsec[i] = bounded[i].seconds;
			ridle[i] = bounded[i].reader_idle.max;
			plock[i] = bounded[i].st.parent_lock_max;
			reads += bounded[i].reader_during.n;
			over += bounded[i].reader_during.busy;
			rratio[i] = bounded[i].seconds / single[i].seconds;
			fflush(stdout);
		}
		printf("  writer max wait under bounded removal: other library %.2f ms, target library %.2f ms "
		       "(median over %d round%s; target: below 50 ms)\n\n",
		       median(maxes, o.rounds), median(tmaxes, o.rounds), o.rounds, o.rounds == 1 ? "" : "s");
		printf("summary: remove-library %" PRId64 " items alone: bounded %.2f s / single-transaction, ratio "
		       "%.2fx (target <= 1.3x); with two writers and a parent-row reader: bounded %.2f s, ratio %.2fx; "
		       "parent-row reader max wait %.2f ms, p99 %.2f ms (target <= %d ms; "
		       "the same reader alone: max %.2f ms), lock waits over %d ms: %d of %zu reads; finalize "
		       "parent row lock %.3f ms (medians over %d round%s; load %s)\n\n",
		       o.library_items, median(asec, o.rounds), median(aratio, o.rounds), median(rsec, o.rounds),
		       median(rratio, o.rounds), median(rmaxes, o.rounds),
		       median(rp99s, o.rounds), READER_TARGET_MS, median(ridle, o.rounds), READER_TARGET_MS, over, reads,
		       median(plock, o.rounds), o.rounds, o.rounds == 1 ? "" : "s", bench_load_avg(load, sizeof load));
	}

	printf("== Summary (round 1) ==\n");
	printf("| figure | value |\n| --- | --- |\n");
	if (!o.skip_prune) {
		printf("| manifest append, %" PRId64 " IDs, 128 a call | %.2f s |\n", ps.seen, ps.append_s);
		if (!o.skip_append_pipeline) {
			printf("| cleanup_job_append_many (%d calls in flight) | %.2f s |\n", CLEANUP_APPEND_WINDOW,
			       ps.append_pipe_s);
			printf("| same, synchronous_commit off | %.2f s |\n", ps.append_async_s);
		}
		printf("| one DELETE, %" PRId64 " unseen of %" PRId64 " | %.2f s |\n", o.items - ps.seen, o.items,
		       pr[0].delete_s);
		printf("| bounded prune, same data | %.2f s (%d steps) |\n", pr[0].sync.seconds, pr[0].sync.sum.steps);
		printf("| ratio bounded / one DELETE | %.2fx (median of %d: %.2fx) |\n",
		       pr[0].sync.seconds / pr[0].delete_s, o.rounds, median(ratios, o.rounds));
		printf("| bounded prune, step synchronous_commit off | %.2f s; ratio %.2fx (median of %d: %.2fx) |\n",
		       pr[0].async.seconds, pr[0].async.seconds / pr[0].delete_s, o.rounds, median(aratios, o.rounds));
		printf("| prune step lock hold p50 / p99 | %.3f / %.3f ms |\n", pr[0].sync.st.lock_p50,
		       pr[0].sync.st.lock_p99);
	}
	if (!o.skip_remove) {
		printf("| remove-library single-transaction | %.2f s; other-library writer max %.1f ms, p99 %.1f ms; "
		       "target writer max %.1f ms |\n",
		       single[0].seconds, single[0].during.max, single[0].during.p99, single[0].target_during.max);
		printf("| remove-library bounded | %.2f s (%d steps); other-library writer max %.1f ms, p99 %.1f ms; "
		       "target writer max %.1f ms |\n",
		       bounded[0].seconds, bounded[0].sum.steps, bounded[0].during.max, bounded[0].during.p99,
		       bounded[0].target_during.max);
		printf("| writer alone (before the removal) | max %.1f ms, p99 %.1f ms |\n", bounded[0].idle.max,
		       bounded[0].idle.p99);
		printf("| removal step lock hold p50 / p99 | %.3f / %.3f ms |\n", bounded[0].st.lock_p50,
		       bounded[0].st.lock_p99);
		printf("| parent row lock hold: bounded finalize / single-transaction | %.3f / %.1f ms |\n",
		       bounded[0].st.parent_lock_max, single[0].st.parent_lock_max);
	}

	for (i = 0; i < o.rounds; i++) {
		cleanup_job_reset(&pr[i].sync.sum.job);
		cleanup_job_reset(&pr[i].async.sum.job);
		cleanup_job_reset(&single[i].sum.job);
		cleanup_job_reset(&bounded[i].sum.job);
	}
	if (!o.keep) {
		admin(&o, "db_drop", DB_RUN, NULL);
		admin(&o, "db_drop", DB_PRUNE_TPL, NULL);
		admin(&o, "db_drop", DB_REMOVE_TPL, NULL);
	}
	free(pr);
	free(single);
	free(bounded);
	free(ratios);
	free(aratios);
	return 0;
}
