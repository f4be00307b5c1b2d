/* Private to core/: reading job rows, shared by the engine calls (job.c)
 * and the console's monitor (monitor.c). */
#ifndef CLEANUP_JOB_INT_H
#define CLEANUP_JOB_INT_H

#include <libpq-fe.h>
#include "cleanup/job.h"

/* Fills every field of JOB from row ROW of RES by column name (the columns
 * of cleanup.jobs; missing ones read as ""/-1), except json, which stays
 * NULL. */
void job_fields_from_row(cleanup_job *job, const PGresult *res, int row);

#endif
