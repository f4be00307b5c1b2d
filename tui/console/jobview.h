/* The jobs and libraries panels' views of the snapshot: which rows they
 * list and in what order, after the operator's filter (`/`) and sort (`o`)
 * and how a library's count and its cache state read
 * (seed 002). Pure: indices into the snapshot's arrays, no curses.
 */
#ifndef CLEANUP_TUI_JOBVIEW_H
#define CLEANUP_TUI_JOBVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "cleanup/monitor.h"

typedef enum tui_job_sort {
	JOB_SORT_UNFINISHED = 0, /* the default: unfinished jobs above finished ones, newest first in each */
	JOB_SORT_PHASE,       /* unfinished first (finalizing, draining, collecting, paused), then finished */
	JOB_SORT_PROGRESS,    /* least settled share first: what is furthest from done */
	JOB_SORT_NEWEST,      /* job id, newest first (the monitor's order) */
	JOB_SORT__COUNT
} tui_job_sort;

/* "unfinished", "phase", "progress", "newest". */
const char *tui_job_sort_name(tui_job_sort s);

/* True when job V matches FILTER: every space-separated word of FILTER is
 * found, ignoring ASCII case, in the job's id, kind, target ("lib 4" /
 * "srv 2" and its name), phase, or runner application. NULL or "" matches
 * every job. */
bool tui_job_matches(const cleanup_mon_job *v, const char *filter);

/* True when every space-separated word of FILTER occurs in TEXT, ASCII
 * case ignored (the lists' and the log's "/" filter: "srv 2" matches
 * library 2 of server 2). Pure. */
bool tui_words_in(const char *text, const char *filter);

/* Fills OUT (room for MAX) with the indices of the jobs of JOBS (N) that
 * match FILTER, ordered by SORT (ties: newest first). Returns their
 * number. */
size_t tui_jobs_view(size_t *out, size_t max, const cleanup_mon_job *jobs, size_t n, const char *filter,
                     tui_job_sort sort);

typedef enum tui_lib_sort {
	LIB_SORT_SERVER = 0,  /* server, then library id (the monitor's order) */
	LIB_SORT_NAME,        /* name (ASCII case ignored), then id */
	LIB_SORT_ITEMS,       /* most items first; unknown counts last */
	LIB_SORT_COUNT,       /* count state, worst first: restart, withheld, building, expired, stale, fresh, counter */
	LIB_SORT__COUNT
} tui_lib_sort;

/* "server", "name", "items", "count state". */
const char *tui_lib_sort_name(tui_lib_sort s);

/* How a library's count reads, from the monitor's count_state and
 * count_reason (cleanup.count_report, docs/count-cache.md). */
typedef enum tui_count_kind {
	COUNT_COUNTER = 0,    /* unwatched: the statement-trigger counter */
	COUNT_FRESH,
	COUNT_STALE,          /* dirty: changed since published; the count shown is the last published */
	COUNT_EXPIRED,        /* not confirmed by a visit in time; last published */
	COUNT_BUILDING,       /* withheld: pages still being counted */
	COUNT_RESTART,        /* withheld: restart required (reason says why) */
	COUNT_WITHHELD,       /* withheld for another reason (capacity, busy) */
	COUNT_UNKNOWN         /* a state this console does not know */
} tui_count_kind;

tui_count_kind tui_count_kind_of(const char *state, const char *reason);

/* The COUNT column's word for L: "counter", "fresh", "~stale", "expired",
 * "building", "restart", "withheld: capacity" (the reason's first word),
 * into BUF. */
const char *tui_count_state_text(char *buf, size_t len, const cleanup_mon_library *l);

/* The ITEMS column for L: the count ("~" in front when stale or expired),
 * "-" when withheld; NUM formats a number (the console's compact form). */
const char *tui_count_items_text(char *buf, size_t len, const cleanup_mon_library *l,
                                 const char *(*num)(char *, size_t, int64_t));

/* True when library L matches FILTER: every space-separated word is found,
 * ignoring ASCII case, in its id, "srv <server id>", name, admission, count
 * state word, or its active job's id, kind and phase. NULL or "" matches
 * every library. */
bool tui_lib_matches(const cleanup_mon_library *l, const char *filter);

/* As tui_jobs_view for the libraries (ties: server, then id). */
size_t tui_libs_view(size_t *out, size_t max, const cleanup_mon_library *libs, size_t n, const char *filter,
                     tui_lib_sort sort);

/* The step history's columns at panel width W (the
 * evidence of a resume keeps its columns). FIXED_W is the width of the
 * columns always shown (step .. gap) without the duration, CURSOR_W the
 * widest cursor cell on screen. The full RUNNER column (RUNNER_W + 1)
 * when everything fits; else a short runner tag (TUI_RUNNER_TAG_W + 1)
 * and the whole cursor, the duration (DUR_W) giving way first; the
 * cursor goes last. Pure. */
#define TUI_RUNNER_TAG_W 10
typedef struct tui_step_cols {
	bool dur, cursor, runner, tag;
} tui_step_cols;
tui_step_cols tui_step_columns(int w, int fixed_w, int dur_w, int runner_w, int cursor_w);

/* A step's short runner tag: the verb of its application_name
 * (cleanupctl:job:4:run -> "run", :console -> "con", a worker's
 * "wkr"; another application: its first 3 characters) and the backend
 * pid: "run 20327"; "-" when the step has no runner recorded. Pure. */
const char *tui_runner_tag(char *buf, size_t len, int pid, const char *app);

#endif
