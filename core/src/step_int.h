/* Private to core/: what runner.c (the job driver) uses of step.c. */
#ifndef CLEANUP_STEP_INT_H
#define CLEANUP_STEP_INT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"
#include "cleanup/step.h"

/* Fills R from row ROW of RES (columns of cleanup.job_steps plus replayed
 * and, unless PREVIEW or the lean statement, json). */
int step_from_row(cleanup_step_result *r, const PGresult *res, int row, bool preview, cleanup_error *err);

/* Runs step STEP_NO of JOB_ID (step_run.sql, or step_run_lean.sql when
 * LEAN: no JSON document) with BUSY_SEEN unrecorded busy answers and the
 * runner lease token LEASE (0: none, the step is refused while another
 * runner holds the job). */
int step_run_at(cleanup_step_result *out, cleanup_engine *engine, int64_t job_id, int32_t step_no, int busy_seen,
                bool lean, int64_t lease, cleanup_error *err);

#endif
