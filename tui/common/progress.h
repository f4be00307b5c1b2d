/* One definition of a job's progress, pace and ETA, of the name a job's
 * connection carries, for the CLI (cmd_job_step.c)
 * and the console (panel_jobs.c, panel_detail.c, actions.c) alike, so that
 * the two front ends cannot disagree again. Pure.
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
 * about a pace) and is never capped by a step count.
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
#include "cleanup/monitor.h"

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

/* ---- one progress line for both front ends ---------------------------
 *
 * The console's monitor reads a job's pace window with SQL (mon_jobs.sql);
 * `job run` builds the same window from the steps it commits
 * (tui_step_window below). Both hand a cleanup_mon_job to the functions
 * here, so that they print the same progress, pace and ETA for the same
 * job state at the same moment (test_console_monitor's
 * test_cli_and_console_print_the_same_progress_and_eta). */

/* The pace of V in settled rows per second: tui_pace_rows_per_s of its
 * window, which ends now while a runner holds V (the newest step's end plus
 * its age), so a runner that stopped getting anywhere slows the pace down
 * instead of keeping the pace of its last good steps. -1 when unknown. */
double tui_job_pace(const cleanup_mon_job *v);

/* The ETA of V as tui_eta_text says it, or "stalled" when a runner holds
 * V but has not committed a step for 30 s. */
const char *tui_job_eta(char *buf, size_t len, const cleanup_mon_job *v);

/* F3: who runs J now and how it goes, from the live fields
 * of cleanup_jobs_list() / cleanup_job_get(), for status, jobs and job
 * show: "runner local:4411 (cleanupctl:job:7:run), last step 2s ago, pace
 * 129 rows/s, ETA 8s", or "NO RUNNER: library 1 closed to writers for
 * 15m10s, last step 3m02s ago (cleanupctl job run 7)" (host and
 * application sanitized). "" for a job that is not draining or
 * finalizing. Returns BUF. */
const char *tui_job_live_text(char *buf, size_t len, const cleanup_job *j);

/* "1,234 of 20,000 (6.2%), 349/s, ETA 43s": rows settled of the rows in
 * scope, the pace ("?/s" when unknown) and, while V drains or finalizes,
 * the ETA ("no runner", "stalled", "?" or a time). */
const char *tui_job_progress_line(char *buf, size_t len, const cleanup_mon_job *v);

/* The steps a runner committed, as (start, end, settled rows) in epoch
 * seconds: the newest TUI_STEP_WINDOW_MAX. */
#define TUI_STEP_WINDOW_MAX 2000
typedef struct tui_step_window {
	double start[TUI_STEP_WINDOW_MAX], end[TUI_STEP_WINDOW_MAX];
	int64_t rows[TUI_STEP_WINDOW_MAX];
	int n, first;  /* oldest at first, n of them */
} tui_step_window;

/* Adds a committed step (oldest first; the oldest goes when full). */
void tui_step_window_add(tui_step_window *w, double start, double end, int64_t rows);

/* Fills V's pace window and step age as mon_jobs.sql does: the steps of W
 * started in the 60 s before NOW (epoch seconds), their settled rows, the
 * first one's start and the last one's end; last_step_age_s from the
 * newest step's end to NOW. RUNNER_PID (0: none) is who runs the job. The
 * job itself (V->job) is the caller's. */
void tui_step_window_view(cleanup_mon_job *v, const tui_step_window *w, double now, int runner_pid);

/* The throttle of a run (job run --max-rate, the console's :throttle): a
 * step has just ended at NOW (monotonic seconds); the next may start one
 * interval (1 / RATE s) after this one's slot, *NEXT_AT (0 before the
 * first step; updated). Returns the seconds to wait (0: go on). RATE <= 0:
 * no throttle (*NEXT_AT reset). The caller sleeps, in naps short enough to
 * see a stop. */
double tui_throttle_wait(double *next_at, double now, double rate);

/* `job run`'s progress line for JOB after the steps of W at NOW (epoch
 * seconds), run by RUNNER_PID: tui_step_window_view, then
 * tui_job_progress_line. */
const char *tui_run_progress_text(char *buf, size_t len, const cleanup_job *job, const tui_step_window *w,
                                  double now, int runner_pid);

#endif
