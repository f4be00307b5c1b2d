/* The job driver (cleanup/runner.h): the runner lease, one step, and the
 * run loop, with its one backoff rule, one commit-mode rule and one
 * reconnect rule. The front ends (`job step`, `job run`, `worker`, the
 * console's actions) open a runner, step or run it, and close it.
 *
 * The lease is a row (cleanup.job_runners, sql/functions/062_runner.sql):
 * it is renewed in every step's transaction (step_run_lean.sql's fourth
 * parameter) and by a heartbeat while the runner waits, so nothing of it
 * lives in a session: it behaves the same through a transaction-pooling
 * pooler, and a runner that reconnects (failover) keeps it by its token. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/clock.h"
#include "cleanup/runner.h"
#include "cleanup/step.h"
#include "engine_int.h"
#include "failpoint_int.h"
#include "step_int.h"

#define RUNNER_TTL_S 60
#define RUNNER_CLAIM_GRACE_S 2.0

struct cleanup_runner {
	cleanup_engine *e;
	int64_t job_id;
	int64_t token;          /* 0: no lease (the job was finished at open) */
	cleanup_runner_opts o;
	cleanup_job job;
	bool took_over;
	bool announced;         /* "runner started" recorded (after the first committed step) */
	cleanup_runner_holder lost;
	double renewed_at;      /* monotonic time of the last renewal */
};

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

static const char *this_host(void)
{
	static char host[64];

	if (!host[0] && (gethostname(host, sizeof host) != 0 || !host[0]))
		snprintf(host, sizeof host, "unknown");
	host[sizeof host - 1] = '\0';
	return host;
}

static int64_t new_token(void)
{
	uint64_t t = 0;

	if (getrandom(&t, sizeof t, 0) != (ssize_t)sizeof t) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		t = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
	}
	t &= INT64_MAX;
	return t ? (int64_t)t : 1;
}

/* --- the lease ------------------------------------------------------------ */

/* The tokens of the runners open in this process (a worker has several):
 * a lease of this host and process whose token is not among them was
 * left behind by a runner of ours that could not end it (its connection
 * was gone) and may be taken over at once. Lock-free: a slot is claimed
 * and freed with compare-and-swap. */
#define OPEN_TOKENS 256
static int64_t open_tokens[OPEN_TOKENS];

static void token_register(int64_t t)
{
	for (int i = 0; i < OPEN_TOKENS; i++)
		if (__sync_bool_compare_and_swap(&open_tokens[i], 0, t))
			return;
}

static void token_forget(int64_t t)
{
	for (int i = 0; t && i < OPEN_TOKENS; i++)
		if (__sync_bool_compare_and_swap(&open_tokens[i], t, 0))
			return;
}

static bool token_open_here(int64_t t)
{
	for (int i = 0; i < OPEN_TOKENS; i++)
		if (__atomic_load_n(&open_tokens[i], __ATOMIC_SEQ_CST) == t)
			return true;
	return false;
}

static void holder_from_row(cleanup_runner_holder *h, const PGresult *res)
{
	int64_t v;

	memset(h, 0, sizeof *h);
	v = col_int64(res, 0, "holder_backend_pid");
	h->pid = v > 0 ? (int)v : 0;
	col_copy(h->host, sizeof h->host, res, 0, "holder_host");
	v = col_int64(res, 0, "holder_os_pid");
	h->os_pid = v > 0 ? (int)v : 0;
	col_copy(h->app, sizeof h->app, res, 0, "holder_app");
	col_copy(h->client, sizeof h->client, res, 0, "holder_client");
	col_copy(h->since, sizeof h->since, res, 0, "holder_started");
	col_copy(h->renewed, sizeof h->renewed, res, 0, "holder_renewed");
	v = col_int64(res, 0, "holder_last_step");
	h->last_step = v >= 0 ? (int)v : -1;
	h->expires_s = col_number(res, 0, "holder_expires_s", 0);
	h->direct = strcmp(col_text(res, 0, "holder_direct"), "t") == 0;
}

/* True when HOLDER (its lease's token TOKEN) runs on this host and is
 * gone: its process no longer exists, or it is this process and no runner
 * of ours holds that token any more. */
static bool holder_gone_here(const cleanup_runner_holder *h, int64_t token)
{
	if (h->os_pid <= 0 || strcmp(h->host, this_host()) != 0)
		return false;
	if (h->os_pid == (int)getpid())
		return token && !token_open_here(token);
	return kill((pid_t)h->os_pid, 0) != 0 && errno == ESRCH;
}

/* One call of cleanup.runner_open. *CLAIMED, *TOKEN_HELD (the holder's
 * token when not claimed), HOLDER filled. */
static int lease_open(cleanup_runner *r, int64_t take_over, bool resume, bool *claimed, int64_t *token_held,
                      cleanup_runner_holder *holder, cleanup_error *err)
{
	char jbuf[24], tbuf[24], pbuf[16], ttl[16], obuf[24];
	const char *params[9] = {jbuf, tbuf, this_host(), pbuf, r->e->app_name ? r->e->app_name : "cleanupctl",
	                         r->e->pooled ? "false" : "true", ttl, take_over ? obuf : NULL, resume ? "true" : "false"};
	PGresult *res = NULL;
	int rc;

	snprintf(jbuf, sizeof jbuf, "%" PRId64, r->job_id);
	snprintf(tbuf, sizeof tbuf, "%" PRId64, r->token);
	snprintf(pbuf, sizeof pbuf, "%d", (int)getpid());
	snprintf(ttl, sizeof ttl, "%d", r->o.ttl_s);
	snprintf(obuf, sizeof obuf, "%" PRId64, take_over);
	*claimed = false;
	*token_held = 0;
	rc = engine_query(&res, r->e, CLEANUP_Q_RUNNER_OPEN, 9, params, "taking the runner lease", err);
	if (rc != CLEANUP_OK)
		goto out;
	if (PQntuples(res) != 1) {
		rc = cleanup_error_set(err, CLEANUP_ERROR, "taking the runner lease of job %s: no answer", jbuf);
		goto out;
	}
	*claimed = strcmp(col_text(res, 0, "claimed"), "t") == 0;
	holder_from_row(holder, res);
	if (*claimed) {
		r->renewed_at = cleanup_clock_mono();
		if (strcmp(col_text(res, 0, "taken_over"), "t") == 0) {
			r->took_over = true;
			r->lost = *holder;
		}
	} else {
		*token_held = col_int64(res, 0, "holder_token");
	}
out:
	PQclear(res);
	return rc;
}

/* Takes R's lease: a held one is tried again for the claim grace (a killed
 * runner's backend may still be ending), and taken over at once when its
 * holder's process is proven gone on this host. */
static int lease_take(cleanup_runner *r, cleanup_runner_holder *holder, cleanup_error *err)
{
	cleanup_runner_holder h;
	double t0 = cleanup_clock_mono(), wait = 10;
	double grace = r->o.claim_grace_s < 0 ? 0 : r->o.claim_grace_s > 0 ? r->o.claim_grace_s : RUNNER_CLAIM_GRACE_S;
	int64_t held = 0, take_over = 0;
	bool claimed = false;
	int rc;

	for (;;) {
		rc = lease_open(r, take_over, false, &claimed, &held, &h, err);
		if (rc != CLEANUP_OK || claimed)
			return rc;
		if (holder)
			*holder = h;
		if (take_over != held && holder_gone_here(&h, held)) {
			take_over = held; /* its process is gone: no need to wait */
			continue;
		}
		if (cleanup_clock_mono() - t0 >= grace || (r->o.interrupt && *r->o.interrupt))
			return cleanup_runner_busy_error(err, r->job_id, &h);
		sleep_ms(wait, r->o.interrupt);
		wait = wait * 2 > 250 ? 250 : wait * 2;
	}
}

int cleanup_runner_renew(cleanup_runner *r, cleanup_error *err)
{
	char jbuf[24], tbuf[24];
	const char *params[2] = {jbuf, tbuf};
	int rc;

	if (!r->token)
		return CLEANUP_OK;
	snprintf(jbuf, sizeof jbuf, "%" PRId64, r->job_id);
	snprintf(tbuf, sizeof tbuf, "%" PRId64, r->token);
	rc = engine_command(r->e, CLEANUP_Q_RUNNER_RENEW, 2, params, "renewing the runner lease", err);
	if (rc == CLEANUP_OK)
		r->renewed_at = cleanup_clock_mono();
	return rc;
}

/* The heartbeat: renews the lease when a third of its life has passed
 * since the last renewal. A connection lost is the caller's to find. */
static int renew_if_due(cleanup_runner *r, cleanup_error *err)
{
	if (!r->token || cleanup_clock_mono() - r->renewed_at < r->o.ttl_s / 3.0)
		return CLEANUP_OK;
	return cleanup_runner_renew(r, err);
}

/* A run's first committed step: "runner started" in the job's events
 * (cleanup.runner_announce), once, when the runner was opened to announce
 * itself. Not before: a run refused at its first step writes nothing. A
 * failure is not the run's: it is tried again after the next step. */
static void announce_if_due(cleanup_runner *r)
{
	char jbuf[24], tbuf[24];
	const char *params[2] = {jbuf, tbuf};
	cleanup_error ignored;
	PGresult *res = NULL;

	if (!r->o.announce || r->announced || !r->token)
		return;
	snprintf(jbuf, sizeof jbuf, "%" PRId64, r->job_id);
	snprintf(tbuf, sizeof tbuf, "%" PRId64, r->token);
	if (engine_query(&res, r->e, CLEANUP_Q_RUNNER_ANNOUNCE, 2, params, "announcing the runner", &ignored) ==
	    CLEANUP_OK)
		r->announced = true;
	PQclear(res);
}

/* Sets R's step commit mode (CLEANUP_STEP_COMMIT_*; SESSION: nothing). */
static int apply_step_commit(cleanup_engine *e, int mode, cleanup_error *err)
{
	if (mode != CLEANUP_STEP_COMMIT_SYNC && mode != CLEANUP_STEP_COMMIT_ASYNC)
		return CLEANUP_OK;
	return cleanup_step_set_synchronous_commit(e, mode == CLEANUP_STEP_COMMIT_SYNC, err);
}

int cleanup_runner_open(cleanup_runner **out, cleanup_engine *e, int64_t job_id, const cleanup_runner_opts *opts,
                        cleanup_runner_holder *holder, cleanup_error *err)
{
	cleanup_runner *r;
	int rc;

	*out = NULL;
	if (holder)
		memset(holder, 0, sizeof *holder);
	r = calloc(1, sizeof *r);
	if (!r)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	r->e = e;
	r->job_id = job_id;
	if (opts)
		r->o = *opts;
	if (r->o.ttl_s <= 0)
		r->o.ttl_s = RUNNER_TTL_S;
	if ((rc = cleanup_job_get(&r->job, e, job_id, err)) != CLEANUP_OK)
		goto fail;
	/* Only a job with steps to run gets a lease: any other (collecting,
	 * paused, finished) is refused by its first step as the server says. */
	if (strcmp(r->job.phase, "draining") == 0 || strcmp(r->job.phase, "finalizing") == 0) {
		r->token = new_token();
		token_register(r->token);
		if ((rc = lease_take(r, holder, err)) != CLEANUP_OK) {
			token_forget(r->token);
			r->token = 0; /* nothing of ours to end */
			goto fail;
		}
	}
	if ((rc = apply_step_commit(e, r->o.step_commit, err)) != CLEANUP_OK)
		goto fail;
	*out = r;
	return CLEANUP_OK;
fail:
	cleanup_runner_close(r, NULL, NULL);
	return rc;
}

const cleanup_job *cleanup_runner_job(const cleanup_runner *r)
{
	return &r->job;
}

bool cleanup_runner_took_over(const cleanup_runner *r, cleanup_runner_holder *holder)
{
	if (r->took_over && holder)
		*holder = r->lost;
	return r->took_over;
}

int cleanup_runner_close(cleanup_runner *r, const char *reason, cleanup_error *err)
{
	char jbuf[24], tbuf[24];
	const char *params[4] = {jbuf, tbuf, NULL, reason ? reason : "done"};
	cleanup_error local;
	int rc = CLEANUP_OK;

	if (!r)
		return CLEANUP_OK;
	if (!err)
		err = &local;
	if (r->token) {
		snprintf(jbuf, sizeof jbuf, "%" PRId64, r->job_id);
		snprintf(tbuf, sizeof tbuf, "%" PRId64, r->token);
		params[2] = r->announced ? "true" : "false";
		/* A lost connection is opened again once, only to end the lease:
		 * otherwise the next runner waits for its expiry. */
		if (!cleanup_engine_ok(r->e))
			cleanup_engine_reconnect(r->e, err);
		if (cleanup_engine_ok(r->e))
			rc = engine_command(r->e, CLEANUP_Q_RUNNER_CLOSE, 4, params, "ending the runner lease", err);
		token_forget(r->token);
	}
	cleanup_job_reset(&r->job);
	free(r);
	return rc;
}

int cleanup_job_runner_terminate(cleanup_engine *e, int64_t job_id, int pid, cleanup_error *err)
{
	char jbuf[24], pbuf[16], by[128];
	const char *params[3] = {jbuf, pbuf, by};
	PGresult *res = NULL;
	const char *reason;
	int64_t holder;
	int rc;

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(pbuf, sizeof pbuf, "%d", pid);
	snprintf(by, sizeof by, "%s:%d (%s)", this_host(), (int)getpid(), e->app_name ? e->app_name : "cleanupctl");
	rc = engine_query(&res, e, CLEANUP_Q_RUNNER_TERMINATE, 3, params, "stopping the runner", err);
	if (rc != CLEANUP_OK)
		goto out;
	reason = col_text(res, 0, "reason");
	holder = col_int64(res, 0, "holder_pid");
	if (strcmp(reason, "stopped") == 0) {
		if (strcmp(col_text(res, 0, "terminated"), "t") != 0)
			rc = cleanup_error_set(err, CLEANUP_EREFUSED,
			                       "the runner lease of job %s was ended, but the server did not terminate backend %d "
			                       "(pg_terminate_backend needs pg_signal_backend or the same role): the runner stops "
			                       "after its step in flight",
			                       jbuf, pid);
	} else if (strcmp(reason, "pooled") == 0) {
		rc = cleanup_error_set(err, CLEANUP_EREFUSED,
		                       "job %s is run by %s through a connection pooler: its server connection is shared "
		                       "with other clients and is not terminated; nothing done",
		                       jbuf, col_text(res, 0, "holder"));
		cleanup_error_hint(err, "stop that process on its host (Ctrl-C, or kill its OS pid)");
	} else if (strcmp(reason, "other") == 0) {
		rc = cleanup_error_set(err, CLEANUP_ENOTFOUND,
		                       "job %s is run by backend %" PRId64 " of %s now, not %d as confirmed; nothing done", jbuf,
		                       holder, col_text(res, 0, "holder"), pid);
	} else {
		rc = cleanup_error_set(err, CLEANUP_ENOTFOUND, "job %s has no runner now (backend %d ended); nothing done",
		                       jbuf, pid);
	}
out:
	PQclear(res);
	return rc;
}

int cleanup_runner_busy_error(cleanup_error *err, int64_t job_id, const cleanup_runner_holder *h)
{
	char who[320], step[48] = "";

	if (h && h->last_step >= 0)
		snprintf(step, sizeof step, ", last step %d", h->last_step);
	if (h && h->host[0] && h->direct && h->pid > 0)
		snprintf(who, sizeof who, "backend %d (%s, %s:%d%s%s, since %s%s)", h->pid, h->app[0] ? h->app : "?",
		         h->host, h->os_pid, h->client[0] ? ", from " : "", h->client, h->since, step);
	else if (h && h->host[0])
		snprintf(who, sizeof who, "%s:%d (%s, through a pooler, since %s%s; its lease expires in %.0f s)", h->host,
		         h->os_pid, h->app[0] ? h->app : "?", h->since, step, h->expires_s);
	else
		snprintf(who, sizeof who, "another runner (it ended meanwhile, or is not visible to this role)");
	cleanup_error_set(err, CLEANUP_EBUSY, "job %" PRId64 " is already being run by %s", job_id, who);
	cleanup_error_hint(err, "one runner per job: stop that runner first (Ctrl-C, or K in a console), or wait for it to end");
	return CLEANUP_EBUSY;
}

/* --- one step ------------------------------------------------------------- */

/* Adds step S's counts to the local copy of the job. */
static void job_apply_step(cleanup_job *job, const cleanup_step_result *s);

int cleanup_runner_step(cleanup_runner *r, cleanup_step_result *out, cleanup_error *err)
{
	int rc;

	memset(out, 0, sizeof *out);
	if ((rc = renew_if_due(r, err)) != CLEANUP_OK)
		return rc;
	rc = step_run_at(out, r->e, r->job_id, r->job.step_no + 1, 0, false, r->token, err);
	if (rc == CLEANUP_OK) {
		r->renewed_at = cleanup_clock_mono();
		job_apply_step(&r->job, out);
		if (!out->replayed)
			announce_if_due(r);
	}
	return rc;
}

/* --- the run loop --------------------------------------------------------- */

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
	cleanup_runner *r;
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
	int step_commit;   /* CLEANUP_STEP_COMMIT_*: set again after a reconnect */
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
	if (st->o->deadline_s > 0 && cleanup_clock_mono() - st->t0 >= st->o->deadline_s) {
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
	p.elapsed_s = cleanup_clock_mono() - st->t0;
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
	char jbuf[24], sbuf[16], lbuf[24], name[32];
	const char *params[4] = {jbuf, sbuf, "0", lbuf};
	PGconn *conn = st->e->conn;

	snprintf(jbuf, sizeof jbuf, "%" PRId64, st->job_id);
	snprintf(sbuf, sizeof sbuf, "%" PRId32, step_no);
	snprintf(lbuf, sizeof lbuf, "%" PRId64, st->r->token);
	engine_statement_name(name, sizeof name, CLEANUP_Q_STEP_RUN_LEAN);
	if (!PQsendQueryPrepared(conn, name, 4, params, NULL, NULL, 0) || !PQpipelineSync(conn))
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

/* The one backoff rule: waits WAIT_MS (the lease renewed first when due:
 * a long wait must not let it expire), then doubles the next wait up to
 * the cap. */
static void backoff(run_state *st, double wait_ms)
{
	cleanup_error ignored;

	if (cleanup_engine_ok(st->e))
		renew_if_due(st->r, &ignored);
	sleep_ms(wait_ms, st->o->interrupt);
	st->backoff = st->backoff * 2 > st->backoff_max ? st->backoff_max : st->backoff * 2;
}

/* True when RC, on E, means the connection is gone (or landed on a
 * standby after a failover): a run with reconnects left opens it again. */
static bool connection_lost(int rc, const cleanup_engine *e, const cleanup_error *err)
{
	/* An error the server did not send (no SQLSTATE) on a step counts
	 * too: libpq reports a server that went away mid-statement that way
	 * before its connection status says so. A reconnect is harmless. */
	return rc == CLEANUP_ECONN || rc == CLEANUP_EREADONLY ||
	       (rc != CLEANUP_OK && (!cleanup_engine_ok(e) || (rc == CLEANUP_ERROR && !err->sqlstate[0])));
}

/* After a lost connection: a new session, the lease again (by its token:
 * a runner that reconnects keeps it, unless another runner took the job
 * over meanwhile: EBUSY), the step commit mode again (a new session has
 * none of the old one's settings), and the job's step as the database has
 * it (with asynchronous commit a server crash may have lost acknowledged
 * steps: counted as lost, run again). */
static int reconnect(run_state *st, cleanup_error *err)
{
	cleanup_runner_holder h;
	cleanup_runner *r = st->r;
	cleanup_job now;
	int64_t held = 0;
	bool claimed = false;
	int rc;

	st->prepared = false;
	if ((rc = cleanup_engine_reconnect(st->e, err)) != CLEANUP_OK)
		return rc;
	st->out->reconnects++;
	if (r->token) {
		if ((rc = lease_open(r, 0, true, &claimed, &held, &h, err)) != CLEANUP_OK)
			return rc;
		if (!claimed) {
			cleanup_runner_busy_error(err, st->job_id, &h);
			cleanup_error_hint(err, "another runner took job %" PRId64 " over while this one was disconnected",
			                   st->job_id);
			return CLEANUP_EBUSY;
		}
	}
	if ((rc = apply_step_commit(st->e, st->step_commit, err)) != CLEANUP_OK)
		return rc;
	if ((rc = cleanup_job_get(&now, st->e, st->job_id, err)) != CLEANUP_OK)
		return rc;
	st->next = now.step_no + 1;
	cleanup_run_reconcile(st->out, &now);
	return CLEANUP_OK;
}

int cleanup_runner_run(cleanup_runner *r, cleanup_run_summary *out, const cleanup_run_opts *opts,
                       cleanup_error *err)
{
	static const cleanup_run_opts defaults;
	cleanup_engine *e = r->e;
	run_state st;
	int rc = CLEANUP_OK, consecutive_busy = 0, consecutive_lost = 0, max_busy;
	cleanup_step_result step;
	cleanup_error local_err;

	if (!err)
		err = &local_err;
	memset(out, 0, sizeof *out);
	memset(&step, 0, sizeof step);
	memset(&st, 0, sizeof st);
	st.r = r;
	st.e = e;
	st.job_id = r->job_id;
	st.o = opts ? opts : &defaults;
	st.out = out;
	st.t0 = cleanup_clock_mono();
	st.step_commit = st.o->step_commit ? st.o->step_commit : r->o.step_commit;
	st.backoff0 = st.o->backoff_initial_ms > 0 ? st.o->backoff_initial_ms : 10;
	st.backoff_max = st.o->backoff_max_ms > 0 ? st.o->backoff_max_ms : 1000;
	st.backoff = st.backoff0;
	max_busy = st.o->max_busy_retries > 0 ? st.o->max_busy_retries : 100;

	out->job = r->job;
	out->job.json = r->job.json ? strdup(r->job.json) : NULL;
	if (strcmp(out->job.phase, "completed") == 0) {
		/* Nothing to do; a resumed run after the last step committed lands here. */
		out->completed = true;
		snprintf(out->stop_reason, sizeof out->stop_reason, "completed");
		return CLEANUP_OK;
	}
	st.next = out->job.step_no + 1;
	out->acked_step_no = out->job.step_no;
	out->verified = true;
	if (st.o->step_commit && st.o->step_commit != r->o.step_commit &&
	    (rc = apply_step_commit(e, st.step_commit, err)) != CLEANUP_OK) {
		snprintf(out->stop_reason, sizeof out->stop_reason, "error");
		return rc;
	}

	while (!st.done) {
		if (!may_start(&st, 0))
			break;
		if ((rc = renew_if_due(r, err)) == CLEANUP_OK) {
			/* Behind a pooler no pipelining: a pooler may hand the second
			 * transaction of a pipeline to another server connection. */
			if (!st.o->no_pipeline && !e->pooled && st.prepared && st.unrecorded_busy == 0) {
				rc = run_pipelined(&st, err);
			} else {
				/* One step at a time: the first on a connection (it prepares
				 * the statement), and one that carries unrecorded busy answers. */
				cleanup_step_result_reset(&step);
				rc = step_run_at(&step, e, st.job_id, st.next, st.unrecorded_busy, true, r->token, err);
				if (rc == CLEANUP_OK) {
					st.prepared = true;
					took_step(&st, &step);
				}
			}
			if (rc == CLEANUP_OK) {
				r->renewed_at = cleanup_clock_mono();
				if (out->steps > out->replayed)
					announce_if_due(r);
			}
		}

		if (rc == CLEANUP_EBUSY) {
			bool recorded = false;
			cleanup_error note_err;
			cleanup_run_progress p;
			double wait = st.backoff;

			out->busy_retries++;
			consecutive_busy++;
			if (cleanup_job_note_busy(&recorded, e, st.job_id, err->message, &note_err) != CLEANUP_OK || !recorded)
				st.unrecorded_busy++;
			memset(&p, 0, sizeof p);
			p.job = &out->job;
			p.busy = err;
			p.steps_done = out->steps;
			p.busy_retries = out->busy_retries;
			p.elapsed_s = cleanup_clock_mono() - st.t0;
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
			if (st.o->deadline_s > 0 && wait > (st.o->deadline_s - (cleanup_clock_mono() - st.t0)) * 1000)
				wait = (st.o->deadline_s - (cleanup_clock_mono() - st.t0)) * 1000;
			backoff(&st, wait);
			continue;
		}
		if (connection_lost(rc, e, err) && consecutive_lost < st.o->max_reconnects) {
			cleanup_error rerr;

			consecutive_lost++;
			if ((rc = reconnect(&st, &rerr)) != CLEANUP_OK) {
				/* Taken over, or refused on a session that is up: the run
				 * ends; a connection still down is tried again. */
				if (rc == CLEANUP_EBUSY || (cleanup_engine_ok(e) && rc != CLEANUP_EREADONLY)) {
					*err = rerr;
					snprintf(out->stop_reason, sizeof out->stop_reason, rc == CLEANUP_EBUSY ? "busy" : "error");
					break;
				}
				*err = rerr;
				backoff(&st, st.backoff);
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
			backoff(&st, st.backoff);
			st.stalled = false;
		} else {
			st.backoff = st.backoff0;
		}
	}
	cleanup_step_result_reset(&step);
	out->elapsed_s = cleanup_clock_mono() - st.t0;

	/* The job as the database has it now, never the acknowledged view:
	 * with asynchronous commit a server crash may have undone acknowledged
	 * steps, and the summary must say so. A lost connection is re-opened
	 * once, only to read the row. */
	out->verified = false;
	{
		cleanup_job fresh;
		cleanup_error ferr;

		if ((cleanup_engine_ok(e) || cleanup_engine_reconnect(e, &ferr) == CLEANUP_OK) &&
		    cleanup_job_get(&fresh, e, st.job_id, &ferr) == CLEANUP_OK)
			cleanup_run_reconcile(out, &fresh);
	}
	/* The runner goes on from here (a step after the run, the next run). */
	{
		char *json = r->job.json;

		r->job = out->job;
		r->job.json = json;
	}
	return rc;
}

int cleanup_job_run(cleanup_run_summary *out, cleanup_engine *e, int64_t job_id, const cleanup_run_opts *opts,
                    cleanup_error *err)
{
	cleanup_runner_opts ro = {
		.announce = true,
		.step_commit = opts ? opts->step_commit : 0,
		.interrupt = opts ? opts->interrupt : NULL,
	};
	cleanup_runner *r = NULL;
	cleanup_error local_err;
	int rc;

	if (!err)
		err = &local_err;
	memset(out, 0, sizeof *out);
	if ((rc = cleanup_runner_open(&r, e, job_id, &ro, NULL, err)) != CLEANUP_OK) {
		snprintf(out->stop_reason, sizeof out->stop_reason, rc == CLEANUP_EBUSY ? "busy" : "error");
		return rc;
	}
	rc = cleanup_runner_run(r, out, opts, err);
	cleanup_runner_close(r, out->stop_reason, NULL);
	return rc;
}
