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

/* The step history's columns at panel width W (the evidence of a
 * resume keeps its columns), CURSOR_W the widest whole
 * cursor cell on screen ("  LIB: FROM > TO"), END_W the widest cursor
 * end ("  > TO"). Everything when it fits; else, in this order, the
 * full RUNNER column becomes a short runner tag, the duration goes, the
 * whole cursor becomes its end, the counters CLM, DEP, KEPT, RET, ABS
 * and MOV go, ACTION narrows to 8, LOCK ms goes, then the cursor's end
 * and the tag; STEP, ACTION, VIS, DEL, AT and GAP always stay. The
 * duration comes back when there is room for it after all. WIDTH is
 * the row's width (at most W unless even the columns that stay do not
 * fit). Pure. */
#define TUI_RUNNER_TAG_W 10
#define TUI_STEP_RUNNER_W 22
#define TUI_STEP_COUNTERS 8 /* VIS DEL MOV ABS RET KEPT DEP CLM */
typedef struct tui_step_cols {
	bool dur, cursor, runner, tag;
	bool cursor_end;      /* the cursor's end only (with CURSOR false) */
	bool lock;            /* LOCK ms */
	int action_w;         /* 12, or 8 */
	unsigned counters;    /* bit k: counter k shown */
	int width;
} tui_step_cols;
tui_step_cols tui_step_columns(int w, int cursor_w, int end_w);
/* The width of the row C describes (CURSOR_W, END_W as above). */
int tui_step_cols_width(const tui_step_cols *c, int cursor_w, int end_w);

/* Why step S did not resume where the step before it (PREV, NULL when
 * it is not known) ended: a gap in time of at least THRESHOLD_S
 * (S->gap_s), another runner (their runner tags differ), or a cursor
 * that did not continue from PREV's end (same library and pass, both
 * cursors known). 0 when it did resume. Pure. */
#define TUI_GAP_TIME 1u
#define TUI_GAP_RUNNER 2u
#define TUI_GAP_CURSOR 4u
#define TUI_GAP_THRESHOLD_S 2.0 /* as the GAP column: a stop, a dead runner */
unsigned tui_step_gap(const cleanup_mon_step *prev, const cleanup_mon_step *s, double threshold_s);

/* The step before S in STEPS (N, newest first, as the monitor reads a
 * page), NULL when the page does not have it. */
const cleanup_mon_step *tui_step_prev(const cleanup_mon_step *steps, size_t n, const cleanup_mon_step *s);

/* What the gap WHY before S was, for the footer: "runner changed: run
 * 20327 -> wkr 4411 after 2m13s", "stopped 2m13s, same runner run
 * 20327", "cursor did not continue: step 122 ended at 4,512, step 123
 * began at 4,100 (library 4)", joined with "; ". Into BUF. Pure. */
const char *tui_step_gap_text(char *buf, size_t len, const cleanup_mon_step *prev, const cleanup_mon_step *s,
                              unsigned why);

/* The next gap from step FROM_NO in STEPS (N, newest first): DIR < 0
 * the nearest older step (lower number) that is a gap, DIR > 0 the
 * nearest newer one; FROM_NO itself never. Returns its index in STEPS
 * (*WHY its reasons), -1 when the page has none that way. Pure. */
int tui_step_find_gap(const cleanup_mon_step *steps, size_t n, int from_no, int dir, double threshold_s,
                      unsigned *why);

/* A step's short runner tag: the verb of its application_name
 * (cleanupctl:job:4:run -> "run", :console -> "con", a worker's
 * "wkr"; another application: its first 3 characters) and the backend
 * pid: "run 20327"; "-" when the step has no runner recorded. Pure. */
const char *tui_runner_tag(char *buf, size_t len, int pid, const char *app);

/* The row to select in a refreshed list whose rows' keys (a backend's pid)
 * are KEYS (N rows): the row holding KEY, the one selected before; when no
 * row holds it (or KEY is 0: none), ROW, the index selected before,
 * clamped to the list (0 when it is empty). Pure. */
int tui_follow_row(const int *keys, int n, int key, int row);

#endif
