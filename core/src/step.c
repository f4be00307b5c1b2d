/* Bounded steps of a draining job: thin wrappers over cleanup.job_step()
 * and friends (sql/functions/060_step.sql), and the run loop that steps a
 * job to completion with bounded backoff on busy answers.
 *
 * The step's work is one server call; this file only names the step number
 * (so a retry after a lost answer is a replay, not a second step), turns
 * rows into cleanup_step_result, and decides when to wait and retry. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "failpoint_int.h"
#include "cleanup/runner.h"
#include "cleanup/step.h"
#include "engine_int.h"

void cleanup_step_result_reset(cleanup_step_result *r)
{
	if (!r)
		return;
	free(r->json);
	memset(r, 0, sizeof *r);
}

void cleanup_step_results_free(cleanup_step_result *r, size_t n)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < n; i++)
		cleanup_step_result_reset(&r[i]);
	free(r);
}

/* Fills R from row ROW of RES (columns of cleanup.job_steps plus replayed
 * and json). */
static int step_from_row(cleanup_step_result *r, const PGresult *res, int row, bool preview,
                         cleanup_error *err)
{
	memset(r, 0, sizeof *r);
	r->job_id = col_int64(res, row, "job_id");
	r->step_no = (int32_t)col_int64(res, row, "step_no");
	col_copy(r->action, sizeof r->action, res, row, "action");
	r->pass_no = (int32_t)col_int64(res, row, "pass_no");
	r->library_id = col_int64(res, row, "library_id");
	r->cursor_from = col_int64(res, row, "cursor_from");
	r->cursor_to = col_int64(res, row, "cursor_to");
	r->examined = (int32_t)col_int64(res, row, "examined");
	r->visited = (int32_t)col_int64(res, row, "visited");
	r->deleted = (int32_t)col_int64(res, row, "deleted");
	r->moved = (int32_t)col_int64(res, row, "moved");
	r->absent = (int32_t)col_int64(res, row, "absent");
	r->retained = (int32_t)col_int64(res, row, "retained");
	r->kept = (int32_t)col_int64(res, row, "kept");
	r->libraries_deleted = (int32_t)col_int64(res, row, "libraries_deleted");
	r->servers_deleted = (int32_t)col_int64(res, row, "servers_deleted");
	r->mutations = (int32_t)col_int64(res, row, "mutations");
	r->checked = (int32_t)col_int64(res, row, "checked");
	r->claimed = (int32_t)col_int64(res, row, "claimed");
	r->released = (int32_t)col_int64(res, row, "released");
	r->claims_in_flight = (int32_t)col_int64(res, row, "claims_in_flight");
	r->retries_deleted = (int32_t)col_int64(res, row, "retries_deleted");
	r->previews_deleted = (int32_t)col_int64(res, row, "previews_deleted");
	r->collections_deleted = (int32_t)col_int64(res, row, "collections_deleted");
	r->sync_status_deleted = (int32_t)col_int64(res, row, "sync_status_deleted");
	r->history_detached = (int32_t)col_int64(res, row, "history_detached");
	col_copy(r->check_from, sizeof r->check_from, res, row, "check_from");
	col_copy(r->check_to, sizeof r->check_to, res, row, "check_to");
	col_copy(r->phase_after, sizeof r->phase_after, res, row, "phase_after");
	r->duration_ms = col_number(res, row, "duration_ms", 0);
	r->lock_hold_ms = col_number(res, row, "lock_hold_ms", 0);
	r->parent_lock_ms = col_number(res, row, "parent_lock_ms", -1);
	col_copy(r->started_at, sizeof r->started_at, res, row, "started_at");
	r->replayed = strcmp(col_text(res, row, "replayed"), "t") == 0;
	r->preview = preview;
	r->json = engine_strdup(col_text(res, row, "json"), err);
	return r->json ? CLEANUP_OK : CLEANUP_ENOMEM;
}

/* Runs query Q (one step row expected) into *OUT. */
static int one_step(cleanup_step_result *out, cleanup_engine *e, enum sql_query_id q, int n,
                    const char *const *params, bool preview, const char *context, cleanup_error *err)
{
	PGresult *res = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	rc = engine_query(&res, e, q, n, params, context, err);
	if (rc != CLEANUP_OK)
		return rc;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, PQfnumber(res, "step_no")))
		rc = cleanup_error_set(err, CLEANUP_ERROR, "%s: the server returned no step", context);
	else
		rc = step_from_row(out, res, 0, preview, err);
	PQclear(res);
	if (rc != CLEANUP_OK)
		cleanup_step_result_reset(out);
	return rc;
}

static bool runner_conn_alive(cleanup_engine *e, int64_t job_id);

/* Runs step STEP_NO; LEAN leaves out the server-built JSON (the run loop
 * needs only the counts, and building the document costs every step). */
static int step_at(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, int32_t step_no, int busy_seen,
                   bool lean, cleanup_error *err)
{
	char jbuf[24], sbuf[16], bbuf[16], ctx[80];
	const char *params[3] = {jbuf, sbuf, bbuf};
	int rc;

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(sbuf, sizeof sbuf, "%" PRId32, step_no);
	snprintf(bbuf, sizeof bbuf, "%d", busy_seen > 0 ? busy_seen : 0);
	snprintf(ctx, sizeof ctx, "running step %s of job %s", sbuf, jbuf);
	if (e->runner && e->runner_job == job_id && !runner_conn_alive(e, job_id)) {
		/* Behind a pooler the runner lock is a connection of its own:
		 * checked before every step, so a terminated lock backend stops
		 * the run before it could compete with a new runner. */
		memset(out, 0, sizeof *out);
		cleanup_error_set(err, CLEANUP_EREFUSED,
		                  "lost the runner lock of job %s: the connection holding it ended (terminated, or the "
		                  "pooler or server went away); step %s was not run",
		                  jbuf, sbuf);
		cleanup_error_hint(err, "start the run again: it resumes from the last committed step");
		return CLEANUP_EREFUSED;
	}
	rc = one_step(out, e, lean ? CLEANUP_Q_STEP_RUN_LEAN : CLEANUP_Q_STEP_RUN, 3, params, false, ctx, err);
	if (rc == CLEANUP_OK)
		failpoint("after_commit"); /* committed, the answer not yet acted on */
	return rc;
}

int cleanup_job_step_at(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, int32_t step_no,
                        int busy_seen, cleanup_error *err)
{
	return step_at(out, e, job_id, step_no, busy_seen, false, err);
}

int cleanup_job_step_replay(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, int32_t step_no,
                            cleanup_error *err)
{
	char jbuf[24], sbuf[16], ctx[80];
	const char *params[2] = {jbuf, sbuf};

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(sbuf, sizeof sbuf, "%" PRId32, step_no);
	snprintf(ctx, sizeof ctx, "replaying step %s of job %s", sbuf, jbuf);
	return one_step(out, e, CLEANUP_Q_STEP_REPLAY, 2, params, false, ctx, err);
}

int cleanup_job_step_preview(cleanup_step_result *out, cleanup_engine *e, int64_t job_id,
                             cleanup_error *err)
{
	char jbuf[24], ctx[64];
	const char *params[1] = {jbuf};
	cleanup_error rollback_err;
	int rc;

	memset(out, 0, sizeof *out);
	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(ctx, sizeof ctx, "previewing the next step of job %s", jbuf);
	/* READ ONLY: the server itself guarantees the preview mutates nothing. */
	rc = engine_begin(e, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", ctx, err);
	if (rc != CLEANUP_OK)
		return rc;
	rc = one_step(out, e, CLEANUP_Q_STEP_PREVIEW, 1, params, true, ctx, err);
	if (engine_script(e, "ROLLBACK", ctx, &rollback_err) != CLEANUP_OK && rc == CLEANUP_OK) {
		cleanup_step_result_reset(out);
		if (err)
			*err = rollback_err;
		rc = rollback_err.status;
	}
	return rc;
}

int cleanup_job_note_busy(bool *recorded, cleanup_engine *e, int64_t job_id, const char *message,
                          cleanup_error *err)
{
	char jbuf[24];
	const char *params[2] = {jbuf, message ? message : "busy"};
	PGresult *res = NULL;
	int rc;

	*recorded = false;
	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	rc = engine_query(&res, e, CLEANUP_Q_STEP_NOTE_BUSY, 2, params, "recording a busy answer", err);
	if (rc == CLEANUP_OK)
		*recorded = strcmp(col_text(res, 0, "recorded"), "t") == 0;
	PQclear(res);
	return rc;
}

int cleanup_job_steps_list(cleanup_step_result **out, size_t *n, cleanup_engine *e, int64_t job_id, int limit,
                           cleanup_error *err)
{
	char jbuf[24], lbuf[16];
	const char *params[2] = {jbuf, lbuf};
	cleanup_step_result *steps = NULL;
	PGresult *res = NULL;
	int rc, i, rows;

	*out = NULL;
	*n = 0;
	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(lbuf, sizeof lbuf, "%d", limit);
	rc = engine_query(&res, e, CLEANUP_Q_STEP_LIST, 2, params, "listing recorded steps", err);
	if (rc != CLEANUP_OK)
		return rc;
	rows = PQntuples(res);
	steps = calloc(rows ? (size_t)rows : 1, sizeof *steps);
	if (!steps) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < rows; i++) {
		if ((rc = step_from_row(&steps[i], res, i, false, err)) != CLEANUP_OK) {
			cleanup_step_results_free(steps, (size_t)i);
			steps = NULL;
			goto out;
		}
	}
	*out = steps;
	*n = (size_t)rows;
out:
	PQclear(res);
	return rc;
}

int cleanup_step_set_synchronous_commit(cleanup_engine *e, bool synchronous, cleanup_error *err)
{
	int rc = CLEANUP_OK;

	/* Behind a pooler each step's transaction sets it (engine_query);
	 * on a direct connection it is the session's. */
	if (!e->pooled)
		rc = engine_script(e, synchronous ? "SET cleanup.step_synchronous_commit = on"
		                                  : "SET cleanup.step_synchronous_commit = off",
		                   "setting the step commit mode", err);
	if (rc == CLEANUP_OK)
		e->step_sync = synchronous ? 1 : 0;
	return rc;
}

/* --- the runner lock (cleanup/runner.h) ----------------------------------- */

/* How long a run waits for the runner lock of a job before it refuses: a
 * killed runner's backend may still be finishing its (bounded) step, and a
 * terminated one may not have ended yet, when the next runner starts. */
#define RUNNER_CLAIM_GRACE_S 2.0

/* True while E (behind a pooler) holds the runner lock of JOB_ID: its
 * lock connection is up and still in the transaction that took it. Reads
 * what the server sent meanwhile without waiting: a terminated lock
 * backend (the console's K) shows here before the next step. */
static bool runner_conn_alive(cleanup_engine *e, int64_t job_id)
{
	PGconn *c;
	PGresult *res;

	if (!e->runner || e->runner_job != job_id || !e->runner->conn)
		return false;
	c = e->runner->conn;
	if (!PQconsumeInput(c) || PQstatus(c) != CONNECTION_OK)
		return false;
	while (!PQisBusy(c) && (res = PQgetResult(c)) != NULL)
		PQclear(res);
	return PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) == PQTRANS_INTRANS;
}

/* Ends the runner lock connection of E (ROLLBACK ends the lock with its
 * transaction; closing the connection would too). */
static int runner_conn_end(cleanup_engine *e, cleanup_error *err)
{
	int rc = CLEANUP_OK;

	if (!e->runner)
		return CLEANUP_OK;
	if (cleanup_engine_ok(e->runner) && PQtransactionStatus(e->runner->conn) == PQTRANS_INTRANS)
		rc = engine_script(e->runner, "ROLLBACK", "releasing the runner lock", err);
	cleanup_engine_close(e->runner);
	e->runner = NULL;
	e->runner_job = 0;
	return rc;
}

/* Behind a pooler a session lock would stay on a pooled server
 * connection (and its release could land on another one): the lock is
 * taken transaction-scoped by a connection of its own, which keeps the
 * transaction open until the run ends (runner_claim_xact.sql). */
/* The lock connection's transaction: its timeouts first (the role's own
 * could be 20ms), and no idle-in-transaction timeout (it idles by design). */
static int runner_conn_begin(cleanup_engine *h, cleanup_error *err)
{
	char sql[200];

	snprintf(sql, sizeof sql,
	         "BEGIN; SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d; "
	         "SET LOCAL idle_in_transaction_session_timeout = 0",
	         h->timeout_ms > 0 ? h->timeout_ms : 0, h->lock_timeout_ms > 0 ? h->lock_timeout_ms : 0);
	return engine_script_settings(h, sql, "taking the runner lock", err);
}

static int runner_claim_pooled(bool *claimed, PGresult **out, cleanup_engine *e, int64_t job_id, const char *jbuf,
                               cleanup_error *err)
{
	const char *params[1] = {jbuf};
	cleanup_engine *h = NULL;
	int rc;

	if (runner_conn_alive(e, job_id)) {
		*claimed = true; /* a reconnected run: the lock held on */
		return CLEANUP_OK;
	}
	runner_conn_end(e, NULL);
	if ((rc = engine_new(&h, e->conninfo, e->app_name, err)) != CLEANUP_OK)
		return rc;
	h->app_name_fixed = e->app_name_fixed;
	h->timeout_ms = e->timeout_ms;
	h->lock_timeout_ms = e->lock_timeout_ms;
	if ((rc = cleanup_engine_reconnect(h, err)) != CLEANUP_OK ||
	    (rc = runner_conn_begin(h, err)) != CLEANUP_OK ||
	    (rc = engine_query(out, h, CLEANUP_Q_RUNNER_CLAIM_XACT, 1, params, "taking the runner lock", err)) !=
	        CLEANUP_OK) {
		cleanup_engine_close(h);
		return rc;
	}
	if (PQntuples(*out) == 1 && strcmp(col_text(*out, 0, "claimed"), "t") == 0) {
		e->runner = h;
		e->runner_job = job_id;
	} else {
		cleanup_engine_close(h);
	}
	return CLEANUP_OK;
}

int cleanup_job_runner_claim(bool *claimed, cleanup_runner_holder *holder, cleanup_engine *e, int64_t job_id,
                             cleanup_error *err)
{
	char jbuf[24];
	const char *params[1] = {jbuf};
	PGresult *res = NULL;
	int rc;

	*claimed = false;
	if (holder)
		memset(holder, 0, sizeof *holder);
	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	if (e->pooled) {
		rc = runner_claim_pooled(claimed, &res, e, job_id, jbuf, err);
		if (rc != CLEANUP_OK || *claimed)
			goto out;
	} else {
		rc = engine_query(&res, e, CLEANUP_Q_RUNNER_CLAIM, 1, params, "taking the runner lock", err);
	}
	if (rc != CLEANUP_OK)
		goto out;
	if (PQntuples(res) != 1) {
		rc = cleanup_error_set(err, CLEANUP_ERROR, "taking the runner lock of job %" PRId64 ": no answer", job_id);
		goto out;
	}
	*claimed = strcmp(col_text(res, 0, "claimed"), "t") == 0;
	if (!*claimed && holder) {
		int64_t pid = col_int64(res, 0, "holder_pid");

		holder->pid = pid > 0 ? (int)pid : 0;
		col_copy(holder->app, sizeof holder->app, res, 0, "holder_app");
		col_copy(holder->client, sizeof holder->client, res, 0, "holder_client");
		col_copy(holder->since, sizeof holder->since, res, 0, "holder_since");
	}
out:
	PQclear(res);
	return rc;
}

int cleanup_job_runner_release(cleanup_engine *e, int64_t job_id, cleanup_error *err)
{
	char jbuf[24];
	const char *params[1] = {jbuf};
	PGresult *res = NULL;
	int rc;

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	if (e->runner)
		return runner_conn_end(e, err);
	if (e->pooled)
		return CLEANUP_OK; /* never claimed on this engine */
	rc = engine_query(&res, e, CLEANUP_Q_RUNNER_RELEASE, 1, params, "releasing the runner lock", err);
	if (rc == CLEANUP_OK && strcmp(col_text(res, 0, "released"), "t") != 0)
		rc = cleanup_error_set(err, CLEANUP_ERROR,
		                       "releasing the runner lock of job %s: this session (backend %d) did not hold it", jbuf,
		                       e->server_pid);
	PQclear(res);
	return rc;
}

int cleanup_job_runner_terminate(cleanup_engine *e, int64_t job_id, int pid, cleanup_error *err)
{
	char jbuf[24], pbuf[16];
	const char *params[2] = {jbuf, pbuf};
	PGresult *res = NULL;
	int64_t holder;
	int rc;

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(pbuf, sizeof pbuf, "%d", pid);
	rc = engine_query(&res, e, CLEANUP_Q_RUNNER_TERMINATE, 2, params, "terminating the runner", err);
	if (rc != CLEANUP_OK)
		goto out;
	holder = col_int64(res, 0, "holder_pid");
	if (strcmp(col_text(res, 0, "terminated"), "t") == 0)
		goto out;
	if (holder <= 0)
		rc = cleanup_error_set(err, CLEANUP_ENOTFOUND, "job %" PRId64 " has no runner now (backend %d ended); nothing done",
		                       job_id, pid);
	else if (holder != pid)
		rc = cleanup_error_set(err, CLEANUP_ENOTFOUND,
		                       "job %" PRId64 " is run by backend %" PRId64 " now, not %d as confirmed; nothing done",
		                       job_id, holder, pid);
	else
		rc = cleanup_error_set(err, CLEANUP_EREFUSED, "the server did not terminate backend %d of job %" PRId64
		                       " (pg_terminate_backend needs pg_signal_backend or the same role)", pid, job_id);
out:
	PQclear(res);
	return rc;
}

int cleanup_runner_busy_error(cleanup_error *err, int64_t job_id, const cleanup_runner_holder *h)
{
	char who[200];

	if (h && h->pid > 0)
		snprintf(who, sizeof who, "backend %d (%s%s%s%s%s)", h->pid, h->app[0] ? h->app : "application not visible",
		         h->client[0] ? ", from " : "", h->client, h->since[0] ? ", connected since " : "", h->since);
	else
		snprintf(who, sizeof who, "another session (it ended meanwhile, or is not visible to this role)");
	cleanup_error_set(err, CLEANUP_EBUSY, "job %" PRId64 " is already being run by %s", job_id, who);
	cleanup_error_hint(err, "one runner per job: stop that runner first (Ctrl-C, or t in its console), or wait for it to end");
	return CLEANUP_EBUSY;
}

/* --- the run loop -------------------------------------------------------- */

/* Sets MODE (a CLEANUP_STEP_COMMIT_* value) on E's session; nothing for
 * CLEANUP_STEP_COMMIT_SESSION. Returns the status of the SET. */
static int apply_step_commit(cleanup_engine *e, int mode, cleanup_error *err)
{
	if (mode != CLEANUP_STEP_COMMIT_SYNC && mode != CLEANUP_STEP_COMMIT_ASYNC)
		return CLEANUP_OK;
	return cleanup_step_set_synchronous_commit(e, mode == CLEANUP_STEP_COMMIT_SYNC, err);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps MS milliseconds; a signal that sets INTERRUPT (may be NULL) ends
 * the sleep early. */
static void sleep_ms(double ms, volatile sig_atomic_t *interrupt)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
	while (nanosleep(&ts, &ts) != 0 && !(interrupt && *interrupt))
		;
}

/* Takes the runner lock of ST's job, retrying for RUNNER_CLAIM_GRACE_S;
 * EBUSY naming the holder when it stays taken. */
static int claim_runner(cleanup_engine *e, int64_t job_id, volatile sig_atomic_t *interrupt, cleanup_error *err)
{
	cleanup_runner_holder holder;
	double t0 = now_s(), wait = 10;
	bool claimed = false;
	int rc;

	for (;;) {
		rc = cleanup_job_runner_claim(&claimed, &holder, e, job_id, err);
		if (rc != CLEANUP_OK || claimed)
			return rc;
		if (now_s() - t0 >= RUNNER_CLAIM_GRACE_S || (interrupt && *interrupt))
			return cleanup_runner_busy_error(err, job_id, &holder);
		sleep_ms(wait, interrupt);
		wait = wait * 2 > 250 ? 250 : wait * 2;
	}
}

int cleanup_run_reconcile(cleanup_run_summary *out, cleanup_job *db)
{
	int lost = out->acked_step_no > db->step_no ? (int)(out->acked_step_no - db->step_no) : 0;

	out->lost_steps += lost;
	out->acked_step_no = db->step_no;
	cleanup_job_reset(&out->job);
	out->job = *db;
	memset(db, 0, sizeof *db);
	out->verified = true;
	return lost;
}

/* Adds step S's counts to the local copy of the job, so the run loop needs
 * no extra round trip to report progress. */
static void job_apply_step(cleanup_job *job, const cleanup_step_result *s)
{
	job->step_no = s->step_no;
	snprintf(job->phase, sizeof job->phase, "%s", s->phase_after);
	job->examined += s->examined;
	job->visited += s->visited;
	job->deleted += s->deleted;
	job->moved += s->moved;
	job->absent += s->absent;
	job->retained += s->retained;
	job->kept += s->kept;
	job->libraries_deleted += s->libraries_deleted;
	job->servers_deleted += s->servers_deleted;
	job->claimed += s->claimed;
	job->released += s->released;
	job->retries_deleted += s->retries_deleted;
	job->previews_deleted += s->previews_deleted;
	job->collections_deleted += s->collections_deleted;
	job->sync_status_deleted += s->sync_status_deleted;
	job->history_detached += s->history_detached;
}

/* True when step S visited rows and could resolve none of them: every one
 * is held by a concurrent writer, so stepping again at once is pointless. */
static bool step_stalled(const cleanup_step_result *s)
{
	return s->visited > 0 && s->retained == s->visited && strcmp(s->action, "pass") == 0;
}

/* The state of one cleanup_job_run(). */
typedef struct run_state {
	cleanup_engine *e;
	int64_t job_id;
	const cleanup_run_opts *o;
	cleanup_run_summary *out;
	double t0, backoff;
	int backoff0, backoff_max;
	int32_t next;      /* the step to run next */
	int unrecorded_busy;
	bool done;         /* completed, or stopped by the callback */
	bool stalled;      /* the last step could resolve none of its rows */
	bool prepared;     /* the lean step statement is prepared on this connection */
} run_state;

/* True when the options allow starting another step, with INFLIGHT steps
 * already sent; sets the stop reason when they do not. */
static bool may_start(run_state *st, int inflight)
{
	if (st->o->interrupt && *st->o->interrupt) {
		if (inflight == 0) {
			st->out->stopped = true;
			snprintf(st->out->stop_reason, sizeof st->out->stop_reason, "interrupted");
		}
		return false;
	}
	if (st->o->max_steps > 0 && st->out->steps + inflight >= st->o->max_steps) {
		if (inflight == 0) {
			st->out->stopped = true;
			snprintf(st->out->stop_reason, sizeof st->out->stop_reason, "max-steps");
		}
		return false;
	}
	if (st->o->deadline_s > 0 && now_s() - st->t0 >= st->o->deadline_s) {
		if (inflight == 0) {
			st->out->stopped = true;
			snprintf(st->out->stop_reason, sizeof st->out->stop_reason, "deadline");
		}
		return false;
	}
	return true;
}

/* Bookkeeping after step S committed (or was replayed): counts, the local
 * job, the callback. Returns false when the run should send no more steps. */
static bool took_step(run_state *st, const cleanup_step_result *s)
{
	cleanup_run_progress p;
	bool go_on = true;

	if (s->replayed)
		st->out->replayed++;
	else
		st->unrecorded_busy = 0;
	st->out->steps++;
	if (s->step_no > st->out->acked_step_no)
		st->out->acked_step_no = s->step_no;
	job_apply_step(&st->out->job, s);
	st->next = s->step_no + 1;
	if (strcmp(s->phase_after, "completed") == 0) {
		st->out->completed = true;
		st->done = true;
		snprintf(st->out->stop_reason, sizeof st->out->stop_reason, "completed");
		go_on = false;
	}
	memset(&p, 0, sizeof p);
	p.job = &st->out->job;
	p.step = s;
	p.steps_done = st->out->steps;
	p.busy_retries = st->out->busy_retries;
	p.elapsed_s = now_s() - st->t0;
	if (st->o->callback && !st->o->callback(&p, st->o->callback_arg) && !st->done) {
		st->out->stopped = true;
		st->done = true;
		snprintf(st->out->stop_reason, sizeof st->out->stop_reason, "callback");
		go_on = false;
	}
	st->stalled = !st->done && step_stalled(s);
	return go_on && !st->stalled;
}

/* Sends step STEP_NO (the lean statement, prepared by an earlier
 * synchronous call) and a Sync: in pipeline mode each step is its own
 * implicit transaction, and a failure aborts only that step. */
static int send_step(run_state *st, int32_t step_no, cleanup_error *err)
{
	char jbuf[24], sbuf[16], name[32];
	const char *params[3] = {jbuf, sbuf, "0"};
	PGconn *conn = st->e->conn;

	snprintf(jbuf, sizeof jbuf, "%" PRId64, st->job_id);
	snprintf(sbuf, sizeof sbuf, "%" PRId32, step_no);
	snprintf(name, sizeof name, "cq_%d", (int)CLEANUP_Q_STEP_RUN_LEAN);
	if (!PQsendQueryPrepared(conn, name, 3, params, NULL, NULL, 0) || !PQpipelineSync(conn))
		return engine_error_from_result(err, st->e, NULL, "sending a step");
	return CLEANUP_OK;
}

/* Reads the answer to the oldest step sent: its result, the end of its
 * results, and its Sync. */
static int recv_step(cleanup_step_result *out, run_state *st, cleanup_error *err)
{
	PGconn *conn = st->e->conn;
	PGresult *res;
	int rc = CLEANUP_ECONN, nulls = 0;
	bool got = false;

	memset(out, 0, sizeof *out);
	for (;;) {
		res = PQgetResult(conn);
		if (!res) {
			if (got)
				break; /* end of this step's results */
			if (++nulls > 1 || PQstatus(conn) == CONNECTION_BAD)
				return engine_error_from_result(err, st->e, NULL, "reading a step's answer");
			continue;
		}
		if (!got) {
			got = true;
			if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
				rc = step_from_row(out, res, 0, false, err);
			else if (PQresultStatus(res) == PGRES_TUPLES_OK)
				rc = cleanup_error_set(err, CLEANUP_ERROR, "the server returned no step");
			else
				rc = engine_error_from_result(err, st->e, res, "running a step");
		}
		PQclear(res);
	}
	res = PQgetResult(conn);
	if (!res || PQresultStatus(res) != PGRES_PIPELINE_SYNC) {
		PQclear(res);
		cleanup_step_result_reset(out);
		return engine_error_from_result(err, st->e, NULL, "reading a step's answer");
	}
	PQclear(res);
	if (rc != CLEANUP_OK)
		cleanup_step_result_reset(out);
	else
		failpoint("after_commit"); /* committed, the answer not yet acted on */
	return rc;
}

/* Runs steps two at a time in libpq pipeline mode, so the server never
 * waits for the client between steps. Step N+1 is sent before N's answer
 * is read; if N fails, N+1 fails harmlessly (its number is not next) and
 * is ignored; if N completes the job, N+1 is refused. A step already sent
 * when the options or the callback stop the run still completes. Returns
 * the first failure (with no later step committed), else CLEANUP_OK. */
static int run_pipelined(run_state *st, cleanup_error *err)
{
	PGconn *conn = st->e->conn;
	cleanup_step_result step;
	cleanup_error later;
	int32_t send_no = st->next;
	int inflight = 0, rc = CLEANUP_OK, r;
	bool sending = true, failed = false;

	if (!PQenterPipelineMode(conn))
		return engine_error_from_result(err, st->e, NULL, "entering pipeline mode");
	for (;;) {
		while (sending && inflight < 2 && may_start(st, inflight)) {
			if ((r = send_step(st, send_no, failed ? &later : err)) != CLEANUP_OK) {
				if (!failed)
					rc = r;
				failed = true;
				sending = false;
				break;
			}
			send_no++;
			inflight++;
		}
		if (inflight == 0)
			break;
		r = recv_step(&step, st, failed ? &later : err);
		inflight--;
		if (r == CLEANUP_OK) {
			/* Committed, even after an earlier failure (another runner ran
			 * the failed step meanwhile): count it. */
			if (!took_step(st, &step))
				sending = false;
			rc = CLEANUP_OK;
			failed = false;
			send_no = st->next + inflight;
		} else if (!failed && !st->done) {
			/* (After the completing step the next one is refused: ignored.) */
			rc = r;
			failed = true;
			sending = false;
		}
		cleanup_step_result_reset(&step);
		if (r == CLEANUP_ECONN || PQstatus(conn) == CONNECTION_BAD) {
			rc = CLEANUP_ECONN;
			if (err != &later && r != CLEANUP_ECONN)
				engine_error_from_result(err, st->e, NULL, "running steps");
			return rc;
		}
	}
	PQexitPipelineMode(conn);
	return rc;
}

int cleanup_job_run(cleanup_run_summary *out, cleanup_engine *e, int64_t job_id, const cleanup_run_opts *opts,
                    cleanup_error *err)
{
	static const cleanup_run_opts defaults;
	run_state st;
	int rc, consecutive_busy = 0, consecutive_lost = 0, max_busy;
	cleanup_step_result step;
	cleanup_error local_err;

	if (!err)
		err = &local_err;
	memset(out, 0, sizeof *out);
	memset(&step, 0, sizeof step);
	memset(&st, 0, sizeof st);
	st.e = e;
	st.job_id = job_id;
	st.o = opts ? opts : &defaults;
	st.out = out;
	st.t0 = now_s();
	st.backoff0 = st.o->backoff_initial_ms > 0 ? st.o->backoff_initial_ms : 10;
	st.backoff_max = st.o->backoff_max_ms > 0 ? st.o->backoff_max_ms : 1000;
	st.backoff = st.backoff0;
	max_busy = st.o->max_busy_retries > 0 ? st.o->max_busy_retries : 100;

	rc = cleanup_job_get(&out->job, e, job_id, err);
	if (rc != CLEANUP_OK) {
		snprintf(out->stop_reason, sizeof out->stop_reason, "error");
		return rc;
	}
	if (strcmp(out->job.phase, "completed") == 0) {
		/* Nothing to do; a resumed run after the last step committed lands here. */
		out->completed = true;
		snprintf(out->stop_reason, sizeof out->stop_reason, "completed");
		return CLEANUP_OK;
	}
	st.next = out->job.step_no + 1;
	out->acked_step_no = out->job.step_no;
	out->verified = true;
	/* One runner per job (issue 11, item 10): two would compete for every
	 * step number. */
	if ((rc = claim_runner(e, job_id, st.o->interrupt, err)) != CLEANUP_OK) {
		snprintf(out->stop_reason, sizeof out->stop_reason, rc == CLEANUP_EBUSY ? "busy" : "error");
		return rc;
	}
	if ((rc = apply_step_commit(e, st.o->step_commit, err)) != CLEANUP_OK) {
		snprintf(out->stop_reason, sizeof out->stop_reason, "error");
		goto release;
	}

	while (!st.done) {
		if (!may_start(&st, 0))
			break;
		/* Behind a pooler no pipelining: a pooler may hand the second
		 * transaction of a pipeline to another server connection. */
		if (!st.o->no_pipeline && !e->pooled && st.prepared && st.unrecorded_busy == 0) {
			rc = run_pipelined(&st, err);
		} else {
			/* One step at a time: the first on a connection (it prepares
			 * the statement), and one that carries unrecorded busy answers. */
			cleanup_step_result_reset(&step);
			rc = step_at(&step, e, job_id, st.next, st.unrecorded_busy, true, err);
			if (rc == CLEANUP_OK) {
				st.prepared = true;
				took_step(&st, &step);
			}
		}

		if (rc == CLEANUP_EBUSY) {
			bool recorded = false;
			cleanup_error note_err;
			cleanup_run_progress p;
			double wait = st.backoff;

			out->busy_retries++;
			consecutive_busy++;
			if (cleanup_job_note_busy(&recorded, e, job_id, err->message, &note_err) != CLEANUP_OK || !recorded)
				st.unrecorded_busy++;
			memset(&p, 0, sizeof p);
			p.job = &out->job;
			p.busy = err;
			p.steps_done = out->steps;
			p.busy_retries = out->busy_retries;
			p.elapsed_s = now_s() - st.t0;
			if (st.o->callback && !st.o->callback(&p, st.o->callback_arg)) {
				out->stopped = true;
				snprintf(out->stop_reason, sizeof out->stop_reason, "callback");
				rc = CLEANUP_OK;
				break;
			}
			if (consecutive_busy >= max_busy) {
				snprintf(out->stop_reason, sizeof out->stop_reason, "busy");
				cleanup_error_hint(err, "%d busy answers in a row; the job is unchanged since step %d, retry later",
				                   consecutive_busy, st.next - 1);
				break;
			}
			if (st.o->deadline_s > 0 && wait > (st.o->deadline_s - (now_s() - st.t0)) * 1000)
				wait = (st.o->deadline_s - (now_s() - st.t0)) * 1000;
			sleep_ms(wait, st.o->interrupt);
			st.backoff = st.backoff * 2 > st.backoff_max ? st.backoff_max : st.backoff * 2;
			continue;
		}
		if (rc == CLEANUP_ECONN && consecutive_lost < st.o->max_reconnects) {
			cleanup_error rerr;
			cleanup_job now;

			consecutive_lost++;
			st.prepared = false;
			if (cleanup_engine_reconnect(e, &rerr) != CLEANUP_OK) {
				sleep_ms(st.backoff, st.o->interrupt);
				st.backoff = st.backoff * 2 > st.backoff_max ? st.backoff_max : st.backoff * 2;
				continue;
			}
			out->reconnects++;
			/* A new session holds no lock: claim the job again, or stop if
			 * another runner took it over during the gap. */
			if ((rc = claim_runner(e, job_id, st.o->interrupt, &rerr)) != CLEANUP_OK) {
				if (rc == CLEANUP_EBUSY || cleanup_engine_ok(e)) {
					*err = rerr;
					snprintf(out->stop_reason, sizeof out->stop_reason, rc == CLEANUP_EBUSY ? "busy" : "error");
					break;
				}
				continue;
			}
			/* A new session: the run's step commit mode again, or steps
			 * that were meant to commit asynchronously (or synchronously)
			 * would silently change mode. Failing on a session that is
			 * still up ends the run; on one lost again, the next step
			 * finds out and reconnects. */
			if ((rc = apply_step_commit(e, st.o->step_commit, &rerr)) != CLEANUP_OK) {
				if (cleanup_engine_ok(e)) {
					*err = rerr;
					snprintf(out->stop_reason, sizeof out->stop_reason, "error");
					break;
				}
				continue;
			}
			/* The lost step either committed or rolled back; the durable
			 * step number says which (with asynchronous commit a server
			 * crash may even have lost earlier acknowledged steps: they are
			 * counted as lost and run again). */
			if (cleanup_job_get(&now, e, job_id, &rerr) == CLEANUP_OK) {
				st.next = now.step_no + 1;
				cleanup_run_reconcile(out, &now);
			}
			continue;
		}
		if (rc != CLEANUP_OK) {
			snprintf(out->stop_reason, sizeof out->stop_reason, "error");
			break;
		}
		consecutive_busy = 0;
		consecutive_lost = 0;
		if (st.stalled) {
			/* Every visited row is held by a writer: give it time. */
			sleep_ms(st.backoff, st.o->interrupt);
			st.backoff = st.backoff * 2 > st.backoff_max ? st.backoff_max : st.backoff * 2;
			st.stalled = false;
		} else {
			st.backoff = st.backoff0;
		}
	}
	cleanup_step_result_reset(&step);
	out->elapsed_s = now_s() - st.t0;

	/* The job as the database has it now, never the acknowledged view:
	 * with asynchronous commit a server crash may have undone acknowledged
	 * steps, and the summary must say so. A lost connection is re-opened
	 * once, only to read the row. */
	out->verified = false;
	{
		cleanup_job fresh;
		cleanup_error ferr;

		if ((cleanup_engine_ok(e) || cleanup_engine_reconnect(e, &ferr) == CLEANUP_OK) &&
		    cleanup_job_get(&fresh, e, job_id, &ferr) == CLEANUP_OK)
			cleanup_run_reconcile(out, &fresh);
	}
release:
	/* The runner lock goes with the run (a reconnected session that could
	 * not claim it holds none: the release is then a no-op). */
	if (cleanup_engine_ok(e)) {
		cleanup_error rel_err;

		cleanup_job_runner_release(e, job_id, &rel_err);
	}
	return rc;
}
