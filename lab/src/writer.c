/* The simulated sync writer (see writer.h): inserts, updates and moves,
 * one short autocommit transaction each, paced at a rate. When its role
 * may, every write goes through the count cache's mutation gateway
 * (inventory.write_items, seed 002, granted to cleanup_writer: declared
 * library locks, expected membership; writer_gateway_*.sql), which
 * watched libraries require;
 * otherwise plain SQL (writer_insert.sql, writer_change.sql), which the
 * database guards check the same way. Refusals are counted per SQLSTATE and
 * logged to cleanup.events in their own transaction when the writer's role
 * may (a role in cleanup_writer has no access to schema cleanup at all:
 * docs/roles.md; its rejections are only counted and reported). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/clock.h"
#include "cleanup/count_cache.h"
#include "cleanup/install.h"
#include "cleanup/writer.h"
#include "lab_int.h"

#define WRITER_LOCK_TIMEOUT_MS 1000
#define WRITER_STATEMENT_TIMEOUT_MS 5000
#define WRITER_REFRESH_S 5.0

typedef struct writer_library {
	int64_t id, server_id;
} writer_library;

struct cleanup_writer {
	cleanup_engine *e;
	cleanup_writer_opts opts;
	writer_library *libs;
	size_t nlibs;
	bool need_refresh;
	bool can_log;        /* the role may log rejections (writer_access.sql) */
	bool gateway;        /* the role may write through inventory.write_items */
	bool dependents;     /* the dependent tables exist and the role may write them */
	int64_t dependents_written; /* dependent rows committed with inserts */
	uint64_t rng;
	uint64_t counter;
	char id_prefix[48];  /* makes external IDs unique across runs and writers */
	cleanup_writer_stats stats;
};

/* splitmix64: small, fast and good enough to pick operations. */
static uint64_t next_random(cleanup_writer *w)
{
	uint64_t z = (w->rng += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double random_unit(cleanup_writer *w)
{
	return (double)(next_random(w) >> 11) / 9007199254740992.0; /* [0, 1) */
}

const char *cleanup_writer_op_name(cleanup_writer_op op)
{
	static const char *const names[] = {
		[CLEANUP_WRITER_INSERT] = "insert",
		[CLEANUP_WRITER_UPDATE] = "update",
		[CLEANUP_WRITER_MOVE] = "move",
	};

	return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

/* The settings of a writer: its transactions stay short (the session's
 * on a direct connection, each transaction's behind a pooler). */
static int setup_session(cleanup_writer *w, cleanup_error *err)
{
	int rc = cleanup_engine_set_timeout(w->e, WRITER_STATEMENT_TIMEOUT_MS, err);

	if (rc == CLEANUP_OK)
		rc = cleanup_engine_set_lock_timeout(w->e, WRITER_LOCK_TIMEOUT_MS, err);
	return rc;
}

/* What the writer's role may do in schema cleanup. A role that may use it
 * (the owner, a superuser, the demo's writers) gets the schema version
 * checked and logs its rejections; a sync writer under the privilege model
 * (cleanup_writer: no USAGE on cleanup) skips both, since it cannot read
 * the version and needs nothing of that schema: the admission triggers
 * guard its writes as they guard any client's. A missing schema is
 * reported by the check (run install). */
static int check_access(cleanup_writer *w, cleanup_error *err)
{
	cleanup_rows *rows = NULL;
	bool present, usage;
	int rc;

	rc = lab_query(&rows, w->e, CLEANUP_LAB_Q_WRITER_ACCESS, 0, NULL, "reading the writer's privileges",
	               err);
	if (rc != CLEANUP_OK)
		return rc;
	present = cleanup_rows_bool(rows, 0, "present");
	usage = cleanup_rows_bool(rows, 0, "usage");
	w->can_log = cleanup_rows_bool(rows, 0, "can_log");
	w->gateway = cleanup_rows_bool(rows, 0, "gateway");
	w->dependents = cleanup_rows_bool(rows, 0, "dependents");
	cleanup_rows_free(rows);
	if (!present || usage)
		rc = cleanup_schema_check(w->e, err);
	return rc;
}

int cleanup_writer_refresh(cleanup_writer *w, cleanup_error *err)
{
	char server[32];
	const char *params[1] = {NULL};
	cleanup_rows *rows = NULL;
	writer_library *libs = NULL;
	int rc, i, n;

	if (w->opts.server_id > 0) {
		snprintf(server, sizeof server, "%" PRId64, w->opts.server_id);
		params[0] = server;
	}
	rc = lab_query(&rows, w->e, CLEANUP_LAB_Q_WRITER_LIBRARIES, 1, params,
	               "listing the libraries to write to", err);
	if (rc != CLEANUP_OK)
		return rc;
	n = cleanup_rows_count(rows);
	if (n > 0) {
		libs = calloc((size_t)n, sizeof *libs);
		if (!libs) {
			cleanup_rows_free(rows);
			return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		}
	}
	for (i = 0; i < n; i++) {
		libs[i].id = cleanup_rows_int64(rows, i, "id");
		libs[i].server_id = cleanup_rows_int64(rows, i, "server_id");
	}
	cleanup_rows_free(rows);
	free(w->libs);
	w->libs = libs;
	w->nlibs = (size_t)n;
	w->need_refresh = false;
	return CLEANUP_OK;
}

size_t cleanup_writer_library_count(const cleanup_writer *w)
{
	return w->nlibs;
}

int cleanup_writer_new(cleanup_writer **out, cleanup_engine *e, const cleanup_writer_opts *opts,
                       cleanup_error *err)
{
	cleanup_writer *w = NULL;
	cleanup_rows *rows = NULL;
	int rc;

	*out = NULL;
	cleanup_error_clear(err);
	if (opts->rate < 0 || opts->rate > 100000)
		return cleanup_error_set(err, CLEANUP_EINVAL, "rate %g is out of range 0-100000 operations per second",
		                         opts->rate);
	if (opts->duration_s < 0)
		return cleanup_error_set(err, CLEANUP_EINVAL, "duration %g s is negative", opts->duration_s);
	if (opts->max_ops < 0)
		return cleanup_error_set(err, CLEANUP_EINVAL, "operation limit %" PRId64 " is negative", opts->max_ops);
	w = calloc(1, sizeof *w);
	if (!w)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	w->e = e;
	w->opts = *opts;
	if (w->opts.server_id <= 0)
		w->opts.server_id = -1;
	w->rng = opts->seed;
	snprintf(w->id_prefix, sizeof w->id_prefix, "w-%x-%" PRIx64, (unsigned)getpid(),
	         (uint64_t)(cleanup_clock_wall() * 1000.0));

	if ((rc = setup_session(w, err)) != CLEANUP_OK)
		goto out;
	if ((rc = check_access(w, err)) != CLEANUP_OK)
		goto out;
	if (w->opts.server_id > 0) {
		char server[32];
		const char *params[1] = {server};

		snprintf(server, sizeof server, "%" PRId64, w->opts.server_id);
		rc = lab_query(&rows, e, CLEANUP_LAB_Q_WRITER_SERVER, 1, params,
		               "looking up the writer's server", err);
		if (rc != CLEANUP_OK)
			goto out;
		if (cleanup_rows_count(rows) == 0) {
			rc = cleanup_error_set(err, CLEANUP_ENOTFOUND, "server %" PRId64 " does not exist", w->opts.server_id);
			cleanup_error_hint(err, "cleanupctl status lists the servers");
			goto out;
		}
	}
	if ((rc = cleanup_writer_refresh(w, err)) != CLEANUP_OK)
		goto out;
	if (w->nlibs == 0) {
		if (w->opts.server_id > 0)
			rc = cleanup_error_set(err, CLEANUP_ENOTFOUND, "server %" PRId64 " has no library to write to",
			                       w->opts.server_id);
		else
			rc = cleanup_error_set(err, CLEANUP_ENOTFOUND, "there is no library to write to");
		cleanup_error_hint(err, "seed demo data first: cleanupctl seed");
		goto out;
	}
	*out = w;
	w = NULL;
out:
	cleanup_rows_free(rows);
	cleanup_writer_free(w);
	return rc;
}

void cleanup_writer_free(cleanup_writer *w)
{
	if (w)
		free(w->libs);
	free(w);
}

bool cleanup_writer_uses_gateway(const cleanup_writer *w)
{
	return w->gateway;
}

int64_t cleanup_writer_dependents(const cleanup_writer *w)
{
	return w->dependents ? w->dependents_written : -1;
}

/* Runs insert Q (N PARAMS) and, when the dependent tables exist, the new
 * item's dependents (a retry, a review preview) and its library's (a
 * collection, the sync status, a history record) in one transaction
 * (seed 001): all commit or none; a refusal of any of them (CUA10
 * claimed, CUA11 draining, ...) is the operation's. Returns as
 * lab_query(); *OUT is the insert's result. */
static int insert_with_dependents(cleanup_rows **out, cleanup_writer *w, enum lab_sql_query_id q, int n,
                                  const char *const *params, cleanup_error *err)
{
	char item[32], candidate[96], collection[96], payload[128];
	const char *ip[4] = {item, "sync: artwork pending", candidate, "0.5"};
	const char *lp[4] = {params[0], collection, "synced", payload};
	cleanup_rows *res = NULL, *dep = NULL;
	int64_t written = 0;
	int rc;

	*out = NULL;
	if (!w->dependents)
		return lab_query(out, w->e, q, n, params, "insert", err);
	if ((rc = cleanup_query_begin(w->e, "insert", err)) != CLEANUP_OK)
		return rc;
	rc = lab_query(&res, w->e, q, n, params, "insert", err);
	if (rc == CLEANUP_OK && !cleanup_rows_null(res, 0, "id")) {
		snprintf(item, sizeof item, "%" PRId64, cleanup_rows_int64(res, 0, "id"));
		snprintf(candidate, sizeof candidate, "candidate for %s", params[1]);
		rc = lab_query(&dep, w->e, CLEANUP_LAB_Q_WRITER_DEPENDENTS_ITEM, 4, ip,
		               "writing the item's dependents", err);
		if (rc == CLEANUP_OK)
			written += cleanup_rows_int64(dep, 0, "written");
		cleanup_rows_free(dep);
		dep = NULL;
		if (rc == CLEANUP_OK) {
			snprintf(collection, sizeof collection, "sync %" PRIu64, w->counter % 16);
			snprintf(payload, sizeof payload, "{\"item\": %s, \"writer\": \"%s\"}", item, w->id_prefix);
			rc = lab_query(&dep, w->e, CLEANUP_LAB_Q_WRITER_DEPENDENTS_LIBRARY, 4, lp,
			               "writing the library's dependents", err);
			if (rc == CLEANUP_OK)
				written += cleanup_rows_int64(dep, 0, "written");
			cleanup_rows_free(dep);
		}
	}
	if (rc == CLEANUP_OK)
		rc = cleanup_query_script(w->e, "COMMIT", "insert", err);
	if (rc != CLEANUP_OK) {
		cleanup_error ignored;

		if (cleanup_engine_ok(w->e))
			cleanup_query_script(w->e, "ROLLBACK", "insert", &ignored);
		cleanup_rows_free(res);
		return rc;
	}
	w->dependents_written += written;
	*out = res;
	return CLEANUP_OK;
}

const cleanup_writer_stats *cleanup_writer_get_stats(const cleanup_writer *w)
{
	return &w->stats;
}

/* Errors that are our own bug, not the database refusing a write. */
static bool own_bug(const char *sqlstate)
{
	return strncmp(sqlstate, "42", 2) == 0 || strncmp(sqlstate, "XX", 2) == 0 ||
	       strncmp(sqlstate, "0A", 2) == 0 || strncmp(sqlstate, "26", 2) == 0 || strncmp(sqlstate, "3F", 2) == 0;
}

static void count_rejection(cleanup_writer *w, const char *sqlstate)
{
	cleanup_writer_stats *s = &w->stats;
	size_t i;

	s->rejected++;
	for (i = 0; i < s->nrejections; i++) {
		if (strcmp(s->rejections[i].sqlstate, sqlstate) == 0) {
			s->rejections[i].n++;
			return;
		}
	}
	if (s->nrejections < CLEANUP_WRITER_STATES) {
		snprintf(s->rejections[s->nrejections].sqlstate, sizeof s->rejections[0].sqlstate, "%s",
		         sqlstate[0] ? sqlstate : "?????");
		s->rejections[s->nrejections++].n = 1;
	}
}

/* Logs the rejection EV to cleanup.events in its own transaction. */
static void log_rejection(cleanup_writer *w, cleanup_writer_event *ev)
{
	char lib[32], to[32], msg[800];
	const char *params[3] = {lib, msg, NULL};
	cleanup_rows *rows = NULL;
	cleanup_error err;

	snprintf(lib, sizeof lib, "%" PRId64, ev->library_id);
	if (ev->to_library_id > 0) {
		snprintf(to, sizeof to, "%" PRId64, ev->to_library_id);
		params[2] = to;
		snprintf(msg, sizeof msg, "move of an item from library %" PRId64 " to library %" PRId64 " refused: %s %s",
		         ev->library_id, ev->to_library_id, ev->sqlstate, ev->message);
	} else {
		snprintf(msg, sizeof msg, "%s %s library %" PRId64 " refused: %s %s", cleanup_writer_op_name(ev->op),
		         ev->op == CLEANUP_WRITER_INSERT ? "into" : "in", ev->library_id, ev->sqlstate, ev->message);
	}
	if (lab_query(&rows, w->e, CLEANUP_LAB_Q_WRITER_LOG_REJECTION, 3, params, "logging a rejected write",
	              &err) == CLEANUP_OK) {
		ev->logged = true;
		ev->job_id = cleanup_rows_int64(rows, 0, "job_id");
		w->stats.logged++;
	} else {
		w->stats.log_failures++;
	}
	cleanup_rows_free(rows);
}

int cleanup_writer_do(cleanup_writer_event *ev, cleanup_writer *w, cleanup_writer_op op, int64_t library_id,
                      int64_t to_library_id, cleanup_error *err)
{
	char lib[32], to[32], point[32], title[96], ext[96];
	const char *params[4] = {NULL, NULL, NULL, NULL};
	enum lab_sql_query_id q;
	cleanup_rows *res = NULL;
	cleanup_error qerr;
	double t0;
	int rc, n = 3;
	size_t i;

	memset(ev, 0, sizeof *ev);
	ev->op = op;
	ev->library_id = library_id;
	ev->to_library_id = op == CLEANUP_WRITER_MOVE ? to_library_id : -1;
	ev->server_id = -1;
	ev->item_id = -1;
	ev->job_id = -1;
	ev->at = cleanup_clock_wall();
	for (i = 0; i < w->nlibs; i++)
		if (w->libs[i].id == library_id)
			ev->server_id = w->libs[i].server_id;
	w->counter++;
	snprintf(lib, sizeof lib, "%" PRId64, library_id);
	snprintf(point, sizeof point, "%.6f", random_unit(w));
	switch (op) {
	case CLEANUP_WRITER_INSERT:
		q = w->gateway ? CLEANUP_LAB_Q_WRITER_GATEWAY_INSERT : CLEANUP_LAB_Q_WRITER_INSERT;
		snprintf(ext, sizeof ext, "%s-%" PRIu64, w->id_prefix, w->counter);
		snprintf(title, sizeof title, "Synced %" PRIu64, w->counter);
		params[0] = lib;
		params[1] = ext;
		params[2] = title;
		break;
	case CLEANUP_WRITER_UPDATE:
		q = w->gateway ? CLEANUP_LAB_Q_WRITER_GATEWAY_CHANGE : CLEANUP_LAB_Q_WRITER_CHANGE;
		snprintf(title, sizeof title, "Retitled %" PRIu64, w->counter);
		params[0] = lib;
		params[1] = point;
		params[3] = title;
		n = 4;
		break;
	case CLEANUP_WRITER_MOVE:
		q = w->gateway ? CLEANUP_LAB_Q_WRITER_GATEWAY_CHANGE : CLEANUP_LAB_Q_WRITER_CHANGE;
		snprintf(to, sizeof to, "%" PRId64, to_library_id);
		params[0] = lib;
		params[1] = point;
		params[2] = to;
		n = 4;
		break;
	default:
		return cleanup_error_set(err, CLEANUP_EINVAL, "unknown writer operation %d", (int)op);
	}

	t0 = cleanup_clock_mono();
	if (op == CLEANUP_WRITER_INSERT)
		rc = insert_with_dependents(&res, w, q, n, params, &qerr);
	else
		rc = lab_query(&res, w->e, q, n, params, cleanup_writer_op_name(op), &qerr);
	ev->ms = (cleanup_clock_mono() - t0) * 1000.0;
	w->stats.ops++;
	w->stats.total_ms += ev->ms;
	if (ev->ms > w->stats.max_ms)
		w->stats.max_ms = ev->ms;

	if (rc == CLEANUP_OK) {
		if (cleanup_rows_count(res) == 0) {
			ev->outcome = CLEANUP_WRITER_NOOP;
			w->stats.noop++;
		} else {
			ev->outcome = CLEANUP_WRITER_OK;
			ev->item_id = cleanup_rows_int64(res, 0, "id");
			if (op == CLEANUP_WRITER_INSERT)
				w->stats.inserted++;
			else if (op == CLEANUP_WRITER_UPDATE)
				w->stats.updated++;
			else
				w->stats.moved++;
		}
		cleanup_rows_free(res);
		return CLEANUP_OK;
	}
	snprintf(ev->sqlstate, sizeof ev->sqlstate, "%s", qerr.sqlstate);
	cleanup_text_copy(ev->message, sizeof ev->message, qerr.message);
	if (rc == CLEANUP_ECONN || !cleanup_engine_ok(w->e)) {
		ev->outcome = CLEANUP_WRITER_LOST;
		w->stats.lost++;
		if (err)
			*err = qerr;
		return CLEANUP_ECONN;
	}
	if (!qerr.sqlstate[0] || own_bug(qerr.sqlstate)) {
		if (err)
			*err = qerr;
		ev->outcome = CLEANUP_WRITER_REJECTED;
		return CLEANUP_ERROR;
	}
	ev->outcome = CLEANUP_WRITER_REJECTED;
	count_rejection(w, qerr.sqlstate);
	/* A vanished library or server: list the libraries again. */
	if (strcmp(qerr.sqlstate, "CUA02") == 0 || strcmp(qerr.sqlstate, "23503") == 0)
		w->need_refresh = true;
	if (!w->opts.no_log && w->can_log)
		log_rejection(w, ev);
	return CLEANUP_OK;
}

int cleanup_writer_tick(cleanup_writer_event *ev, cleanup_writer *w, cleanup_error *err)
{
	const writer_library *src;
	uint64_t r;
	size_t i, others = 0;
	int64_t to = -1;
	cleanup_writer_op op;

	if (w->nlibs == 0) {
		memset(ev, 0, sizeof *ev);
		ev->outcome = CLEANUP_WRITER_NOOP;
		ev->library_id = ev->to_library_id = ev->server_id = ev->item_id = ev->job_id = -1;
		ev->at = cleanup_clock_wall();
		return CLEANUP_OK;
	}
	src = &w->libs[next_random(w) % w->nlibs];
	r = next_random(w) % 10;
	op = r < 5 ? CLEANUP_WRITER_INSERT : r < 8 ? CLEANUP_WRITER_UPDATE : CLEANUP_WRITER_MOVE;
	if (op == CLEANUP_WRITER_MOVE) {
		for (i = 0; i < w->nlibs; i++)
			if (w->libs[i].server_id == src->server_id && w->libs[i].id != src->id)
				others++;
		if (others == 0) {
			op = CLEANUP_WRITER_UPDATE;
		} else {
			size_t k = (size_t)(next_random(w) % others);

			for (i = 0; i < w->nlibs; i++) {
				if (w->libs[i].server_id == src->server_id && w->libs[i].id != src->id && k-- == 0) {
					to = w->libs[i].id;
					break;
				}
			}
		}
	}
	return cleanup_writer_do(ev, w, op, src->id, to, err);
}

/* Sleeps SECONDS (at most 0.5 s at a time so that *STOP is seen soon; a
 * signal ends it early). */
static void nap(double seconds)
{
	struct timespec t;

	if (seconds <= 0)
		return;
	if (seconds > 0.5)
		seconds = 0.5;
	t.tv_sec = (time_t)seconds;
	t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
	nanosleep(&t, NULL);
}

static bool finished(const cleanup_writer *w, volatile sig_atomic_t *stop, double start, double now)
{
	if (stop && *stop)
		return true;
	if (w->opts.duration_s > 0 && now - start >= w->opts.duration_s)
		return true;
	return w->opts.max_ops > 0 && w->stats.ops >= w->opts.max_ops;
}

/* Reconnects with doubling delays (0.25 s up to 4 s: a server that is
 * restarting is not hammered) until it works or the run is over; then
 * tells REPORT (a CLEANUP_WRITER_RECONNECTED event: the writer says it is
 * back, demo server-crash). */
static void reconnect(cleanup_writer *w, volatile sig_atomic_t *stop, double start, cleanup_writer_report_fn report,
                      void *arg)
{
	double delay = 0.25, until, t0 = cleanup_clock_mono();
	cleanup_error err;
	int tries = 0;

	while (!finished(w, stop, start, cleanup_clock_mono())) {
		tries++;
		if (cleanup_engine_reconnect(w->e, &err) == CLEANUP_OK && setup_session(w, &err) == CLEANUP_OK) {
			w->stats.reconnects++;
			w->need_refresh = true;
			if (report) {
				cleanup_writer_event ev;

				memset(&ev, 0, sizeof ev);
				ev.outcome = CLEANUP_WRITER_RECONNECTED;
				ev.library_id = ev.to_library_id = ev.item_id = ev.job_id = -1;
				ev.server_id = w->opts.server_id;
				ev.ms = (cleanup_clock_mono() - t0) * 1000.0;
				ev.at = cleanup_clock_wall();
				snprintf(ev.message, sizeof ev.message, "connected again after %d tr%s in %.1f s", tries,
				         tries == 1 ? "y" : "ies", ev.ms / 1000.0);
				report(&ev, arg);
			}
			return;
		}
		until = cleanup_clock_mono() + delay;
		while (cleanup_clock_mono() < until && !finished(w, stop, start, cleanup_clock_mono()))
			nap(until - cleanup_clock_mono());
		if (delay < 4.0)
			delay *= 2;
	}
}

int cleanup_writer_run(cleanup_writer *w, volatile sig_atomic_t *stop, cleanup_writer_report_fn report, void *arg,
                       cleanup_error *err)
{
	double start = cleanup_clock_mono(), next = start, last_refresh = start, now;
	cleanup_writer_event ev;
	int rc = CLEANUP_OK;

	cleanup_error_clear(err);
	for (;;) {
		now = cleanup_clock_mono();
		if (finished(w, stop, start, now))
			break;
		if (w->opts.rate > 0) {
			if (next > now) {
				double wake = next;

				if (w->opts.duration_s > 0 && start + w->opts.duration_s < wake)
					wake = start + w->opts.duration_s;
				nap(wake - now);
				continue;
			}
			/* Behind schedule after a stall: do not burst to catch up. */
			if (now - next > 1.0)
				next = now;
			next += 1.0 / w->opts.rate;
		}
		if (!cleanup_engine_ok(w->e)) {
			/* Lost by an earlier operation (or before the run). */
			reconnect(w, stop, start, report, arg);
			continue;
		}
		if (w->need_refresh || now - last_refresh >= WRITER_REFRESH_S) {
			cleanup_error rerr;

			last_refresh = now;
			if (cleanup_writer_refresh(w, &rerr) == CLEANUP_ECONN || !cleanup_engine_ok(w->e)) {
				reconnect(w, stop, start, report, arg);
				continue;
			}
		}
		if (w->nlibs == 0) {
			/* Nothing to write to (the server's libraries were removed). */
			nap(0.5);
			w->need_refresh = true;
			continue;
		}
		rc = cleanup_writer_tick(&ev, w, err);
		if (report)
			report(&ev, arg);
		if (rc == CLEANUP_ECONN) {
			rc = CLEANUP_OK;
			cleanup_error_clear(err);
			reconnect(w, stop, start, report, arg);
		} else if (rc != CLEANUP_OK) {
			break;
		}
	}
	w->stats.stopped = stop && *stop;
	w->stats.elapsed_s = cleanup_clock_mono() - start;
	return rc;
}

int cleanup_writer_sessions(int64_t *n, cleanup_engine *e, cleanup_error *err)
{
	cleanup_rows *rows = NULL;
	int rc;

	*n = 0;
	if ((rc = lab_query(&rows, e, CLEANUP_LAB_Q_WRITER_SESSIONS, 0, NULL, "counting the writers", err)) != CLEANUP_OK)
		return rc;
	*n = cleanup_rows_int64(rows, 0, "n");
	cleanup_rows_free(rows);
	return CLEANUP_OK;
}
