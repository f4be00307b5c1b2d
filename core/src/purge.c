/* Retention (cleanup/purge.h) through the named queries purge_step.sql and
 * purge_plan.sql; the purge itself is sql/functions/080_retention.sql. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/purge.h"
#include "engine_int.h"
#include "rowmap_int.h"

#define PURGE_RESULT cleanup_purge_result
static const engine_col result_cols[] = {
	ROW_I64_OR(PURGE_RESULT, job_id, "job_id", 0),
	ROW_TEXT(PURGE_RESULT, kind, "kind"),
	ROW_TEXT(PURGE_RESULT, target_name, "target_name"),
	ROW_TEXT(PURGE_RESULT, finished_at, "finished_at"),
	ROW_I64_OR(PURGE_RESULT, manifest, "manifest", 0),
	ROW_I64_OR(PURGE_RESULT, retained, "retained", 0),
	ROW_I64_OR(PURGE_RESULT, steps, "steps", 0),
	ROW_I64_OR(PURGE_RESULT, events, "events", 0),
	ROW_BOOL(PURGE_RESULT, job_purged, "job_purged"),
	ROW_BOOL(PURGE_RESULT, more, "more"),
};

/* The plan's first row carries the totals; every row with a job names one. */
static const engine_col plan_cols[] = {
	ROW_I64_OR(cleanup_purge_plan, jobs_total, "jobs_total", 0),
	ROW_I64_OR(cleanup_purge_plan, events, "events", 0),
	ROW_BOOL(cleanup_purge_plan, events_capped, "events_capped"),
};

#define PURGE_JOB cleanup_purge_job
static const engine_col plan_job_cols[] = {
	ROW_I64_OR(PURGE_JOB, job_id, "job_id", 0),
	ROW_TEXT(PURGE_JOB, kind, "kind"),
	ROW_TEXT(PURGE_JOB, target_name, "target_name"),
	ROW_TEXT(PURGE_JOB, phase, "phase"),
	ROW_TEXT(PURGE_JOB, finished_at, "finished_at"),
	ROW_I64_OR(PURGE_JOB, manifest, "manifest", 0),
	ROW_I64_OR(PURGE_JOB, steps, "steps", 0),
};

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
	int rc;

	cleanup_error_clear(err);
	if ((rc = days_param(days, sizeof days, older_than_days, err)) != CLEANUP_OK)
		return rc;
	if (budget < 1 || budget > CLEANUP_PURGE_BUDGET_MAX)
		return cleanup_error_set(err, CLEANUP_EINVAL, "batch %d is not valid: it must be 1 to %d rows", budget,
		                         CLEANUP_PURGE_BUDGET_MAX);
	snprintf(bud, sizeof bud, "%d", budget);
	rc = engine_query_one(&res, e, CLEANUP_Q_PURGE_STEP, 2, params, "purging finished jobs", "a purge transaction",
	                      err);
	if (rc == CLEANUP_OK) {
		memset(out, 0, sizeof *out);
		engine_row_map(out, result_cols, ROW_COUNT(result_cols), res, 0);
	}
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
	engine_row_map(plan, plan_cols, ROW_COUNT(plan_cols), res, 0);
	if (!(plan->jobs = calloc((size_t)nr, sizeof *plan->jobs))) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nr; i++) {
		cleanup_purge_job *j = &plan->jobs[plan->n_jobs];

		engine_row_map(j, plan_job_cols, ROW_COUNT(plan_job_cols), res, i);
		if (j->job_id != 0)
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
