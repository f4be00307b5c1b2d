/* The jobs panel's view of the snapshot: which jobs it lists and in what
 * order, after the operator's filter (`/`) and sort (`o`) (issue 11, item
 * 13). Pure: indices into the snapshot's array, no curses.
 */
#ifndef CLEANUP_TUI_JOBVIEW_H
#define CLEANUP_TUI_JOBVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "cleanup/monitor.h"

typedef enum tui_job_sort {
	JOB_SORT_NEWEST = 0,  /* job id, newest first (the monitor's order) */
	JOB_SORT_PHASE,       /* unfinished first (finalizing, draining, collecting, paused), then finished */
	JOB_SORT_PROGRESS,    /* least settled share first: what is furthest from done */
	JOB_SORT__COUNT
} tui_job_sort;

/* "newest", "phase", "progress". */
const char *tui_job_sort_name(tui_job_sort s);

/* True when job V matches FILTER: every space-separated word of FILTER is
 * found, ignoring ASCII case, in the job's id, kind, target ("lib 4" /
 * "srv 2" and its name), phase, or runner application. NULL or "" matches
 * every job. */
bool tui_job_matches(const cleanup_mon_job *v, const char *filter);

/* Fills OUT (room for MAX) with the indices of the jobs of JOBS (N) that
 * match FILTER, ordered by SORT (ties: newest first). Returns their
 * number. */
size_t tui_jobs_view(size_t *out, size_t max, const cleanup_mon_job *jobs, size_t n, const char *filter,
                     tui_job_sort sort);

#endif
