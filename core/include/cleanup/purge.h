/* Retention: the bounded purge of what finished jobs leave behind
 * (docs/scaling.md, `cleanupctl purge`). A completed or cancelled job
 * never changes again; its manifest, retained rows and step records are
 * history that grows with the work done. A purge removes them, job by
 * job, oldest finished first, in transactions of at most a given number
 * of rows, and marks each job purged once nothing of it is left (the job
 * row and its counters stay). Events older than the same age go too.
 * The audit trail is never purged. The SQL is
 * sql/functions/080_retention.sql. Not thread-safe (one engine, one
 * thread). */
#ifndef CLEANUP_PURGE_H
#define CLEANUP_PURGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

/* Rows a purge transaction may delete: 1 to this many. */
#define CLEANUP_PURGE_BUDGET_MAX 10000
/* The oldest age accepted, in days (a century). */
#define CLEANUP_PURGE_DAYS_MAX 36500.0

/* What one purge transaction removed. JOB_ID is 0 when no finished job
 * older than the age was left unpurged (then only events were purged, if
 * any). */
typedef struct cleanup_purge_result {
	int64_t job_id;
	char kind[24];
	char target_name[CLEANUP_NAME_SIZE];
	char finished_at[40];       /* ISO 8601, "" when no job */
	int64_t manifest;           /* manifest IDs deleted */
	int64_t retained;           /* retained-row records deleted */
	int64_t steps;              /* step records deleted */
	int64_t events;             /* events deleted */
	bool job_purged;            /* nothing of JOB_ID is left: marked purged */
	bool more;                  /* false once a transaction found nothing to do */
} cleanup_purge_result;

/* One finished job a purge would work on. */
typedef struct cleanup_purge_job {
	int64_t job_id;
	char kind[24];
	char target_name[CLEANUP_NAME_SIZE];
	char phase[16];
	char finished_at[40];
	int64_t manifest;           /* the job's manifest_count */
	int64_t steps;              /* the job's step_no */
} cleanup_purge_job;

/* What a purge of jobs finished at least OLDER_THAN_DAYS ago would
 * remove, removing nothing. */
typedef struct cleanup_purge_plan {
	cleanup_purge_job *jobs;    /* oldest finished first; malloc'd */
	size_t n_jobs;              /* listed (at most the limit asked for) */
	int64_t jobs_total;         /* every such job */
	int64_t events;             /* events older than the age */
	bool events_capped;         /* more than 1,000,000 events: EVENTS is a floor */
} cleanup_purge_plan;

/* Runs one purge transaction: at most BUDGET (1 to
 * CLEANUP_PURGE_BUDGET_MAX) rows of the oldest finished, unpurged job that
 * finished at least OLDER_THAN_DAYS (0 to CLEANUP_PURGE_DAYS_MAX) ago and
 * that no other purge holds, then old events with what is left of the
 * budget. Bad arguments fail with CLEANUP_EINVAL before any work. */
int cleanup_purge_step(cleanup_purge_result *out, cleanup_engine *engine, double older_than_days, int budget,
                       cleanup_error *err);

/* Fills *PLAN with what a purge would remove (at most LIMIT jobs listed,
 * 1 to 1000). Free it with cleanup_purge_plan_free(). */
int cleanup_purge_plan_read(cleanup_purge_plan *plan, cleanup_engine *engine, double older_than_days, int limit,
                            cleanup_error *err);

void cleanup_purge_plan_free(cleanup_purge_plan *plan);

#endif
