/* Retention (cleanup/purge.h) through the named queries purge_step.sql and
 * purge_plan.sql; the purge itself is sql/functions/080_retention.sql. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/purge.h"
#include "engine_int.h"
#include "rowmap_int.h"

/* The columns a purge step's result and a plan's job share: the job. */
#define PURGE_JOB_COLS(T)                                                                                     \
	ROW_I64_OR(T, job_id, 0), ROW_TEXT(T, kind), ROW_TEXT(T, target_name), ROW_TEXT(T, finished_at),      \
	    ROW_I64_OR(T, manifest, 0), ROW_I64_OR(T, steps, 0)

static const engine_col result_cols[] = {
	PURGE_JOB_COLS(cleanup_purge_result),
	ROW_I64_OR(cleanup_purge_result, retained, 0),
	ROW_I64_OR(cleanup_purge_result, events, 0),
	ROW_BOOL(cleanup_purge_result, job_purged),
	ROW_BOOL(cleanup_purge_result, more),
};

/* The plan's first row carries the totals; every row with a job names one. */
static const engine_col plan_cols[] = {
	ROW_I64_OR(cleanup_purge_plan, jobs_total, 0),
	ROW_I64_OR(cleanup_purge_plan, events, 0),
	ROW_BOOL(cleanup_purge_plan, events_capped),
};

static const engine_col plan_job_cols[] = {
	PURGE_JOB_COLS(cleanup_purge_job),
	ROW_TEXT(cleanup_purge_job, phase),
};

/* The parameters of both entry points, as text: the age (a finite
 * number of days, 0 to CLEANUP_PURGE_DAYS_MAX) and a count. */
typedef struct purge_args {
	char days[64], count[16];
	const char *params[2];
} purge_args;

/* Checks DAYS and COUNT (NAME, 1 to MAX UNIT) into A. */
static int purge_args_set(purge_args *a, double days, const char *name, int count, int max, const char *unit,
                          cleanup_error *err)
{
	cleanup_error_clear(err);
	if (!isfinite(days) || days < 0 || days > CLEANUP_PURGE_DAYS_MAX)
		return cleanup_error_set(err, CLEANUP_EINVAL, "older-than %g days is not valid: it must be 0 to %.0f",
		                         days, CLEANUP_PURGE_DAYS_MAX);
	if (count < 1 || count > max)
		return cleanup_error_set(err, CLEANUP_EINVAL, "%s %d is not valid: it must be 1 to %d %s", name, count,
		                         max, unit);
	snprintf(a->days, sizeof a->days, "%.6f", days);
	snprintf(a->count, sizeof a->count, "%d", count);
	a->params[0] = a->days;
	a->params[1] = a->count;
	return CLEANUP_OK;
}

int cleanup_purge_step(cleanup_purge_result *out, cleanup_engine *e, double older_than_days, int budget,
                       cleanup_error *err)
{
	purge_args a;
	PGresult *res = NULL;
	int rc;

	if ((rc = purge_args_set(&a, older_than_days, "batch", budget, CLEANUP_PURGE_BUDGET_MAX, "rows", err)))
		return rc;
	rc = engine_query_one(&res, e, CLEANUP_Q_PURGE_STEP, 2, a.params, "purging finished jobs",
	                      "a purge transaction", err);
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
	purge_args a;
	PGresult *res = NULL;
	int rc, i, nr;

	memset(plan, 0, sizeof *plan);
	if ((rc = purge_args_set(&a, older_than_days, "limit", limit, 1000, "jobs", err)))
		return rc;
	rc = engine_query(&res, e, CLEANUP_Q_PURGE_PLAN, 2, a.params, "reading what a purge would remove", err);
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
