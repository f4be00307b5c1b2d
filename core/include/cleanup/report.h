/* Reports for humans and scripts: status, jobs, a job's detail. The JSON
 * forms are built by PostgreSQL (sql/functions/040_report.sql); the row
 * forms feed the CLI's tables and the console's panels.
 */
#ifndef CLEANUP_REPORT_H
#define CLEANUP_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

typedef struct cleanup_server_row {
	int64_t id;
	char name[CLEANUP_NAME_SIZE];  /* whole: up to 200 characters */
	char admission[12];   /* open, draining, missing */
	int64_t job_id;       /* -1 when no unfinished job */
	int64_t item_count;
	int32_t library_count;
} cleanup_server_row;

typedef struct cleanup_library_row {
	int64_t id;
	int64_t server_id;
	char name[CLEANUP_NAME_SIZE];  /* whole: up to 200 characters */
	char admission[12];
	int64_t job_id;       /* -1 when none */
	int64_t item_count;   /* from cleanup.library_stats, never COUNT(*) */
} cleanup_library_row;

/* Servers and libraries at a glance. Arrays are malloc'd: free() them. */
int cleanup_status_rows(cleanup_server_row **servers, size_t *nservers,
                        cleanup_library_row **libraries, size_t *nlibraries,
                        cleanup_engine *engine, cleanup_error *err);

/* JSON documents; *OUT is malloc'd, free() it. */
int cleanup_status_json(char **out, cleanup_engine *engine, cleanup_error *err);
int cleanup_jobs_json(char **out, cleanup_engine *engine, int limit, cleanup_error *err);
int cleanup_job_show_json(char **out, cleanup_engine *engine, int64_t job_id, int steps,
                          cleanup_error *err);

#endif
