/* One definition of a job's progress, pace and ETA, of the name a job's
 * connection carries, and of the busy wording, for the CLI (cmd_job_step.c)
 * and the console (panel_jobs.c, panel_detail.c, actions.c) alike, so that
 * the two front ends cannot disagree again (issue 11, bug 9). Pure.
 *
 * Progress: rows SETTLED of the rows in scope when the job was sealed
 * (total_estimate). A row is settled once it was deleted, found moved or
 * absent, or kept (a seen row of a prune); a retained row is not: it is
 * visited again in a later pass, so counting it would count it twice.
 *
 * Pace: settled rows per second over the steps of a recent window (the
 * monitor uses the last 60 s, at most 2000 steps): their settled rows
 * divided by the time from the first one's start to the last one's end.
 * It needs at least two steps (one step after an idle spell says nothing
 * about a pace) and is never capped by a step count (issue 11, bug 2).
 *
 * ETA: the rows not yet settled over the pace, and only while a runner
 * holds the job: without one nobody is working on it, and a time would be
 * a lie ("no runner" instead).
 */
#ifndef CLEANUP_TUI_PROGRESS_H
#define CLEANUP_TUI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/job.h"

/* Rows settled so far: deleted + moved + absent + kept. */
int64_t tui_progress_done(const cleanup_job *j);

/* Rows in scope: the job's total_estimate, -1 when unknown. A completed
 * job's total is what it settled (at least 1), so its bar is full. */
int64_t tui_progress_total(const cleanup_job *j);

/* The steps of a pace window. */
typedef struct tui_pace_window {
	int steps;            /* steps in the window */
	int64_t rows;         /* their settled rows */
	double first_start;   /* seconds (any epoch): start of the oldest */
	double last_end;      /* end (start + duration) of the newest */
} tui_pace_window;

/* Settled rows per second over W; -1 when W has fewer than two steps or
 * no length. */
double tui_pace_rows_per_s(const tui_pace_window *w);

/* Seconds until J is settled at ROWS_PER_S; -1 when unknown (no pace, no
 * total, a phase that is not draining or finalizing). 0 when nothing is
 * left. */
double tui_eta_s(const cleanup_job *j, double rows_per_s);

/* What the ETA column shows: "-" (not draining), "no runner" (RUNNER
 * false), "?" (unknown pace or total), else the time ("37s", "2m05s",
 * "1h10m"). */
const char *tui_eta_text(char *buf, size_t len, const cleanup_job *j, double rows_per_s, bool runner);

/* A duration as the console writes it: "37s", "2m05s", "1h10m", ">99h";
 * "-" when negative. */
const char *tui_duration_text(char *buf, size_t len, double seconds);

/* The application_name of a connection acting on job JOB_ID from ORIGIN
 * ("run", "step", "console", ...): "cleanupctl:job:<id>:<origin>", the
 * form the locks panel and the runner column read (cleanup_locks_job_id).
 * JOB_ID < 0: "cleanupctl:<origin>". */
void tui_job_app_name(char *buf, size_t len, int64_t job_id, const char *origin);

/* The words that start every busy answer, in both front ends. */
#define TUI_BUSY_PREFIX "busy, retry later: "

#endif
