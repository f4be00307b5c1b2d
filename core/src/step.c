/* Bounded steps of a draining job: thin wrappers over cleanup.job_step()
 * and friends (sql/functions/060_step.sql). Driving a job (the lease, the
 * run loop, its backoff and reconnects) is runner.c's.
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
#include "cleanup/step.h"
#include "engine_int.h"
#include "step_int.h"

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
int step_from_row(cleanup_step_result *r, const PGresult *res, int row, bool preview,
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

/* Runs step STEP_NO; LEAN leaves out the server-built JSON (the run loop
 * needs only the counts, and building the document costs every step). */
int step_run_at(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, int32_t step_no, int busy_seen,
                bool lean, int64_t lease, cleanup_error *err)
{
	char jbuf[24], sbuf[16], bbuf[16], lbuf[24], ctx[80];
	const char *params[4] = {jbuf, sbuf, bbuf, lease ? lbuf : NULL};
	int rc;

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(sbuf, sizeof sbuf, "%" PRId32, step_no);
	snprintf(bbuf, sizeof bbuf, "%d", busy_seen > 0 ? busy_seen : 0);
	snprintf(lbuf, sizeof lbuf, "%" PRId64, lease);
	snprintf(ctx, sizeof ctx, "running step %s of job %s", sbuf, jbuf);
	rc = one_step(out, e, lean ? CLEANUP_Q_STEP_RUN_LEAN : CLEANUP_Q_STEP_RUN, 4, params, false, ctx, err);
	if (rc == CLEANUP_OK)
		failpoint("after_commit"); /* committed, the answer not yet acted on */
	return rc;
}

int cleanup_job_step_at(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, int32_t step_no,
                        int busy_seen, cleanup_error *err)
{
	return step_run_at(out, e, job_id, step_no, busy_seen, false, 0, err);
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
