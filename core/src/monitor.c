/* The console's asynchronous data source (see cleanup/monitor.h and
 * monitor_int.h): one libpq connection driven without blocking, refresh
 * and lock cycles of named queries, LISTEN notifications, and reconnection
 * with backoff that keeps the last snapshot visible and marked stale. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cleanup/clock.h"
#include "engine_int.h"
#include "rowmap_int.h"
#include "locks_int.h"
#include "job_int.h"
#include "monitor_int.h"

/* The named queries the monitor prepares on its connection. */
static const enum sql_query_id mon_queries[] = {
	CLEANUP_Q_MON_SERVERS, CLEANUP_Q_MON_LIBRARIES, CLEANUP_Q_MON_JOBS,   CLEANUP_Q_MON_STEPS,
	CLEANUP_Q_MON_EVENTS,  CLEANUP_Q_MON_CONTENTION, CLEANUP_Q_LOCKS_TREE, CLEANUP_Q_MON_STEP_RATE,
	CLEANUP_Q_MON_IDLE_XACT,
};

/* Idle in a transaction this long, holding one of our tables: listed in
 * the locks panel even when nobody waits yet (T3). */
#define MON_IDLE_XACT_S 10
#define N_MON_QUERIES ((int)(sizeof mon_queries / sizeof mon_queries[0]))

#define CONNECT_TIMEOUT_S 5.0

/* Busy retries kept for the log, per events_limit: they come in runs of
 * hundreds (a runner retrying a held lock), which the console collapses
 * into one line with their count. */
#define MON_BUSY_FACTOR 10

/* Engine events are read again this many ids back from the newest seen,
 * for transactions that committed after a newer id was visible. */
#define EVENTS_MARGIN 1000

double cleanup_monitor_now(void)
{
	return cleanup_clock_mono();
}

int monitor_backoff_ms(int attempt, int initial_ms, int max_ms)
{
	long v = initial_ms > 0 ? initial_ms : 1;
	int i;

	for (i = 1; i < attempt && v < max_ms; i++)
		v *= 2;
	return (int)(v > max_ms ? max_ms : v);
}

/* The row arrays of a snapshot: where the array and its count are, the
 * size of a row, and the refresh part that fills it (0: the lock view). */
typedef struct snap_rows {
	unsigned part;
	size_t rows, n, elem;
} snap_rows;

#define SNAP_ROWS(part, f, nf)                                                        \
	{part, offsetof(cleanup_mon_snapshot, f), offsetof(cleanup_mon_snapshot, nf), \
	 sizeof *((cleanup_mon_snapshot *)0)->f}
static const snap_rows snapshot_rows[] = {
	SNAP_ROWS(CLEANUP_MON_PART_SERVERS, servers, nservers),
	SNAP_ROWS(CLEANUP_MON_PART_LIBRARIES, libraries, nlibraries),
	SNAP_ROWS(CLEANUP_MON_PART_JOBS, jobs, njobs),
	SNAP_ROWS(CLEANUP_MON_PART_STEPS, steps, nsteps),
	SNAP_ROWS(CLEANUP_MON_PART_EVENTS, events, nevents),
	SNAP_ROWS(CLEANUP_MON_PART_CONTENTION, contention, ncontention),
	SNAP_ROWS(0, locks, nlocks),
	SNAP_ROWS(0, holders, nholders),
};
#define N_SNAPSHOT_ROWS (sizeof snapshot_rows / sizeof snapshot_rows[0])

/* The array of rows T of snapshot S (its count in *N). */
static void *rows_of(const cleanup_mon_snapshot *s, const snap_rows *t, size_t *n)
{
	void *p;

	memcpy(&p, (const char *)s + t->rows, sizeof p);
	if (n)
		memcpy(n, (const char *)s + t->n, sizeof *n);
	return p;
}

/* Sets DST's rows T to a copy of SRC's (none when out of memory: *FAIL
 * set); DST's own are not freed. */
static void copy_rows(cleanup_mon_snapshot *dst, const cleanup_mon_snapshot *src, const snap_rows *t, bool *fail)
{
	size_t n;
	const void *from = rows_of(src, t, &n);
	void *p = NULL;

	if (from && n > 0 && !(p = malloc(n * t->elem))) {
		*fail = true;
		n = 0;
	} else if (p) {
		memcpy(p, from, n * t->elem);
	}
	memcpy((char *)dst + t->rows, &p, sizeof p);
	memcpy((char *)dst + t->n, &n, sizeof n);
}

static void snapshot_clear(cleanup_mon_snapshot *s)
{
	size_t i;

	for (i = 0; i < N_SNAPSHOT_ROWS; i++)
		free(rows_of(s, &snapshot_rows[i], NULL));
	memset(s, 0, sizeof *s);
	s->detail_job_id = -1;
	s->steps_upto = -1;
	s->rate_job_id = -1;
}

void cleanup_mon_snapshot_free(cleanup_mon_snapshot *s)
{
	if (!s)
		return;
	snapshot_clear(s);
	free(s);
}

int cleanup_mon_snapshot_copy(cleanup_mon_snapshot **out, const cleanup_mon_snapshot *src,
                              cleanup_error *err)
{
	cleanup_mon_snapshot *s;
	bool fail = false;
	size_t i;

	*out = NULL;
	s = calloc(1, sizeof *s);
	if (!s)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory copying a snapshot");
	*s = *src;
	for (i = 0; i < N_SNAPSHOT_ROWS; i++)
		copy_rows(s, src, &snapshot_rows[i], &fail);
	if (fail) {
		cleanup_mon_snapshot_free(s);
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory copying a snapshot");
	}
	*out = s;
	return CLEANUP_OK;
}

/* Records a failure: ERR as the engine filled it (SQLSTATE, message,
 * detail, hint), and last_error as one line, "WHAT: message". */
static void set_error_record(cleanup_monitor *m, const char *what, const cleanup_error *err)
{
	size_t l;

	m->error = *err;
	l = cleanup_text_copy(m->last_error, sizeof m->last_error, what);
	if (*what && l + 2 < sizeof m->last_error) {
		memcpy(m->last_error + l, ": ", 3);
		l += 2;
	}
	cleanup_text_copy(m->last_error + l, sizeof m->last_error - l, err->message);
	l = strlen(m->last_error);
	while (l > 0 && (m->last_error[l - 1] == '\n' || m->last_error[l - 1] == ' '))
		m->last_error[--l] = '\0';
}

/* Records a failure of the monitor's own (no SQLSTATE): WHAT, MSG. */
static void set_error(cleanup_monitor *m, const char *what, const char *msg, int status)
{
	cleanup_error err;

	cleanup_error_set(&err, status, "%s", msg ? msg : "");
	set_error_record(m, what, &err);
}

/* Schedules the next connection attempt after a failed one. */
static void wait_to_retry(cleanup_monitor *m, double now)
{
	m->state = CLEANUP_MON_WAITING;
	m->backoff_ms = monitor_backoff_ms(m->attempts, m->backoff_initial_ms, m->backoff_max_ms);
	m->next_attempt = now + m->backoff_ms / 1000.0;
}

/* Starts a non-blocking connection attempt (the engine's connection
 * parameters, the monitor's fixed application name). */
static void start_connect(cleanup_monitor *m, double now)
{
	cleanup_error err;

	m->attempts++;
	m->connect_started = now;
	if (engine_connect_start(m->db, &err) != CLEANUP_OK) {
		set_error_record(m, "", &err);
		wait_to_retry(m, now);
		return;
	}
	m->state = CLEANUP_MON_CONNECTING;
	m->poll_want = PGRES_POLLING_WRITING;
}

/* Drops the connection after a failure and schedules the next attempt;
 * WHY (NULL: the failure is recorded already) names what failed, with
 * the connection's own message. */
/* Drops the lock rows and holders a lock cycle has read so far. */
static void drop_pending_locks(cleanup_monitor *m)
{
	free(m->pending_locks);
	m->pending_locks = NULL;
	m->pending_nlocks = 0;
	free(m->pending_holders);
	m->pending_holders = NULL;
	m->pending_nholders = 0;
}

static void lose_connection(cleanup_monitor *m, double now, const char *why)
{
	if (m->db->conn && why) {
		cleanup_error err;

		engine_error_from_result(&err, m->db, NULL, why);
		set_error_record(m, "", &err);
	}
	engine_disconnect(m->db);
	if (!m->stale && m->state == CLEANUP_MON_READY) {
		m->stale = true;
		m->stale_since = m->current->seq > 0 ? m->current->taken_at : cleanup_clock_wall();
	}
	m->state = CLEANUP_MON_WAITING;
	m->nops = m->opi = 0;
	m->op_sent = false;
	if (m->pending)
		snapshot_clear(m->pending);
	drop_pending_locks(m);
	/* The first retry after losing a working connection comes quickly;
	 * each failed attempt doubles the delay. */
	m->backoff_ms = monitor_backoff_ms(m->attempts > 0 ? m->attempts : 1, m->backoff_initial_ms,
	                                   m->backoff_max_ms);
	m->next_attempt = now + m->backoff_ms / 1000.0;
}

int cleanup_monitor_open(cleanup_monitor **out, const cleanup_monitor_opts *opts, cleanup_error *err)
{
	cleanup_monitor *m = NULL;
	cleanup_monitor_opts o = {0};

	*out = NULL;
	cleanup_error_clear(err);
	if (opts)
		o = *opts;
	if (o.refresh_ms < 0 || o.locks_timeout_ms < 0 || o.jobs_limit < 0 || o.steps_limit < 0 ||
	    o.events_limit < 0 || o.backoff_initial_ms < 0 || o.backoff_max_ms < 0 || o.notify_min_gap_ms < 0)
		return cleanup_error_set(err, CLEANUP_EINVAL, "monitor options must not be negative");
	if (o.query_timeout_ms < -1)
		return cleanup_error_set(err, CLEANUP_EINVAL,
		                         "monitor query_timeout_ms must be -1 (none), 0 (the default) or positive, not %d",
		                         o.query_timeout_ms);
	m = calloc(1, sizeof *m);
	if (!m)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	m->current = calloc(1, sizeof *m->current);
	m->pending = calloc(1, sizeof *m->pending);
	if (!m->current || !m->pending ||
	    engine_new(&m->db, o.conninfo, o.app_name ? o.app_name : "cleanupctl:console", err) != CLEANUP_OK) {
		cleanup_monitor_close(m);
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	}
	/* The console's name stays what it says, whatever PGAPPNAME says:
	 * the console and the lock view find it by that name. */
	m->db->app_name_fixed = true;
	snapshot_clear(m->current);
	snapshot_clear(m->pending);
	m->refresh_ms = o.refresh_ms ? o.refresh_ms : 1000;
	m->locks_ms = o.locks_ms ? o.locks_ms : 3000;
	m->locks_timeout_ms = o.locks_timeout_ms ? o.locks_timeout_ms : 250;
	m->notify_gap_ms = o.notify_min_gap_ms ? o.notify_min_gap_ms : 30;
	m->jobs_limit = o.jobs_limit ? o.jobs_limit : 20;
	m->steps_limit = o.steps_limit ? o.steps_limit : 60;
	if (m->steps_limit > CLEANUP_MON_STEPS_PAGE)
		m->steps_limit = CLEANUP_MON_STEPS_PAGE;
	m->query_timeout_ms = o.query_timeout_ms ? o.query_timeout_ms : 2000;
	m->steps_upto = -1;
	m->events_limit = o.events_limit ? o.events_limit : 100;
	m->backoff_initial_ms = o.backoff_initial_ms ? o.backoff_initial_ms : 250;
	m->backoff_max_ms = o.backoff_max_ms ? o.backoff_max_ms : 8000;
	if (m->backoff_max_ms < m->backoff_initial_ms)
		m->backoff_max_ms = m->backoff_initial_ms;
	m->detail_job_id = -1;
	cleanup_monitor_set_interval(m, m->refresh_ms);
	start_connect(m, cleanup_monitor_now());
	*out = m;
	return CLEANUP_OK;
}

void cleanup_monitor_close(cleanup_monitor *m)
{
	if (!m)
		return;
	cleanup_engine_close(m->db);
	cleanup_mon_snapshot_free(m->current);
	cleanup_mon_snapshot_free(m->pending);
	free(m->ecache);
	drop_pending_locks(m);
	free(m);
}

int cleanup_monitor_fd(const cleanup_monitor *m, short *events)
{
	*events = 0;
	if (!m->db->conn || m->state == CLEANUP_MON_WAITING)
		return -1;
	if (m->state == CLEANUP_MON_CONNECTING) {
		*events = m->poll_want == PGRES_POLLING_READING ? POLLIN : POLLOUT;
		return PQsocket(m->db->conn);
	}
	*events = POLLIN;
	if (PQisnonblocking(m->db->conn) && PQflush(m->db->conn) == 1)
		*events |= POLLOUT;
	return PQsocket(m->db->conn);
}

static int ms_until(double t, double now)
{
	double d = (t - now) * 1000.0;

	if (d <= 0)
		return 0;
	if (d > 60000)
		return 60000;
	return (int)d + 1;
}

int cleanup_monitor_timeout_ms(const cleanup_monitor *m, double now)
{
	int t = 60000, x;

	switch (m->state) {
	case CLEANUP_MON_WAITING:
		return ms_until(m->next_attempt, now);
	case CLEANUP_MON_CONNECTING:
		return ms_until(m->connect_started + CONNECT_TIMEOUT_S, now);
	case CLEANUP_MON_READY:
		if (m->nops > 0)
			return 1000; /* results arrive on the socket; this is a safety net */
		x = ms_until(m->refresh_due, now);
		t = x < t ? x : t;
		if (m->locks_ms > 0) {
			x = ms_until(m->locks_due, now);
			t = x < t ? x : t;
		}
		return t;
	}
	return t;
}

/* ---- sending ---------------------------------------------------------- */

/* What op does, for error records ("reading jobs"). */
static const char *op_context(mon_op op)
{
	switch (op) {
	case MON_OP_PROBE:
		return "identifying the server";
	case MON_OP_ROLE:
		return "reading the server's role";
	case MON_OP_TX_BEGIN:
	case MON_OP_TX_END:
		return "the refresh transaction";
	case MON_OP_LISTEN:
		return "setting up the console's session";
	case MON_OP_PREPARE:
		return "preparing the console's queries";
	case MON_OP_SERVERS:
		return "reading servers";
	case MON_OP_LIBRARIES:
		return "reading libraries";
	case MON_OP_JOBS:
		return "reading jobs";
	case MON_OP_STEPS:
		return "reading the job's steps";
	case MON_OP_STEP_RATE:
		return "reading the job's step rate";
	case MON_OP_EVENTS:
		return "reading the log";
	case MON_OP_CONTENTION:
		return "reading contention";
	case MON_OP_LOCKS_BEGIN:
	case MON_OP_LOCKS:
	case MON_OP_HOLDERS:
	case MON_OP_LOCKS_END:
		return "reading locks";
	default:
		return "refreshing";
	}
}

/* Sends prepared Q with V (a row limit, an age) as its one parameter. */
static int send_int_query(cleanup_monitor *m, enum sql_query_id q, int v, const char *ctx, cleanup_error *err)
{
	char buf[16];
	const char *params[1] = {buf};

	snprintf(buf, sizeof buf, "%d", v);
	return engine_send_query(m->db, q, 1, params, ctx, err);
}

/* Sends ops[opi] through the engine's non-blocking calls. Returns false
 * when it could not be sent (the failure is recorded). */
static bool send_op(cleanup_monitor *m)
{
	char p1[32], p2[32], p3[32], sql[160];
	const char *params[3] = {p1, p2, p3};
	mon_op op = m->ops[m->opi];
	const char *ctx = op_context(op);
	cleanup_error err;
	int rc;

	switch (op) {
	case MON_OP_PROBE:
		rc = engine_send_script(m->db, ENGINE_PROBE_SQL, ctx, &err);
		break;
	case MON_OP_LISTEN: {
		/* A direct connection (its session ends with the console):
		 * LISTEN (not during recovery: a standby refuses it), the
		 * statement_timeout of every refresh query (the lock query's
		 * transaction sets its own), and a read-only session: the
		 * console's data source changes nothing. */
		char text[640], timeout[64];

		engine_timeout_sql(timeout, sizeof timeout, m->query_timeout_ms, false);
		snprintf(text, sizeof text, "%s%s%s; SET lock_timeout = %d; SET default_transaction_read_only = on",
		         m->db->standby ? "" : sql_query_files[CLEANUP_Q_MON_LISTEN].text, m->db->standby ? "" : "\n; ",
		         timeout, m->query_timeout_ms > 0 ? m->query_timeout_ms : 0);
		rc = engine_send_script(m->db, text, ctx, &err);
		break;
	}
	case MON_OP_ROLE:
		/* Replay lag: 0 when everything received is replayed, else the
		 * age of the last replayed commit. */
		rc = engine_send_script(m->db,
		                        "SELECT pg_catalog.pg_is_in_recovery() AS standby, CASE WHEN NOT "
		                        "pg_catalog.pg_is_in_recovery() THEN NULL WHEN pg_catalog.pg_last_wal_receive_lsn() "
		                        "IS NOT DISTINCT FROM pg_catalog.pg_last_wal_replay_lsn() THEN 0 ELSE "
		                        "extract(epoch FROM pg_catalog.clock_timestamp() - "
		                        "pg_catalog.pg_last_xact_replay_timestamp())::float8 END AS lag_s",
		                        ctx, &err);
		break;
	case MON_OP_TX_BEGIN:
		/* Behind a pooler: no session settings, the refresh's own. */
		snprintf(sql, sizeof sql, "BEGIN READ ONLY; SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d",
		         m->query_timeout_ms > 0 ? m->query_timeout_ms : 0, m->query_timeout_ms > 0 ? m->query_timeout_ms : 0);
		rc = engine_send_script(m->db, sql, ctx, &err);
		break;
	case MON_OP_TX_END:
		rc = engine_send_script(m->db, "ROLLBACK", ctx, &err);
		break;
	case MON_OP_PREPARE:
		rc = engine_send_prepare(m->db, mon_queries[m->prep_index], 0, ctx, &err);
		break;
	case MON_OP_SERVERS:
		rc = send_int_query(m, CLEANUP_Q_MON_SERVERS, 500, ctx, &err);
		break;
	case MON_OP_LIBRARIES:
		rc = send_int_query(m, CLEANUP_Q_MON_LIBRARIES, 2000, ctx, &err);
		break;
	case MON_OP_JOBS:
		rc = send_int_query(m, CLEANUP_Q_MON_JOBS, m->jobs_limit, ctx, &err);
		break;
	case MON_OP_STEPS:
		/* a page of 120 steps (mon_steps.sql); steps_limit cuts it */
		snprintf(p1, sizeof p1, "%" PRId64, m->pending->detail_job_id);
		snprintf(p2, sizeof p2, "%" PRId64,
		         m->pending->steps_upto >= 0 && m->pending->steps_upto < INT32_MAX ? m->pending->steps_upto
		                                                                         : (int64_t)INT32_MAX);
		rc = engine_send_query(m->db, CLEANUP_Q_MON_STEPS, 2, params, ctx, &err);
		break;
	case MON_OP_STEP_RATE:
		snprintf(p1, sizeof p1, "%" PRId64, m->pending->detail_job_id);
		snprintf(p2, sizeof p2, "%" PRId64, m->rate_last_step);
		rc = engine_send_query(m->db, CLEANUP_Q_MON_STEP_RATE, 2, params, ctx, &err);
		break;
	case MON_OP_EVENTS:
		snprintf(p1, sizeof p1, "%d", m->events_limit);
		snprintf(p2, sizeof p2, "%" PRId64,
		         m->events_seen > EVENTS_MARGIN ? m->events_seen - EVENTS_MARGIN : (int64_t)0);
		snprintf(p3, sizeof p3, "%d", m->events_limit * MON_BUSY_FACTOR);
		rc = engine_send_query(m->db, CLEANUP_Q_MON_EVENTS, 3, params, ctx, &err);
		break;
	case MON_OP_CONTENTION:
		rc = send_int_query(m, CLEANUP_Q_MON_CONTENTION, 8, ctx, &err);
		break;
	case MON_OP_LOCKS_BEGIN: {
		char timeout[64];

		engine_timeout_sql(timeout, sizeof timeout, m->locks_timeout_ms, true);
		snprintf(sql, sizeof sql, "BEGIN READ ONLY; %s", timeout);
		rc = engine_send_script(m->db, sql, ctx, &err);
		break;
	}
	case MON_OP_LOCKS:
		rc = engine_send_query(m->db, CLEANUP_Q_LOCKS_TREE, 0, NULL, ctx, &err);
		break;
	case MON_OP_HOLDERS:
		rc = send_int_query(m, CLEANUP_Q_MON_IDLE_XACT, MON_IDLE_XACT_S, ctx, &err);
		break;
	case MON_OP_LOCKS_END:
		rc = engine_send_script(m->db, "ROLLBACK", ctx, &err);
		break;
	default:
		return true; /* markers are handled by advance() */
	}
	m->op_failed = false;
	if (rc != CLEANUP_OK) {
		set_error_record(m, "", &err);
		return false;
	}
	m->op_sent = true;
	return true;
}

static void begin_cycle(cleanup_monitor *m, const mon_op *ops, int n, double now)
{
	memcpy(m->ops, ops, (size_t)n * sizeof *ops);
	m->nops = n;
	m->opi = 0;
	m->op_sent = false;
	m->op_failed = false;
	m->cycle_started = now;
}

static void begin_setup(cleanup_monitor *m, double now)
{
	mon_op ops[MON_MAX_OPS];
	int n = 0, i;

	ops[n++] = MON_OP_PROBE;
	ops[n++] = MON_OP_LISTEN;
	for (i = 0; i < N_MON_QUERIES; i++)
		ops[n++] = MON_OP_PREPARE;
	m->prep_index = 0;
	begin_cycle(m, ops, n, now);
}

static void begin_refresh(cleanup_monitor *m, double now)
{
	static const mon_op ops[] = {MON_OP_TX_BEGIN,  MON_OP_ROLE,   MON_OP_SERVERS,    MON_OP_LIBRARIES,
	                             MON_OP_JOBS,      MON_OP_STEPS,  MON_OP_STEP_RATE,  MON_OP_EVENTS,
	                             MON_OP_CONTENTION, MON_OP_TX_END, MON_OP_REFRESH_DONE};

	snapshot_clear(m->pending);
	m->pending->detail_job_id = m->detail_job_id;
	m->pending->steps_upto = m->detail_job_id >= 0 ? m->steps_upto : -1;
	if (m->rate_job_id != m->detail_job_id) {
		/* Another job: its rate is counted from scratch. */
		m->rate_job_id = m->detail_job_id;
		m->rate_last_step = -1;
		m->rate_head = 0;
		memset(m->rate, 0, sizeof m->rate);
	}
	m->last_refresh_start = now;
	m->refresh_due = now + m->refresh_ms / 1000.0;
	begin_cycle(m, ops, (int)(sizeof ops / sizeof ops[0]), now);
}

static void begin_locks(cleanup_monitor *m, double now)
{
	static const mon_op ops[] = {MON_OP_LOCKS_BEGIN, MON_OP_LOCKS, MON_OP_HOLDERS, MON_OP_LOCKS_END,
	                             MON_OP_LOCKS_DONE};

	drop_pending_locks(m);
	m->pending_locks_error[0] = '\0';
	m->locks_due = now + m->locks_ms / 1000.0;
	begin_cycle(m, ops, (int)(sizeof ops / sizeof ops[0]), now);
}

/* ---- parsing ---------------------------------------------------------- */

/* A server or library row is the status row (report.c's columns) plus
 * what the console adds. */
static const engine_col server_cols[] = {
	ROW_TEXT(cleanup_mon_server, job_kind),
	ROW_TEXT(cleanup_mon_server, job_phase),
};

static void server_row(void *elem, const PGresult *res, int row)
{
	engine_row_map(&((cleanup_mon_server *)elem)->row, engine_server_row_cols, engine_server_row_ncols, res, row);
}

static const engine_col library_cols[] = {
	ROW_TEXT(cleanup_mon_library, job_kind),
	ROW_TEXT(cleanup_mon_library, job_phase),
	ROW_TEXT(cleanup_mon_library, count_state),
	ROW_TEXT(cleanup_mon_library, count_reason),
};

static void library_row(void *elem, const PGresult *res, int row)
{
	engine_row_map(&((cleanup_mon_library *)elem)->row, engine_library_row_cols, engine_library_row_ncols, res,
	               row);
}

/* What the jobs query adds to a job row (job_fields_from_row). */
static const engine_col job_cols[] = {
	ROW_TEXT(cleanup_mon_job, last_error_at),
	ROW_INT(cleanup_mon_job, window_steps, 0),
	ROW_I64(cleanup_mon_job, window_rows),
	ROW_DBL(cleanup_mon_job, window_first_start, -1),
	ROW_DBL(cleanup_mon_job, window_last_end, -1),
	ROW_DBL(cleanup_mon_job, last_step_age_s, -1),
	ROW_DBL(cleanup_mon_job, unattended_s, -1),
	ROW_DBL(cleanup_mon_job, closed_s, -1),
	ROW_INT(cleanup_mon_job, runner_pid, 0),
	ROW_TEXT(cleanup_mon_job, runner_app),
	ROW_TEXT(cleanup_mon_job, runner_client),
	ROW_INT(cleanup_mon_job, runner_os_pid, 0),
	ROW_TEXT(cleanup_mon_job, runner_since),
	ROW_DBL(cleanup_mon_job, runner_age_s, -1),
};

static void job_rest(void *elem, const PGresult *res, int row)
{
	job_fields_from_row(&((cleanup_mon_job *)elem)->job, res, row);
}

static const engine_col step_cols[] = {
	ROW_I32(cleanup_mon_step, step_no),
	ROW_TEXT(cleanup_mon_step, action),
	ROW_I32(cleanup_mon_step, pass_no),
	ROW_I64(cleanup_mon_step, library_id),
	ROW_I32(cleanup_mon_step, visited),
	ROW_I32(cleanup_mon_step, deleted),
	ROW_I32(cleanup_mon_step, moved),
	ROW_I32(cleanup_mon_step, absent),
	ROW_I32(cleanup_mon_step, retained),
	ROW_I32(cleanup_mon_step, kept),
	ROW_I32(cleanup_mon_step, libraries_deleted),
	ROW_I32(cleanup_mon_step, servers_deleted),
	ROW_I32(cleanup_mon_step, mutations),
	ROW_I32(cleanup_mon_step, dependent_mutations),
	ROW_I32(cleanup_mon_step, claims_in_flight),
	ROW_I64(cleanup_mon_step, cursor_from),
	ROW_I64(cleanup_mon_step, cursor_to),
	ROW_TEXT(cleanup_mon_step, key_from),
	ROW_TEXT(cleanup_mon_step, key_to),
	ROW_DBL(cleanup_mon_step, gap_s, -1),
	ROW_TEXT(cleanup_mon_step, phase_after),
	ROW_DBL(cleanup_mon_step, started_epoch, 0),
	ROW_TEXT(cleanup_mon_step, started),
	ROW_DBL(cleanup_mon_step, duration_ms, 0),
	ROW_DBL(cleanup_mon_step, lock_hold_ms, 0),
	ROW_DBL(cleanup_mon_step, parent_lock_ms, -1),
	ROW_I32_OR(cleanup_mon_step, runner_pid, 0),
	ROW_TEXT(cleanup_mon_step, runner_app),
};

/* Rows of RES into *ROWS / *N through COLS (and FN); NULL, 0 and ENOMEM
 * when out of memory. */
static int parse_rows(void *rows, size_t *n, size_t elem, const engine_col *cols, size_t ncols, engine_row_fn fn,
                      const PGresult *res, int limit)
{
	void *v;
	int rc = engine_rows_map(&v, n, elem, cols, ncols, fn, res, limit, NULL);

	memcpy(rows, &v, sizeof v);
	return rc;
}
#define PARSE_ROWS(field, nfield, cols, fn, res, limit) \
	parse_rows(&(field), &(nfield), sizeof *(field), cols, ROW_COUNT(cols), fn, res, limit)

static int parse_servers(cleanup_mon_snapshot *s, const PGresult *res)
{
	return PARSE_ROWS(s->servers, s->nservers, server_cols, server_row, res, -1);
}

static int parse_libraries(cleanup_mon_snapshot *s, const PGresult *res)
{
	return PARSE_ROWS(s->libraries, s->nlibraries, library_cols, library_row, res, -1);
}

static int parse_jobs(cleanup_mon_snapshot *s, const PGresult *res)
{
	return PARSE_ROWS(s->jobs, s->njobs, job_cols, job_rest, res, -1);
}

static int parse_steps(cleanup_mon_snapshot *s, const PGresult *res, int m_steps_limit)
{
	return PARSE_ROWS(s->steps, s->nsteps, step_cols, NULL, res, m_steps_limit);
}

/* Moves the step-rate ring's newest second to SEC, zeroing the seconds
 * it passes. */
static void rate_advance(cleanup_monitor *m, int64_t sec)
{
	int64_t t;

	if (sec <= m->rate_head)
		return;
	if (sec - m->rate_head >= CLEANUP_MON_RATE_SECONDS)
		memset(m->rate, 0, sizeof m->rate);
	else
		for (t = m->rate_head + 1; t <= sec; t++)
			m->rate[t % CLEANUP_MON_RATE_SECONDS] = 0;
	m->rate_head = sec;
}

/* New step records of the detail job: counted once each into the ring. */
static int parse_step_rate(cleanup_monitor *m, const PGresult *res)
{
	int n = PQntuples(res), i;

	rate_advance(m, (int64_t)cleanup_clock_wall());
	for (i = 0; i < n; i++) {
		int64_t no = col_int64(res, i, "step_no");
		int64_t sec = (int64_t)col_number(res, i, "started_epoch", 0);

		if (no > m->rate_last_step)
			m->rate_last_step = no;
		rate_advance(m, sec); /* a server clock ahead of ours */
		if (sec > m->rate_head - CLEANUP_MON_RATE_SECONDS && sec <= m->rate_head)
			m->rate[sec % CLEANUP_MON_RATE_SECONDS]++;
	}
	return CLEANUP_OK;
}

/* Copies the ring into snapshot S, oldest second first. */
static void rate_publish(cleanup_monitor *m, cleanup_mon_snapshot *s)
{
	int i;

	if (s->detail_job_id < 0 || m->rate_job_id != s->detail_job_id) {
		s->rate_job_id = -1;
		return;
	}
	rate_advance(m, (int64_t)cleanup_clock_wall());
	s->rate_job_id = m->rate_job_id;
	s->rate_end_epoch = (double)m->rate_head;
	for (i = 0; i < CLEANUP_MON_RATE_SECONDS; i++)
		s->rate[i] = m->rate[(m->rate_head - (CLEANUP_MON_RATE_SECONDS - 1) + i) % CLEANUP_MON_RATE_SECONDS];
}

static const engine_col event_cols[] = {
	ROW_I64(cleanup_mon_event, id),
	ROW_DBL(cleanup_mon_event, at_epoch, 0),
	ROW_TEXT_AS(cleanup_mon_event, at, "at_text"),
	ROW_I64(cleanup_mon_event, job_id),
	ROW_TEXT(cleanup_mon_event, kind),
	ROW_TEXT(cleanup_mon_event, source),
	ROW_TEXT(cleanup_mon_event, message),
};

static void event_from_row(cleanup_mon_event *v, const PGresult *res, int i)
{
	engine_row_map(v, event_cols, ROW_COUNT(event_cols), res, i);
	v->audit = strcmp(col_text(res, i, "origin"), "audit") == 0;
}

/* Newest first: by time, then by id (audit rows and events interleave). */
static int event_newer_first(const void *a, const void *b)
{
	const cleanup_mon_event *x = a, *y = b;

	if (x->at_epoch != y->at_epoch)
		return x->at_epoch > y->at_epoch ? -1 : 1;
	if (x->id != y->id)
		return x->id > y->id ? -1 : 1;
	return 0;
}

/* The log: new engine events (after events_seen less the margin) merged
 * into the cache, the newest audit rows, and a 'mark' row with the newest
 * event id; the snapshot gets the newest events_limit audit rows, the
 * newest events_limit lifecycle events and the newest 10 x events_limit
 * busy retries, merged newest first. */
static int parse_events(cleanup_monitor *m, cleanup_mon_snapshot *s, const PGresult *res)
{
	int n = PQntuples(res), i;
	size_t lim = (size_t)m->events_limit, ncache = 0, nall = 0, k;
	cleanup_mon_event *cache = NULL, *all = NULL;
	int rc = CLEANUP_OK;

	cache = calloc(m->necache + (size_t)n + 1, sizeof *cache);
	all = calloc(m->necache + (size_t)n + 1, sizeof *all);
	if (!cache || !all) {
		rc = CLEANUP_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const char *origin = col_text(res, i, "origin");

		if (strcmp(origin, "mark") == 0) {
			int64_t id = col_int64(res, i, "id");

			if (id > m->events_seen)
				m->events_seen = id;
		} else if (strcmp(origin, "audit") == 0) {
			event_from_row(&all[nall++], res, i);
		} else {
			cleanup_mon_event *v = &cache[ncache];

			event_from_row(v, res, i);
			for (k = 0; k < m->necache && m->ecache[k].id != v->id; k++)
				;
			if (k == m->necache) /* not read before */
				ncache++;
		}
	}
	for (k = 0; k < m->necache; k++)
		cache[ncache++] = m->ecache[k];
	qsort(cache, ncache, sizeof *cache, event_newer_first);
	/* The newest LIM busy retries and the newest LIM other events, kept
	 * apart: a storm of busy retries never pushes a
	 * lifecycle event out, and the other way round. */
	{
		size_t nbusy = 0, nother = 0, keep = 0;

		for (k = 0; k < ncache; k++) {
			bool busy = strcmp(cache[k].kind, "busy") == 0;

			if (busy ? nbusy++ < lim * MON_BUSY_FACTOR : nother++ < lim)
				cache[keep++] = cache[k];
		}
		ncache = keep;
	}
	for (k = 0; k < ncache; k++)
		all[nall++] = cache[k];
	qsort(all, nall, sizeof *all, event_newer_first);
	free(m->ecache);
	m->ecache = cache;
	m->necache = ncache;
	cache = NULL;
	s->events = nall > 0 ? all : NULL;
	s->nevents = nall;
	if (nall > 0)
		all = NULL;
out:
	free(cache);
	free(all);
	return rc;
}

static const engine_col contention_cols[] = {
	ROW_TEXT(cleanup_mon_contention, kind),
	ROW_TEXT(cleanup_mon_contention, source),
	ROW_I64(cleanup_mon_contention, n),
	ROW_TEXT_AS(cleanup_mon_contention, at, "at_text"),
	ROW_I64(cleanup_mon_contention, job_id),
	ROW_TEXT(cleanup_mon_contention, message),
};

static void contention_rest(void *elem, const PGresult *res, int row)
{
	((cleanup_mon_contention *)elem)->count = strcmp(col_text(res, row, "row_kind"), "count") == 0;
}

static int parse_contention(cleanup_mon_snapshot *s, const PGresult *res)
{
	return PARSE_ROWS(s->contention, s->ncontention, contention_cols, contention_rest, res, -1);
}

/* The snapshot part a refresh op fills (0: none). */
static unsigned op_part(mon_op op)
{
	switch (op) {
	case MON_OP_SERVERS:
		return CLEANUP_MON_PART_SERVERS;
	case MON_OP_LIBRARIES:
		return CLEANUP_MON_PART_LIBRARIES;
	case MON_OP_JOBS:
		return CLEANUP_MON_PART_JOBS;
	case MON_OP_STEPS:
	case MON_OP_STEP_RATE:
		return CLEANUP_MON_PART_STEPS;
	case MON_OP_EVENTS:
		return CLEANUP_MON_PART_EVENTS;
	case MON_OP_CONTENTION:
		return CLEANUP_MON_PART_CONTENTION;
	default:
		return 0;
	}
}

/* A refresh query of PART timed out: the pending snapshot keeps the
 * current one's rows of that part (copied), marked stale. Returns false
 * on memory exhaustion. */
static bool keep_previous_part(cleanup_monitor *m, unsigned part)
{
	cleanup_mon_snapshot *p = m->pending, *c = m->current;
	bool fail = false;
	size_t i;

	double at = (c->stale_parts & part) ? c->stale_parts_at : c->taken_at;

	if (!p->stale_parts || at < p->stale_parts_at)
		p->stale_parts_at = at; /* the oldest rows shown */
	p->stale_parts |= part;
	/* The step-rate read after the steps, or another page: no steps kept. */
	if (part == CLEANUP_MON_PART_STEPS &&
	    (p->steps || c->detail_job_id != p->detail_job_id || c->steps_upto != p->steps_upto))
		return true;
	for (i = 0; i < N_SNAPSHOT_ROWS; i++)
		if (snapshot_rows[i].part == part) {
			free(rows_of(p, &snapshot_rows[i], NULL));
			copy_rows(p, c, &snapshot_rows[i], &fail);
		}
	return !fail;
}

static const engine_col holder_cols[] = {
	ROW_INT(cleanup_mon_holder, pid, -1),
	ROW_TEXT(cleanup_mon_holder, role),
	ROW_TEXT(cleanup_mon_holder, application),
	ROW_TEXT(cleanup_mon_holder, client),
	ROW_TEXT(cleanup_mon_holder, state),
	ROW_DBL(cleanup_mon_holder, xact_age_ms, -1),
	ROW_TEXT(cleanup_mon_holder, holds),
	ROW_BOOL(cleanup_mon_holder, idle),
};

/* The rows of mon_idle_xact.sql into pending_holders. */
static int parse_holders(cleanup_monitor *m, const PGresult *res)
{
	free(m->pending_holders);
	m->pending_holders = NULL;
	m->pending_nholders = 0;
	if (PQfnumber(res, "pid") < 0 || PQfnumber(res, "idle") < 0)
		return CLEANUP_ERROR;
	if (PQntuples(res) == 0)
		return CLEANUP_OK;
	return PARSE_ROWS(m->pending_holders, m->pending_nholders, holder_cols, NULL, res, -1);
}

/* Handles one result of ops[opi]. Returns false when the connection must
 * be dropped (a refresh query failed: the schema may be gone or the server
 * going down; a fresh connection sorts it out). */
static bool handle_result(cleanup_monitor *m, PGresult *res)
{
	mon_op op = m->ops[m->opi];
	cleanup_error err;
	bool timed_out;
	int rc;

	if (op == MON_OP_PROBE) {
		if (engine_probe_result(m->db, res, &err) != CLEANUP_OK) {
			set_error_record(m, "refresh failed", &err);
			return false;
		}
		return true;
	}
	rc = op == MON_OP_PREPARE
	         ? engine_prepare_result(m->db, mon_queries[m->prep_index], res, op_context(op), &err)
	         : engine_check_result(m->db, res, op_context(op), &err);
	if (rc != CLEANUP_OK && (op == MON_OP_TX_END || op == MON_OP_ROLE))
		return true; /* the role stays unknown this time; ROLLBACK of nothing */
	if (rc != CLEANUP_OK) {
		/* 57014: statement_timeout (or a cancel) ended the query; 25P02:
		 * behind a pooler, a query after it in the same refresh
		 * transaction (their parts keep their rows as well) */
		timed_out = strcmp(err.sqlstate, "57014") == 0 ||
		            (m->db->pooled && strcmp(err.sqlstate, "25P02") == 0);
		m->op_failed = true;
		if (op == MON_OP_LOCKS || op == MON_OP_LOCKS_BEGIN || op == MON_OP_HOLDERS) {
			if (timed_out)
				snprintf(m->pending_locks_error, sizeof m->pending_locks_error,
				         "locks: timed out after %d ms", m->locks_timeout_ms);
			else {
				/* the engine's message is never empty */
				memcpy(m->pending_locks_error, "locks: ", 7);
				cleanup_text_copy(m->pending_locks_error + 7, sizeof m->pending_locks_error - 7, err.message);
			}
			return true;
		}
		if (op == MON_OP_LOCKS_END)
			return true;
		if (timed_out && op_part(op)) {
			/* statement_timeout (a locked catalog, a stuck table): the
			 * console keeps this part's previous rows, marked stale, and
			 * the cycle goes on; the next refresh tries again. */
			if (!keep_previous_part(m, op_part(op))) {
				set_error(m, "refresh failed", "out of memory", CLEANUP_ENOMEM);
				return false;
			}
			return true;
		}
		set_error_record(m, "refresh failed", &err);
		return false;
	}
	switch (op) {
	case MON_OP_ROLE:
		m->pending->standby = strcmp(col_text(res, 0, "standby"), "t") == 0;
		m->pending->replay_lag_s = col_number(res, 0, "lag_s", -1);
		m->pending->pooled = m->db->pooled;
		if (m->db->standby && !m->pending->standby && !m->db->pooled) {
			/* Promoted (a failover): a new session listens again. */
			set_error(m, "the server was promoted", "reconnecting to listen for notifications", CLEANUP_ECONN);
			return false;
		}
		m->db->standby = m->pending->standby;
		return true;
	case MON_OP_SERVERS:
		rc = parse_servers(m->pending, res);
		break;
	case MON_OP_LIBRARIES:
		rc = parse_libraries(m->pending, res);
		break;
	case MON_OP_JOBS:
		rc = parse_jobs(m->pending, res);
		break;
	case MON_OP_STEPS:
		rc = parse_steps(m->pending, res, m->steps_limit);
		break;
	case MON_OP_STEP_RATE:
		rc = parse_step_rate(m, res);
		break;
	case MON_OP_EVENTS:
		rc = parse_events(m, m->pending, res);
		break;
	case MON_OP_CONTENTION:
		rc = parse_contention(m->pending, res);
		break;
	case MON_OP_LOCKS:
		free(m->pending_locks);
		m->pending_locks = NULL;
		rc = locks_rows_from_result(&m->pending_locks, &m->pending_nlocks, res);
		if (rc != CLEANUP_OK)
			snprintf(m->pending_locks_error, sizeof m->pending_locks_error,
			         "locks: unexpected result of the lock query");
		return true;
	case MON_OP_HOLDERS:
		if (parse_holders(m, res) != CLEANUP_OK)
			snprintf(m->pending_locks_error, sizeof m->pending_locks_error,
			         "locks: unexpected result of the holders query");
		return true;
	default:
		break;
	}
	if (rc != CLEANUP_OK) {
		set_error(m, "refresh failed", "out of memory", CLEANUP_ENOMEM);
		return false;
	}
	return true;
}

/* A refresh cycle completed: the pending snapshot becomes the current one,
 * keeping the lock rows (they have their own schedule). */
static void publish_refresh(cleanup_monitor *m, double now)
{
	cleanup_mon_snapshot *old = m->current;

	m->pending->locks = old->locks;
	m->pending->nlocks = old->nlocks;
	m->pending->locks_valid = old->locks_valid;
	m->pending->locks_at = old->locks_at;
	m->pending->locks_ms = old->locks_ms;
	memcpy(m->pending->locks_error, old->locks_error, sizeof old->locks_error);
	old->locks = NULL;
	old->nlocks = 0;
	m->pending->holders = old->holders;
	m->pending->nholders = old->nholders;
	old->holders = NULL;
	old->nholders = 0;
	rate_publish(m, m->pending);
	m->pending->seq = old->seq + 1;
	m->pending->taken_at = cleanup_clock_wall();
	m->pending->db_ms = (now - m->cycle_started) * 1000.0;
	m->current = m->pending;
	m->pending = old;
	snapshot_clear(m->pending);
	m->stale = false;
	m->last_error[0] = '\0';
	cleanup_error_clear(&m->error);
}

static void publish_locks(cleanup_monitor *m, double now)
{
	cleanup_mon_snapshot *c = m->current;

	if (!m->pending_locks_error[0]) {
		free(c->locks);
		c->locks = m->pending_locks;
		c->nlocks = m->pending_nlocks;
		c->locks_valid = true;
		c->locks_at = cleanup_clock_wall();
		c->locks_ms = (now - m->cycle_started) * 1000.0;
		m->pending_locks = NULL;
		m->pending_nlocks = 0;
		free(c->holders);
		c->holders = m->pending_holders;
		c->nholders = m->pending_nholders;
		m->pending_holders = NULL;
		m->pending_nholders = 0;
	}
	memcpy(c->locks_error, m->pending_locks_error, sizeof c->locks_error);
	c->seq++;
}

/* True when OP is not sent on this connection: the detail job's queries
 * without a detail job; LISTEN and PREPARE behind a pooler (no session
 * state there); the refresh transaction on a direct connection (its
 * session has the settings). */
static bool skip_op(const cleanup_monitor *m, mon_op op)
{
	if ((op == MON_OP_STEPS || op == MON_OP_STEP_RATE) && m->pending->detail_job_id < 0)
		return true;
	if (op == MON_OP_LISTEN || op == MON_OP_PREPARE)
		return m->db->pooled;
	if (op == MON_OP_TX_BEGIN || op == MON_OP_TX_END)
		return !m->db->pooled;
	return false;
}

/* Moves past the op whose results are all in; runs markers and sends the
 * next op. Returns the CLEANUP_MON_* bits it produced. */
static int advance(cleanup_monitor *m, double now)
{
	int bits = 0;

	for (;;) {
		mon_op op;

		m->op_sent = false;
		if (m->ops[m->opi] == MON_OP_PREPARE)
			m->prep_index++;
		m->opi++;
		if (m->opi >= m->nops) {
			m->nops = m->opi = 0;
			return bits;
		}
		op = m->ops[m->opi];
		if (skip_op(m, op))
			continue;
		if (op == MON_OP_REFRESH_DONE) {
			publish_refresh(m, now);
			bits |= CLEANUP_MON_SNAPSHOT;
			continue;
		}
		if (op == MON_OP_LOCKS_DONE) {
			publish_locks(m, now);
			bits |= CLEANUP_MON_SNAPSHOT;
			continue;
		}
		if ((op == MON_OP_LOCKS || op == MON_OP_HOLDERS) && m->pending_locks_error[0])
			continue; /* BEGIN failed; go straight to ROLLBACK */
		if (!send_op(m)) {
			lose_connection(m, now, NULL);
			return bits | CLEANUP_MON_STATE;
		}
		return bits;
	}
}

/* Starts the first op of a new cycle (the cycle was set up by begin_*). */
static int kick(cleanup_monitor *m, double now)
{
	mon_op op = m->ops[0];

	if (skip_op(m, op)) {
		m->opi = 0;
		return advance(m, now);
	}
	if (!send_op(m)) {
		lose_connection(m, now, NULL);
		return CLEANUP_MON_STATE;
	}
	return 0;
}

static int drain_notifies(cleanup_monitor *m, double now)
{
	PGnotify *n;
	int bits = 0;

	while ((n = PQnotifies(m->db->conn)) != NULL) {
		double at = m->last_refresh_start + m->notify_gap_ms / 1000.0;

		m->notifications++;
		if (at < now)
			at = now;
		if (at < m->refresh_due)
			m->refresh_due = at;
		bits |= CLEANUP_MON_NOTIFIED;
		PQfreemem(n);
	}
	return bits;
}

static bool socket_ready(PGconn *conn, short events)
{
	struct pollfd p = {.fd = PQsocket(conn), .events = events};

	if (p.fd < 0)
		return true;
	return poll(&p, 1, 0) > 0;
}

static int service_connecting(cleanup_monitor *m, double now)
{
	PostgresPollingStatusType st;
	cleanup_error err;

	if (now - m->connect_started > CONNECT_TIMEOUT_S) {
		set_error(m, "cannot connect", "timed out", CLEANUP_ECONN);
		lose_connection(m, now, NULL);
		return CLEANUP_MON_STATE;
	}
	if (!socket_ready(m->db->conn, m->poll_want == PGRES_POLLING_READING ? POLLIN : POLLOUT))
		return 0;
	st = engine_connect_poll(m->db, &err);
	if (st == PGRES_POLLING_FAILED) {
		set_error_record(m, "", &err);
		wait_to_retry(m, now);
		return CLEANUP_MON_STATE;
	}
	if (st != PGRES_POLLING_OK) {
		m->poll_want = st;
		return 0;
	}
	/* Connected (set up as every engine connection is): listen,
	 * prepare, then refresh at once. */
	if (PQsetnonblocking(m->db->conn, 1) != 0) {
		lose_connection(m, now, "setting non-blocking mode");
		return CLEANUP_MON_STATE;
	}
	m->state = CLEANUP_MON_READY;
	{
		const char *v = PQparameterStatus(m->db->conn, "server_version");

		snprintf(m->where, sizeof m->where, "%s@%s:%s/%s", PQuser(m->db->conn), PQhost(m->db->conn) ? PQhost(m->db->conn) : "",
		         PQport(m->db->conn) ? PQport(m->db->conn) : "", PQdb(m->db->conn));
		/* "15.18", without a packager's suffix ("15.18 (Debian 15.18-0+deb12u1)") */
		snprintf(m->server_version, sizeof m->server_version, "%.*s", v ? (int)strcspn(v, " ") : 0, v ? v : "");
	}
	m->attempts = 0;
	m->backoff_ms = 0;
	m->refresh_due = now;
	m->locks_due = now;
	begin_setup(m, now);
	return CLEANUP_MON_STATE | kick(m, now);
}

static int service_ready(cleanup_monitor *m, double now)
{
	int bits = 0;

	if (PQflush(m->db->conn) < 0 || !PQconsumeInput(m->db->conn)) {
		lose_connection(m, now, "waiting for the console's results");
		return CLEANUP_MON_STATE;
	}
	bits |= drain_notifies(m, now);
	while (m->nops > 0 && m->op_sent && !PQisBusy(m->db->conn)) {
		PGresult *res = PQgetResult(m->db->conn);

		if (!res) {
			bits |= advance(m, now);
			if (m->state != CLEANUP_MON_READY)
				return bits;
			continue;
		}
		if (!handle_result(m, res)) {
			PQclear(res);
			lose_connection(m, now, NULL);
			return bits | CLEANUP_MON_STATE;
		}
		PQclear(res);
	}
	if (PQstatus(m->db->conn) == CONNECTION_BAD) {
		lose_connection(m, now, "waiting for the console's results");
		return bits | CLEANUP_MON_STATE;
	}
	bits |= drain_notifies(m, now);
	if (m->nops == 0) {
		if (now >= m->refresh_due) {
			begin_refresh(m, now);
			bits |= kick(m, now);
		} else if (m->locks_ms > 0 && now >= m->locks_due) {
			begin_locks(m, now);
			bits |= kick(m, now);
		}
	}
	return bits;
}

int cleanup_monitor_service(cleanup_monitor *m, double now)
{
	int bits = 0;

	if (m->state == CLEANUP_MON_WAITING) {
		if (now < m->next_attempt)
			return 0;
		start_connect(m, now);
		bits |= CLEANUP_MON_STATE;
		if (m->state != CLEANUP_MON_CONNECTING)
			return bits;
	}
	if (m->state == CLEANUP_MON_CONNECTING) {
		bits |= service_connecting(m, now);
		if (m->state != CLEANUP_MON_READY)
			return bits;
	}
	return bits | service_ready(m, now);
}

const cleanup_mon_snapshot *cleanup_monitor_snapshot(const cleanup_monitor *m)
{
	return m->current;
}

void cleanup_monitor_refresh_now(cleanup_monitor *m)
{
	m->refresh_due = 0;
}

void cleanup_monitor_set_interval(cleanup_monitor *m, int refresh_ms)
{
	if (refresh_ms < 100)
		refresh_ms = 100;
	if (refresh_ms > 60000)
		refresh_ms = 60000;
	if (m->refresh_ms != refresh_ms && m->state == CLEANUP_MON_READY)
		m->refresh_due = m->last_refresh_start + refresh_ms / 1000.0;
	m->refresh_ms = refresh_ms;
}

int cleanup_monitor_interval(const cleanup_monitor *m)
{
	return m->refresh_ms;
}

int cleanup_monitor_query_timeout_ms(const cleanup_monitor *m)
{
	return m->query_timeout_ms;
}

void cleanup_monitor_set_detail_job(cleanup_monitor *m, int64_t job_id)
{
	if (job_id != m->detail_job_id) {
		m->detail_job_id = job_id;
		m->steps_upto = -1;
		m->refresh_due = 0;
	}
}

void cleanup_monitor_set_steps_upto(cleanup_monitor *m, int64_t upto)
{
	if (upto < 0)
		upto = -1;
	if (upto != m->steps_upto) {
		m->steps_upto = upto;
		m->refresh_due = 0;
	}
}

cleanup_monitor_state cleanup_monitor_get_state(const cleanup_monitor *m)
{
	return m->state;
}

bool cleanup_monitor_stale(const cleanup_monitor *m, double *since)
{
	if (since)
		*since = m->stale_since;
	return m->stale;
}

const char *cleanup_monitor_last_error(const cleanup_monitor *m)
{
	return m->last_error;
}

const cleanup_error *cleanup_monitor_last_error_record(const cleanup_monitor *m)
{
	return &m->error;
}

int cleanup_monitor_attempts(const cleanup_monitor *m)
{
	return m->state == CLEANUP_MON_READY ? 0 : m->attempts;
}

int cleanup_monitor_backend_pid(const cleanup_monitor *m)
{
	return m->state == CLEANUP_MON_READY ? cleanup_engine_backend_pid(m->db) : 0;
}

cleanup_engine *cleanup_monitor_engine_int(cleanup_monitor *m)
{
	/* READY with no cycle in flight: the setup cycle (LISTEN, SET
	 * default_transaction_read_only, prepare) began with READY and is done */
	return m->state == CLEANUP_MON_READY && m->nops == 0 && m->db && m->db->conn ? m->db : NULL;
}

void cleanup_monitor_server(const cleanup_monitor *m, char *buf, size_t len, char *version, size_t vlen)
{
	snprintf(buf, len, "%s", m->where);
	snprintf(version, vlen, "%s", m->server_version);
}

uint64_t cleanup_monitor_notifications(const cleanup_monitor *m)
{
	return m->notifications;
}

int cleanup_monitor_wait(cleanup_monitor *m, uint64_t after_seq, int timeout_ms, cleanup_error *err)
{
	double now = cleanup_monitor_now(), end = now + timeout_ms / 1000.0;

	cleanup_error_clear(err);
	for (;;) {
		struct pollfd p;
		short ev = 0;
		int fd, t;

		cleanup_monitor_service(m, now);
		if (m->current->seq > after_seq)
			return CLEANUP_OK;
		now = cleanup_monitor_now();
		if (now >= end)
			break;
		fd = cleanup_monitor_fd(m, &ev);
		t = cleanup_monitor_timeout_ms(m, now);
		if (t > (int)((end - now) * 1000) + 1)
			t = (int)((end - now) * 1000) + 1;
		p.fd = fd;
		p.events = ev;
		p.revents = 0;
		if (poll(&p, fd >= 0 ? 1 : 0, t) < 0 && errno != EINTR)
			return cleanup_error_set(err, CLEANUP_ERROR, "poll: %s", strerror(errno));
		now = cleanup_monitor_now();
	}
	return cleanup_error_set(err, m->state == CLEANUP_MON_READY ? CLEANUP_ERROR : CLEANUP_ECONN,
	                         "no new snapshot within %d ms (%s)%s%s", timeout_ms,
	                         m->state == CLEANUP_MON_READY ? "connected"
	                         : m->state == CLEANUP_MON_CONNECTING ? "connecting"
	                                                              : "waiting to reconnect",
	                         m->last_error[0] ? ": " : "", m->last_error);
}
