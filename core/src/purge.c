/* Retention (cleanup/purge.h) through the named queries purge_step.sql and
 * purge_plan.sql; the purge itself is sql/functions/080_retention.sql. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/purge.h"
#include "engine_int.h"

static int64_t col_int64_or_zero(const PGresult *res, int row, const char *name)
{
	int c = PQfnumber(res, name);

	if (c < 0 || PQgetisnull(res, row, c))
		return 0;
	return col_int64(res, row, name);
}

static bool col_true(const PGresult *res, int row, const char *name)
{
	const char *v = col_text(res, row, name);

	return v && strcmp(v, "t") == 0;
}

/* The age rule, shared by both entry points: a finite number of days,
 * 0 to CLEANUP_PURGE_DAYS_MAX, written as a parameter. */
static int days_param(char *buf, size_t len, double days, cleanup_error *err)
{
	if (!isfinite(days) || days < 0 || days > CLEANUP_PURGE_DAYS_MAX)
		return cleanup_error_set(err, CLEANUP_EINVAL, "older-than %g days is not valid: it must be 0 to %.0f",
		                         days, CLEANUP_PURGE_DAYS_MAX);
	snprintf(buf, len, "%.6f", days);
	return CLEANUP_OK;
}

int cleanup_purge_step(cleanup_purge_result *out, cleanup_engine *e, double older_than_days, int budget,
                       cleanup_error *err)
{
	char days[64], bud[16];
	const char *params[2] = {days, bud};
	PGresult *res = NULL;
	cleanup_purge_result r;
	int rc;

	cleanup_error_clear(err);
	if ((rc = days_param(days, sizeof days, older_than_days, err)) != CLEANUP_OK)
		return rc;
	if (budget < 1 || budget > CLEANUP_PURGE_BUDGET_MAX)
		return cleanup_error_set(err, CLEANUP_EINVAL, "batch %d is not valid: it must be 1 to %d rows", budget,
		                         CLEANUP_PURGE_BUDGET_MAX);
	snprintf(bud, sizeof bud, "%d", budget);
	rc = engine_query(&res, e, CLEANUP_Q_PURGE_STEP, 2, params, "purging finished jobs", err);
	if (rc != CLEANUP_OK)
		goto out;
	if (PQntuples(res) != 1) {
		rc = cleanup_error_set(err, CLEANUP_ERROR, "a purge transaction returned %d rows", PQntuples(res));
		goto out;
	}
	memset(&r, 0, sizeof r);
	r.job_id = col_int64_or_zero(res, 0, "job_id");
	col_copy(r.kind, sizeof r.kind, res, 0, "kind");
	col_copy(r.target_name, sizeof r.target_name, res, 0, "target_name");
	col_copy(r.finished_at, sizeof r.finished_at, res, 0, "finished_at");
	r.manifest = col_int64_or_zero(res, 0, "manifest");
	r.retained = col_int64_or_zero(res, 0, "retained");
	r.steps = col_int64_or_zero(res, 0, "steps");
	r.events = col_int64_or_zero(res, 0, "events");
	r.job_purged = col_true(res, 0, "job_purged");
	r.more = col_true(res, 0, "more");
	*out = r;
out:
	PQclear(res);
	return rc;
}

int cleanup_purge_plan_read(cleanup_purge_plan *plan, cleanup_engine *e, double older_than_days, int limit,
                            cleanup_error *err)
{
	char days[64], lim[16];
	const char *params[2] = {days, lim};
	PGresult *res = NULL;
	int rc, i, nr;

	memset(plan, 0, sizeof *plan);
	cleanup_error_clear(err);
	if ((rc = days_param(days, sizeof days, older_than_days, err)) != CLEANUP_OK)
		return rc;
	if (limit < 1 || limit > 1000)
		return cleanup_error_set(err, CLEANUP_EINVAL, "limit %d is not valid: it must be 1 to 1000 jobs", limit);
	snprintf(lim, sizeof lim, "%d", limit);
	rc = engine_query(&res, e, CLEANUP_Q_PURGE_PLAN, 2, params, "reading what a purge would remove", err);
	if (rc != CLEANUP_OK)
		goto out;
	nr = PQntuples(res);
	if (nr < 1) {
		rc = cleanup_error_set(err, CLEANUP_ERROR, "a purge plan returned no row");
		goto out;
	}
	plan->jobs_total = col_int64_or_zero(res, 0, "jobs_total");
	plan->events = col_int64_or_zero(res, 0, "events");
	plan->events_capped = col_true(res, 0, "events_capped");
	if (!(plan->jobs = calloc((size_t)nr, sizeof *plan->jobs))) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nr; i++) {
		cleanup_purge_job *j = &plan->jobs[plan->n_jobs];

		j->job_id = col_int64_or_zero(res, i, "job_id");
		if (j->job_id == 0)
			continue;
		col_copy(j->kind, sizeof j->kind, res, i, "kind");
		col_copy(j->target_name, sizeof j->target_name, res, i, "target_name");
		col_copy(j->phase, sizeof j->phase, res, i, "phase");
		col_copy(j->finished_at, sizeof j->finished_at, res, i, "finished_at");
		j->manifest = col_int64_or_zero(res, i, "manifest");
		j->steps = col_int64_or_zero(res, i, "steps");
		plan->n_jobs++;
	}
out:
	if (rc != CLEANUP_OK)
		cleanup_purge_plan_free(plan);
	PQclear(res);
	return rc;
}

void cleanup_purge_plan_free(cleanup_purge_plan *plan)
{
	if (!plan)
		return;
	free(plan->jobs);
	plan->jobs = NULL;
	plan->n_jobs = 0;
}
