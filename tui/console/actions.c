/* The console's action worker (actions.h): one thread, one action at a
 * time, each on its own engine connection; results go back through a
 * small queue and a byte on the console's wake-up pipe. */
#include "actions.h"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cleanup/audit.h"
#include "cleanup/engine.h"
#include "cleanup/job.h"
#include "cleanup/locks.h"
#include "cleanup/step.h"
#include "ops.h"
#include "progress.h"

#define RESULT_QUEUE 64

struct tui_actions {
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *conninfo;
	int wake_fd;
	bool have_request;
	bool busy;
	bool quit;
	tui_request req;
	atomic_bool stop_run;
	atomic_int max_rate_milli;   /* steps per 1000 s; 0: no throttle */
	atomic_int wait_ms;          /* :wait: busy answers retried this long; 0: none */
	tui_result results[RESULT_QUEUE];
	int rhead, rcount;
	bool have_progress;          /* a progress slot overwritten by each step of a run */
	tui_result progress;
};

static void wake(tui_actions *a)
{
	char b = 'A';
	ssize_t w;

	if (a->wake_fd < 0)
		return;
	do
		w = write(a->wake_fd, &b, 1);
	while (w < 0 && errno == EINTR);
}

static void post(tui_actions *a, const tui_result *r)
{
	pthread_mutex_lock(&a->mu);
	if (!r->final) {
		a->progress = *r;
		a->have_progress = true;
	} else {
		if (a->rcount == RESULT_QUEUE) { /* drop the oldest; the log keeps the audit rows */
			a->rhead = (a->rhead + 1) % RESULT_QUEUE;
			a->rcount--;
		}
		a->results[(a->rhead + a->rcount) % RESULT_QUEUE] = *r;
		a->rcount++;
		a->have_progress = false;
	}
	pthread_mutex_unlock(&a->mu);
	wake(a);
}

bool actions_poll(tui_actions *a, tui_result *out)
{
	bool got = false;

	pthread_mutex_lock(&a->mu);
	if (a->have_progress) {
		*out = a->progress;
		a->have_progress = false;
		got = true;
	} else if (a->rcount > 0) {
		*out = a->results[a->rhead];
		a->rhead = (a->rhead + 1) % RESULT_QUEUE;
		a->rcount--;
		got = true;
	}
	pthread_mutex_unlock(&a->mu);
	return got;
}

/* Fills R from ERR: status, the console's words for it (ops.h: "refused:
 * ...", "busy, retry later: ...") and the hint. */
static void from_error(tui_result *r, const char *what, const cleanup_error *err)
{
	size_t l;

	r->status = err->status;
	tui_op_error_text(r->message, sizeof r->message, what, err, TUI_FRONT_CONSOLE);
	/* a busy answer's detail says who holds the lock and, after :wait,
	 * "still busy after :wait N s (M attempts)" */
	l = strlen(r->message);
	if (err->status == CLEANUP_EBUSY && err->detail[0] && l < sizeof r->message)
		snprintf(r->message + l, sizeof r->message - l, " (%.300s)", err->detail);
	snprintf(r->hint, sizeof r->hint, "%.500s", err->hint);
}

static void describe_step(char *buf, size_t len, const char *prefix, const cleanup_step_result *s)
{
	char extra[96] = "";

	if (s->libraries_deleted || s->servers_deleted)
		snprintf(extra, sizeof extra, ", %d libraries and %d servers deleted", s->libraries_deleted,
		         s->servers_deleted);
	snprintf(buf, len,
	         "%sstep %d (%s): visited %d, deleted %d, moved %d, absent %d, retained %d, kept %d%s; "
	         "lock held %.2f ms; phase now %s",
	         prefix, s->step_no, s->action, s->visited, s->deleted, s->moved, s->absent, s->retained, s->kept,
	         extra, s->lock_hold_ms, s->phase_after);
}

typedef struct run_ctx {
	tui_actions *a;
	int64_t job_id;
	int64_t deleted;   /* rows this run deleted (its steps', not the job's total) */
	int64_t settled;   /* rows this run settled (progress.h) */
	double next_step_at; /* monotonic: when the throttle lets the next step go */
} run_ctx;

static double run_rate(void *arg)
{
	const run_ctx *rc = arg;

	return atomic_load(&rc->a->max_rate_milli) / 1000.0;
}

static bool run_stopped(void *arg)
{
	const run_ctx *rc = arg;

	return atomic_load(&rc->a->stop_run);
}

/* Waits until the throttle lets the next step go, in naps of at most 20 ms
 * so that a stop is seen at once (ops.h, the same as job run --max-rate).
 * False when the run was asked to stop. */
static bool throttle(run_ctx *rc)
{
	return tui_op_throttle_sleep(&rc->next_step_at, run_rate, run_stopped, rc, 0.02) && !run_stopped(rc);
}

static bool run_progress(const cleanup_run_progress *p, void *arg)
{
	run_ctx *rc = arg;
	tui_result r;

	memset(&r, 0, sizeof r);
	r.action = ACT_RUN;
	r.job_id = rc->job_id;
	r.status = CLEANUP_OK;
	r.final = false;
	r.steps = p->steps_done;
	if (p->step) {
		rc->deleted += p->step->deleted;
		rc->settled += p->step->deleted + p->step->moved + p->step->absent + p->step->kept;
	}
	if (p->step && atomic_load(&rc->a->max_rate_milli) > 0)
		snprintf(r.message, sizeof r.message,
		         "running job %" PRId64 " throttled to %g steps/s: %d steps, last step %d deleted %d, phase %s (press t "
		         "to stop)",
		         rc->job_id, atomic_load(&rc->a->max_rate_milli) / 1000.0, p->steps_done, p->step->step_no,
		         p->step->deleted, p->job ? p->job->phase : "?");
	else if (p->step)
		snprintf(r.message, sizeof r.message,
		         "running job %" PRId64 ": %d steps, last step %d deleted %d, phase %s (press t to stop)",
		         rc->job_id, p->steps_done, p->step->step_no, p->step->deleted, p->job ? p->job->phase : "?");
	else
		snprintf(r.message, sizeof r.message, "running job %" PRId64 ": busy, retrying (%d busy answers) — %.400s",
		         rc->job_id, p->busy_retries, p->busy ? p->busy->message : "");
	post(rc->a, &r);
	if (p->step && p->job && !cleanup_job_phase_is_final(p->job->phase))
		return throttle(rc);
	return !atomic_load(&rc->a->stop_run);
}

/* :wait (the operation layer's retry rule, ops.h): what an action's
 * retries tell the footer, and what stops them (t, quit). */
typedef struct retry_ctx {
	tui_actions *a;
	const confirm_target *t;
} retry_ctx;

static bool retry_stopped(void *arg)
{
	const retry_ctx *x = arg;

	return atomic_load(&x->a->stop_run);
}

static void retry_note(const tui_op_wait *w, const cleanup_error *err, double left_s, void *arg)
{
	const retry_ctx *x = arg;
	tui_result r;
	char what[96];

	memset(&r, 0, sizeof r);
	r.action = x->t->action;
	r.job_id = x->t->job_id;
	r.status = CLEANUP_EBUSY;
	r.final = false;
	if (x->t->job_id > 0)
		snprintf(what, sizeof what, "%s job %" PRId64, tui_action_name(x->t->action), x->t->job_id);
	else
		snprintf(what, sizeof what, "%s %" PRId64, tui_action_name(x->t->action), x->t->target_id);
	/* whole seconds, rounded up: "1 s left" until the deadline */
	snprintf(r.message, sizeof r.message, "%s: busy, retrying (%d s left, attempt %d; t stops): %.700s", what,
	         (int)(left_s + 0.999), w->attempts + 1, err->message);
	post(x->a, &r);
}

/* Starts W for an action of T with this console's :wait. */
static void retry_begin(tui_op_wait *w, retry_ctx *x, tui_actions *a, const confirm_target *t)
{
	x->a = a;
	x->t = t;
	tui_op_wait_begin(w, atomic_load(&a->wait_ms) / 1000.0, ":wait");
	w->stop = retry_stopped;
	w->retrying = retry_note;
	w->arg = x;
}

static void run_action(tui_actions *a, cleanup_engine *e, const tui_request *q, tui_result *r)
{
	const confirm_target *t = &q->target;
	cleanup_error err;
	cleanup_job job;
	tui_op_result res;
	const cleanup_step_result *step = &res.step;
	const char *kind = tui_op_removal_kind(t->action);
	char why[512];
	tui_op_wait w;
	retry_ctx x;
	int rc;

	memset(&job, 0, sizeof job);
	tui_op_result_init(&res);
	cleanup_error_clear(&err);
	r->status = CLEANUP_OK;

	if (kind) {
		retry_begin(&w, &x, a, t);
		do
			rc = tui_op_create(&res.job, e, kind, t->target_id, NULL, &err);
		while (rc != CLEANUP_OK && tui_op_wait_again(&w, &err));
		if (rc != CLEANUP_OK) {
			from_error(r, kind, &err);
			tui_op_result_reset(&res);
			return;
		}
		r->job_id = res.job.id;
		/* the CLI's words (ops.h) */
		tui_op_done_text(r->message, sizeof r->message, t->action, &res.job);
		tui_op_result_reset(&res);
		return;
	}

	if (t->action == ACT_TERMINATE_HOLDER) {
		/* The engine re-checks that the pid still holds up a job, in the
		 * statement that terminates it, and writes the audit row itself. */
		cleanup_holder_outcome o;

		rc = cleanup_locks_terminate_holder(&o, e, t->holder_pid, NULL, q->confirmation, &err);
		if (rc != CLEANUP_OK) {
			from_error(r, "terminate-holder", &err);
			return;
		}
		r->job_id = o.job_id;
		r->status = o.refused ? CLEANUP_EREFUSED : CLEANUP_OK;
		r->audited = o.audit_id > 0;
		snprintf(r->message, sizeof r->message, "terminate-holder: %.1000s", o.outcome);
		return;
	}

	/* The binding: the job must still be what the operator confirmed. */
	rc = cleanup_job_get(&job, e, t->job_id, &err);
	if (rc != CLEANUP_OK) {
		from_error(r, tui_action_name(t->action), &err);
		return;
	}
	if (!confirm_check_binding(t, job.phase, job.step_no, why, sizeof why)) {
		r->status = CLEANUP_EREFUSED;
		snprintf(r->message, sizeof r->message, "%s: %s%s", tui_action_name(t->action),
		         tui_op_error_prefix(CLEANUP_EREFUSED, TUI_FRONT_CONSOLE), why);
		cleanup_job_reset(&job);
		return;
	}

	switch (t->action) {
	case ACT_STEP:
		retry_begin(&w, &x, a, t);
		do
			rc = tui_op_step(&res.step, e, t->job_id, &err);
		while (rc != CLEANUP_OK && tui_op_wait_again(&w, &err));
		if (rc == CLEANUP_OK) {
			char prefix[64];

			snprintf(prefix, sizeof prefix, "job %" PRId64 " %s", t->job_id, step->replayed ? "replayed " : "");
			describe_step(r->message, sizeof r->message, prefix, step);
			r->steps = step->replayed ? 0 : 1;
		}
		break;
	case ACT_PREVIEW:
		rc = tui_op_preview(&res.step, e, t->job_id, &err);
		if (rc == CLEANUP_OK)
			snprintf(r->message, sizeof r->message,
			         "preview of job %" PRId64 " step %d (%s, nothing done): would visit %d, delete %d, move %d, "
			         "find %d absent, retain %d, keep %d",
			         t->job_id, step->step_no, step->action, step->visited, step->deleted, step->moved, step->absent,
			         step->retained, step->kept);
		break;
	case ACT_RUN: {
		cleanup_run_opts o;
		const cleanup_run_summary *s = &res.run;
		run_ctx ctx = {a, t->job_id, 0, 0, 0};

		/* As `job run`: asynchronous drain steps, durable completion; a
		 * throttled run one step at a time (ops.h). */
		tui_op_run_opts_init(&o, atomic_load(&a->max_rate_milli) / 1000.0);
		o.callback = run_progress;
		o.callback_arg = &ctx;
		o.max_reconnects = 3;
		rc = tui_op_run(&res.run, e, t->job_id, &o, &err);
		r->steps = s->steps;
		/* The run's own deletions, the job's total beside. */
		if (rc == CLEANUP_OK)
			snprintf(r->message, sizeof r->message,
			         "run of job %" PRId64 " %s after %d steps in %.2f s (%d busy retries): this run deleted %" PRId64
			         " and settled %" PRId64 " rows; phase %s, job total deleted %" PRId64,
			         t->job_id, s->completed ? "completed" : s->stopped ? "stopped by the operator" : "ended", s->steps,
			         s->elapsed_s, s->busy_retries, ctx.deleted, ctx.settled, s->job.phase, s->job.deleted);
		break;
	}
	case ACT_KILL_RUNNER:
		rc = tui_op_kill_runner(e, t->job_id, t->runner_pid, &err);
		if (rc == CLEANUP_OK)
			snprintf(r->message, sizeof r->message,
			         "kill-runner: backend %d of job %" PRId64 " terminated; the job stays at step %d (its last "
			         "committed step) until the next runner resumes it; its runner lease ended",
			         t->runner_pid, t->job_id, job.step_no);
		break;
	case ACT_PAUSE:
	case ACT_RESUME:
	case ACT_CANCEL:
		retry_begin(&w, &x, a, t);
		do
			rc = tui_op_transition(&res.job, e, t->job_id, t->action, &err);
		while (rc != CLEANUP_OK && tui_op_wait_again(&w, &err));
		if (rc == CLEANUP_OK) /* the CLI's words (ops.h) */
			tui_op_done_text(r->message, sizeof r->message, t->action, &res.job);
		break;
	case ACT_SEAL:
		retry_begin(&w, &x, a, t);
		do
			rc = tui_op_seal(&res.job, e, t->job_id, t->seal_count, &err);
		while (rc != CLEANUP_OK && tui_op_wait_again(&w, &err));
		if (rc == CLEANUP_OK)
			tui_op_done_text(r->message, sizeof r->message, t->action, &res.job);
		break;
	default:
		rc = cleanup_error_set(&err, CLEANUP_EINVAL, "unknown action");
		break;
	}
	if (rc != CLEANUP_OK) {
		char what[64];

		snprintf(what, sizeof what, "%s job %" PRId64, tui_action_name(t->action), t->job_id);
		from_error(r, what, &err);
	}
	tui_op_result_reset(&res);
	cleanup_job_reset(&job);
}

static void audit(cleanup_engine *e, const tui_request *q, tui_result *r)
{
	cleanup_audit_entry entry;
	cleanup_error err;
	char outcome[1600];

	memset(&entry, 0, sizeof entry);
	entry.action = tui_action_name(q->target.action);
	entry.job_id = r->job_id;
	entry.confirmation = q->confirmation[0] ? q->confirmation : NULL;
	if (q->audit_only)
		snprintf(outcome, sizeof outcome, "%s", q->outcome);
	else
		snprintf(outcome, sizeof outcome, "%s%s%s", r->message, r->hint[0] ? " — hint: " : "", r->hint);
	entry.outcome = outcome;
	if (cleanup_audit_record(NULL, e, &entry, &err) == CLEANUP_OK) {
		r->audited = true;
	} else if (r->status == CLEANUP_OK) {
		/* The action happened; say that its record is missing. */
		size_t l = strlen(r->message);

		snprintf(r->message + l, sizeof r->message - l, " (audit row NOT written: %s)", err.message);
	}
}

static void perform(tui_actions *a, const tui_request *q)
{
	const confirm_target *t = &q->target;
	cleanup_engine *e = NULL;
	cleanup_error err;
	tui_result r;
	char app[64];

	memset(&r, 0, sizeof r);
	r.action = t->action;
	r.job_id = t->job_id;
	r.final = true;
	tui_job_app_name(app, sizeof app, t->job_id, "console");
	if (cleanup_engine_open(&e, a->conninfo, app, &err) != CLEANUP_OK) {
		from_error(&r, tui_action_name(t->action), &err);
		snprintf(r.message + strlen(r.message), sizeof r.message - strlen(r.message),
		         " (nothing was done; no audit row could be written)");
		post(a, &r);
		return;
	}
	/* B1: no statement of an action waits without bound (ops.h, as the
	 * CLI's default --timeout). */
	if (cleanup_engine_set_timeout(e, TUI_OP_STATEMENT_TIMEOUT_S * 1000, &err) != CLEANUP_OK) {
		from_error(&r, tui_action_name(t->action), &err);
		post(a, &r);
		cleanup_engine_close(e);
		return;
	}
	if (t->action == ACT_RUN && !q->audit_only) {
		/* A run can last long: its start is on record before the first step. */
		tui_request started = *q;
		tui_result sr = r;

		started.audit_only = true;
		snprintf(started.outcome, sizeof started.outcome, "started: job %" PRId64 " runs step after step",
		         t->job_id);
		audit(e, &started, &sr);
	}
	if (q->audit_only) {
		r.status = CLEANUP_OK;
		snprintf(r.message, sizeof r.message, "%s", q->outcome);
	} else {
		run_action(a, e, q, &r);
		if (!cleanup_engine_ok(e))
			cleanup_engine_reconnect(e, &err);
	}
	if (!r.audited) /* terminate-holder writes its own row */
		audit(e, q, &r);
	cleanup_engine_close(e);
	post(a, &r);
}

static void *worker(void *arg)
{
	tui_actions *a = arg;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		tui_request q;

		while (!a->have_request && !a->quit)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->quit)
			break;
		q = a->req;
		a->have_request = false;
		pthread_mutex_unlock(&a->mu);
		perform(a, &q);
		pthread_mutex_lock(&a->mu);
		a->busy = false;
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

int actions_start(tui_actions **out, const char *conninfo, int wake_fd, cleanup_error *err)
{
	tui_actions *a;

	*out = NULL;
	a = calloc(1, sizeof *a);
	if (!a)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	if (conninfo && !(a->conninfo = strdup(conninfo))) {
		free(a);
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	}
	a->wake_fd = wake_fd;
	atomic_init(&a->stop_run, false);
	atomic_init(&a->max_rate_milli, 0);
	atomic_init(&a->wait_ms, 0);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (pthread_create(&a->thread, NULL, worker, a) != 0) {
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		free(a->conninfo);
		free(a);
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot start the action thread: %s", strerror(errno));
	}
	a->started = true;
	*out = a;
	return CLEANUP_OK;
}

int actions_submit(tui_actions *a, const tui_request *req)
{
	int rc = -1;

	pthread_mutex_lock(&a->mu);
	if (!a->busy && !a->quit) {
		a->req = *req;
		a->have_request = true;
		a->busy = true;
		atomic_store(&a->stop_run, false);
		pthread_cond_signal(&a->cv);
		rc = 0;
	}
	pthread_mutex_unlock(&a->mu);
	return rc;
}

bool actions_busy(tui_actions *a, tui_action *what, int64_t *job)
{
	bool busy;

	pthread_mutex_lock(&a->mu);
	busy = a->busy;
	if (busy && what)
		*what = a->req.target.action;
	if (busy && job)
		*job = a->req.target.job_id;
	pthread_mutex_unlock(&a->mu);
	return busy;
}

void actions_set_max_rate(tui_actions *a, double steps_per_s)
{
	atomic_store(&a->max_rate_milli, steps_per_s > 0 ? (int)(steps_per_s * 1000.0 + 0.5) : 0);
}

double actions_max_rate(tui_actions *a)
{
	return atomic_load(&a->max_rate_milli) / 1000.0;
}

void actions_set_wait(tui_actions *a, double seconds)
{
	atomic_store(&a->wait_ms, seconds > 0 ? (int)(seconds * 1000.0 + 0.5) : 0);
}

double actions_wait(tui_actions *a)
{
	return atomic_load(&a->wait_ms) / 1000.0;
}

void actions_stop_run(tui_actions *a)
{
	atomic_store(&a->stop_run, true);
}

void actions_shutdown(tui_actions *a)
{
	if (!a)
		return;
	if (a->started) {
		atomic_store(&a->stop_run, true);
		pthread_mutex_lock(&a->mu);
		a->quit = true;
		pthread_cond_signal(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thread, NULL);
	}
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a->conninfo);
	free(a);
}
