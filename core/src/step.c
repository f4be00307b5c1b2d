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

static double col_double(const PGresult *res, int row, const char *name, double null_value)
{
	const char *s = col_text(res, row, name);

	return *s ? strtod(s, NULL) : null_value;
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
	col_copy(r->phase_after, sizeof r->phase_after, res, row, "phase_after");
	r->duration_ms = col_double(res, row, "duration_ms", 0);
	r->lock_hold_ms = col_double(res, row, "lock_hold_ms", 0);
	r->parent_lock_ms = col_double(res, row, "parent_lock_ms", -1);
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

/* Runs step STEP_NO; LEAN leaves out the server-built JSON (the run loop
 * needs only the counts, and building the document costs every step). */
static int step_at(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, int32_t step_no, int busy_seen,
                   bool lean, cleanup_error *err)
{
	char jbuf[24], sbuf[16], bbuf[16], ctx[80];
	const char *params[3] = {jbuf, sbuf, bbuf};

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(sbuf, sizeof sbuf, "%" PRId32, step_no);
	snprintf(bbuf, sizeof bbuf, "%d", busy_seen > 0 ? busy_seen : 0);
	snprintf(ctx, sizeof ctx, "running step %s of job %s", sbuf, jbuf);
	return one_step(out, e, lean ? CLEANUP_Q_STEP_RUN_LEAN : CLEANUP_Q_STEP_RUN, 3, params, false, ctx, err);
}

int cleanup_job_step_at(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, int32_t step_no,
                        int busy_seen, cleanup_error *err)
{
	return step_at(out, e, job_id, step_no, busy_seen, false, err);
}

int cleanup_job_step(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, cleanup_error *err)
{
	cleanup_job job;
	int rc;

	memset(out, 0, sizeof *out);
	rc = cleanup_job_get(&job, e, job_id, err);
	if (rc != CLEANUP_OK)
		return rc;
	rc = cleanup_job_step_at(out, e, job_id, job.step_no + 1, 0, err);
	cleanup_job_reset(&job);
	return rc;
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
	rc = engine_script(e, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", ctx, err);
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
	return engine_script(e, synchronous ? "SET cleanup.step_synchronous_commit = on"
	                                    : "SET cleanup.step_synchronous_commit = off",
	                     "setting the step commit mode", err);
}

/* --- the run loop -------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(double ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Adds step S's counts to the local copy of the job, so the run loop needs
 * no extra round trip to report progress. */
static void job_apply_step(cleanup_job *job, const cleanup_step_result *s)
{
	job->step_no = s->step_no;
	snprintf(job->phase, sizeof job->phase, "%s", s->phase_after);
	job->visited += s->visited;
	job->deleted += s->deleted;
	job->moved += s->moved;
	job->absent += s->absent;
	job->retained += s->retained;
	job->kept += s->kept;
	job->libraries_deleted += s->libraries_deleted;
	job->servers_deleted += s->servers_deleted;
}

/* True when step S visited rows and could resolve none of them: every one
 * is held by a concurrent writer, so stepping again at once is pointless. */
static bool step_stalled(const cleanup_step_result *s)
{
	return s->visited > 0 && s->retained == s->visited && strcmp(s->action, "pass") == 0;
}

int cleanup_job_run(cleanup_run_summary *out, cleanup_engine *e, int64_t job_id, const cleanup_run_opts *opts,
                    cleanup_error *err)
{
	static const cleanup_run_opts defaults;
	const cleanup_run_opts *o = opts ? opts : &defaults;
	int backoff0 = o->backoff_initial_ms > 0 ? o->backoff_initial_ms : 10;
	int backoff_max = o->backoff_max_ms > 0 ? o->backoff_max_ms : 1000;
	int max_busy = o->max_busy_retries > 0 ? o->max_busy_retries : 100;
	double t0 = now_s(), backoff = backoff0;
	int rc, consecutive_busy = 0, consecutive_lost = 0, unrecorded_busy = 0;
	int32_t next;
	cleanup_step_result step;
	cleanup_run_progress p;
	cleanup_error local_err;
	bool done = false;

	if (!err)
		err = &local_err;
	memset(out, 0, sizeof *out);
	memset(&step, 0, sizeof step);
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
	next = out->job.step_no + 1;

	while (!done) {
		double elapsed = now_s() - t0;

		if (o->max_steps > 0 && out->steps >= o->max_steps) {
			out->stopped = true;
			snprintf(out->stop_reason, sizeof out->stop_reason, "max-steps");
			break;
		}
		if (o->deadline_s > 0 && elapsed >= o->deadline_s) {
			out->stopped = true;
			snprintf(out->stop_reason, sizeof out->stop_reason, "deadline");
			break;
		}
		cleanup_step_result_reset(&step);
		rc = step_at(&step, e, job_id, next, unrecorded_busy, true, err);

		if (rc == CLEANUP_EBUSY) {
			bool recorded = false;
			cleanup_error note_err;
			double wait = backoff;

			out->busy_retries++;
			consecutive_busy++;
			if (cleanup_job_note_busy(&recorded, e, job_id, err->message, &note_err) != CLEANUP_OK ||
			    !recorded)
				unrecorded_busy++;
			memset(&p, 0, sizeof p);
			p.job = &out->job;
			p.busy = err;
			p.steps_done = out->steps;
			p.busy_retries = out->busy_retries;
			p.elapsed_s = now_s() - t0;
			if (o->callback && !o->callback(&p, o->callback_arg)) {
				out->stopped = true;
				snprintf(out->stop_reason, sizeof out->stop_reason, "callback");
				rc = CLEANUP_OK;
				break;
			}
			if (consecutive_busy >= max_busy) {
				snprintf(out->stop_reason, sizeof out->stop_reason, "busy");
				cleanup_error_hint(err, "%d busy answers in a row; the job is unchanged since step %d, retry later",
				                   consecutive_busy, next - 1);
				break;
			}
			if (o->deadline_s > 0 && wait > (o->deadline_s - (now_s() - t0)) * 1000)
				wait = (o->deadline_s - (now_s() - t0)) * 1000;
			sleep_ms(wait);
			backoff = backoff * 2 > backoff_max ? backoff_max : backoff * 2;
			continue;
		}
		if (rc == CLEANUP_ECONN && consecutive_lost < o->max_reconnects) {
			cleanup_error rerr;
			cleanup_job now;

			consecutive_lost++;
			if (cleanup_engine_reconnect(e, &rerr) != CLEANUP_OK) {
				sleep_ms(backoff);
				backoff = backoff * 2 > backoff_max ? backoff_max : backoff * 2;
				continue;
			}
			out->reconnects++;
			/* The lost step either committed or rolled back; the durable
			 * step number says which (with asynchronous commit a server
			 * crash may even have lost earlier steps: they run again). */
			if (cleanup_job_get(&now, e, job_id, &rerr) == CLEANUP_OK) {
				next = now.step_no + 1;
				cleanup_job_reset(&now);
			}
			continue;
		}
		if (rc != CLEANUP_OK) {
			snprintf(out->stop_reason, sizeof out->stop_reason, "error");
			break;
		}

		consecutive_busy = 0;
		consecutive_lost = 0;
		if (!step.replayed)
			unrecorded_busy = 0;
		else
			out->replayed++;
		out->steps++;
		job_apply_step(&out->job, &step);
		next = step.step_no + 1;
		if (strcmp(step.phase_after, "completed") == 0) {
			out->completed = true;
			done = true;
			snprintf(out->stop_reason, sizeof out->stop_reason, "completed");
		}
		memset(&p, 0, sizeof p);
		p.job = &out->job;
		p.step = &step;
		p.steps_done = out->steps;
		p.busy_retries = out->busy_retries;
		p.elapsed_s = now_s() - t0;
		if (o->callback && !o->callback(&p, o->callback_arg) && !done) {
			out->stopped = true;
			snprintf(out->stop_reason, sizeof out->stop_reason, "callback");
			break;
		}
		if (!done && step_stalled(&step)) {
			/* Every visited row is held by a writer: give it time. */
			sleep_ms(backoff);
			backoff = backoff * 2 > backoff_max ? backoff_max : backoff * 2;
		} else {
			backoff = backoff0;
		}
	}
	cleanup_step_result_reset(&step);
	out->elapsed_s = now_s() - t0;

	/* The job as the database has it now (the local copy lacks cursors). */
	if (cleanup_engine_ok(e)) {
		cleanup_job fresh;
		cleanup_error ferr;

		if (cleanup_job_get(&fresh, e, job_id, &ferr) == CLEANUP_OK) {
			cleanup_job_reset(&out->job);
			out->job = fresh;
		}
	}
	return rc;
}
