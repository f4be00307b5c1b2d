/* Progress, pace and ETA as the CLI and the console both define them
 * (tui/common/progress.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <cmocka.h>
#include "progress.h"
#include "test_main.h"

static cleanup_job draining(int64_t total, int64_t deleted, int64_t kept, int64_t retained)
{
	cleanup_job j;

	memset(&j, 0, sizeof j);
	snprintf(j.phase, sizeof j.phase, "draining");
	snprintf(j.kind, sizeof j.kind, "prune");
	j.total_estimate = total;
	j.deleted = deleted;
	j.kept = kept;
	j.retained = retained;
	j.visited = deleted + retained;
	j.examined = j.visited + kept;
	return j;
}

/* Progress counts settled rows: a retained row is visited again later, so
 * it is not progress (the console counted examined rows, the CLI settled
 * ones: they now agree). */
static void test_progress_counts_settled_rows_not_retained(void **state)
{
	cleanup_job j = draining(1000, 300, 200, 50);

	(void)state;
	j.moved = 10;
	j.absent = 5;
	assert_int_equal(tui_progress_done(&j), 300 + 200 + 10 + 5);
	assert_int_equal(tui_progress_total(&j), 1000);
	snprintf(j.phase, sizeof j.phase, "completed");
	assert_int_equal(tui_progress_total(&j), tui_progress_done(&j));
	j.total_estimate = -1;
	snprintf(j.phase, sizeof j.phase, "draining");
	assert_int_equal(tui_progress_total(&j), -1);
}

/* Pace is not capped by a step count: 1,118 steps of 128 rows in 14 s is
 * about 10,222 rows/s (the old definition, at most 20 steps over at least
 * 1 s, could never exceed 20 steps/s). */
static void test_pace_is_not_capped_by_a_step_count(void **state)
{
	tui_pace_window w = {1118, 1118 * 128, 1000.0, 1014.0};

	(void)state;
	assert_true(tui_pace_rows_per_s(&w) > 10000 && tui_pace_rows_per_s(&w) < 10300);
	/* 499,998 rows, 250,000 settled at that pace: about 24 s, not 1m31s */
	{
		cleanup_job j = draining(499998, 250000, 0, 0);
		double eta = tui_eta_s(&j, tui_pace_rows_per_s(&w));

		assert_true(eta > 23 && eta < 26);
	}
}

/* One step after an idle spell says nothing about a pace. */
static void test_pace_needs_two_steps(void **state)
{
	tui_pace_window one = {1, 128, 1000.0, 1000.004};
	tui_pace_window none = {0, 0, -1, -1};
	tui_pace_window flat = {3, 300, 1000.0, 1000.0};

	(void)state;
	assert_true(tui_pace_rows_per_s(&one) < 0);
	assert_true(tui_pace_rows_per_s(&none) < 0);
	assert_true(tui_pace_rows_per_s(&flat) < 0);
	assert_true(tui_pace_rows_per_s(NULL) < 0);
}

/* Without a runner there is no ETA: "no runner" instead of a time that
 * grows while nobody works (the ETA after kill -9 of the runner). */
static void test_eta_says_no_runner(void **state)
{
	cleanup_job j = draining(20000, 5000, 0, 0);
	char buf[32];

	(void)state;
	assert_string_equal(tui_eta_text(buf, sizeof buf, &j, 1000.0, false), "no runner");
	assert_string_equal(tui_eta_text(buf, sizeof buf, &j, 1000.0, true), "15s");
	assert_string_equal(tui_eta_text(buf, sizeof buf, &j, -1, true), "?");
	assert_string_equal(tui_eta_text(buf, sizeof buf, &j, 10.0, true), "25m00s");
	snprintf(j.phase, sizeof j.phase, "collecting");
	assert_string_equal(tui_eta_text(buf, sizeof buf, &j, 1000.0, true), "-");
	snprintf(j.phase, sizeof j.phase, "finalizing");
	j.deleted = 20000;
	assert_string_equal(tui_eta_text(buf, sizeof buf, &j, -1, true), "0s");
}

static void test_durations(void **state)
{
	char buf[16];

	(void)state;
	assert_string_equal(tui_duration_text(buf, sizeof buf, 0.4), "0s");
	assert_string_equal(tui_duration_text(buf, sizeof buf, 130), "2m10s");
	assert_string_equal(tui_duration_text(buf, sizeof buf, 3 * 3600 + 120), "3h02m");
	assert_string_equal(tui_duration_text(buf, sizeof buf, 1e9), ">99h");
	assert_string_equal(tui_duration_text(buf, sizeof buf, -1), "-");
}

/* The job connection's name, built in one place. */
static void test_job_app_name(void **state)
{
	char buf[64];

	(void)state;
	tui_job_app_name(buf, sizeof buf, 12, "run");
	assert_string_equal(buf, "cleanupctl:job:12:run");
	tui_job_app_name(buf, sizeof buf, -1, "console");
	assert_string_equal(buf, "cleanupctl:console");
}

/* The window `job run` builds from its steps (tui_step_window) is the
 * monitor's: the steps started in the 60 s before now, their settled rows,
 * the first start and the last end; a finished job has none (mon_jobs.sql
 * reads a window for draining and finalizing jobs only). */
static void test_run_window_is_the_monitors(void **state)
{
	tui_step_window *w = calloc(1, sizeof *w);
	cleanup_mon_job v;
	int i;

	(void)state;
	assert_non_null(w);
	memset(&v, 0, sizeof v);
	v.job = draining(3000, 0, 0, 0);
	tui_step_window_add(w, 900.0, 900.1, 128); /* 100 s before now: outside */
	for (i = 0; i < 10; i++)
		tui_step_window_add(w, 990.0 + i, 990.0 + i + 0.1, 100);
	tui_step_window_view(&v, w, 1000.0, 77);
	assert_int_equal(v.window_steps, 10);
	assert_int_equal(v.window_rows, 1000);
	assert_true(v.window_first_start == 990.0);
	assert_true(v.window_last_end > 999.09 && v.window_last_end < 999.11);
	assert_true(v.last_step_age_s > 0.89 && v.last_step_age_s < 0.91);
	assert_int_equal(v.runner_pid, 77);
	/* the pace runs to now while a runner holds the job: 1000 rows in 10 s */
	assert_true(tui_job_pace(&v) > 99.99 && tui_job_pace(&v) < 100.01);

	snprintf(v.job.phase, sizeof v.job.phase, "completed");
	tui_step_window_view(&v, w, 1000.0, 77);
	assert_int_equal(v.window_steps, 0);
	assert_true(tui_job_pace(&v) < 0);

	/* full: the oldest go */
	snprintf(v.job.phase, sizeof v.job.phase, "draining");
	for (i = 0; i < TUI_STEP_WINDOW_MAX + 5; i++)
		tui_step_window_add(w, 2000.0 + i * 0.01, 2000.0 + i * 0.01 + 0.005, 1);
	assert_int_equal(w->n, TUI_STEP_WINDOW_MAX);
	tui_step_window_view(&v, w, 2000.0 + TUI_STEP_WINDOW_MAX * 0.01, 0);
	assert_int_equal(v.window_steps, TUI_STEP_WINDOW_MAX);
	assert_true(v.window_first_start > 2000.04 && v.window_first_start < 2000.06);
	free(w);
}

/* The one progress line: settled of in scope with its share, the pace, and
 * while draining the ETA (a time with a runner, "no runner" without, "?"
 * with no pace); no ETA once finished. */
static void test_progress_line(void **state)
{
	tui_step_window *w = calloc(1, sizeof *w);
	cleanup_job j = draining(3000, 1000, 200, 0);
	char buf[160];
	int i;

	(void)state;
	assert_non_null(w);
	for (i = 0; i < 10; i++)
		tui_step_window_add(w, 990.0 + i, 990.0 + i + 0.5, 60);
	/* 600 rows over 990 .. 1000 (now): 60/s; 1,800 left: 30s */
	assert_string_equal(tui_run_progress_text(buf, sizeof buf, &j, w, 1000.0, 1),
	                    "1,200 of 3,000 (40.0%), 60/s, ETA 30s");
	assert_string_equal(tui_run_progress_text(buf, sizeof buf, &j, w, 1000.0, 0),
	                    "1,200 of 3,000 (40.0%), 63/s, ETA no runner"); /* to the last end: 600 / 9.5 s */
	assert_string_equal(tui_run_progress_text(buf, sizeof buf, &j, w, 1045.0, 1),
	                    "1,200 of 3,000 (40.0%), 11/s, ETA stalled");
	j.total_estimate = -1;
	assert_string_equal(tui_run_progress_text(buf, sizeof buf, &j, w, 1000.0, 1), "1,200 of ?, 60/s, ETA ?");
	j = draining(3000, 2800, 200, 0);
	snprintf(j.phase, sizeof j.phase, "completed");
	assert_string_equal(tui_run_progress_text(buf, sizeof buf, &j, w, 1000.0, 1), "3,000 of 3,000 (100.0%), ?/s");
	free(w);
}

/* The throttle both front ends use: one interval after each step's slot; a
 * late step does not earn a burst; no rate, no wait. */
static void test_throttle_waits_an_interval_after_each_slot(void **state)
{
	double next = 0;

	(void)state;
	assert_true(tui_throttle_wait(&next, 10.0, 2) == 0.5);
	assert_true(next == 10.5);
	assert_true(tui_throttle_wait(&next, 10.6, 2) > 0.499 && next > 11.099 && next < 11.101); /* late: from now */
	assert_true(tui_throttle_wait(&next, 10.7, 2) > 0.899); /* early: after the slot */
	assert_true(tui_throttle_wait(&next, 10.8, 0) == 0);
	assert_true(next == 0);
}

/* F3: the runner line of status, jobs and job show. */
static void test_live_text(void **state)
{
	cleanup_job j = draining(2000, 1000, 0, 0);
	char buf[512];

	(void)state;
	snprintf(j.kind, sizeof j.kind, "prune");
	j.id = 7;
	j.library_id = 11;
	j.live_runner_pid = 0;
	j.live_closed_s = 902;
	j.live_last_step_age_s = 182;
	j.live_pace = -1;
	j.live_eta_s = -1;
	assert_string_equal(tui_job_live_text(buf, sizeof buf, &j),
	                    "NO RUNNER: library 11 closed to writers for 15m02s, last step 3m02s ago (cleanupctl job run 7)");
	j.live_last_step_age_s = -1;
	assert_non_null(strstr(tui_job_live_text(buf, sizeof buf, &j), ", no step yet (cleanupctl job run 7)"));
	j.live_runner_pid = 4411;
	snprintf(j.live_runner_host, sizeof j.live_runner_host, "db-ops-1");
	snprintf(j.live_runner_app, sizeof j.live_runner_app, "cleanupctl:job:7:run\x1b[2J");
	j.live_last_step_age_s = 1.2;
	j.live_pace = 129.4;
	j.live_eta_s = 7.7;
	/* the application comes from any session: sanitized */
	assert_string_equal(tui_job_live_text(buf, sizeof buf, &j),
	                    "runner db-ops-1:4411 (cleanupctl:job:7:run?[2J), last step 1s ago, pace 129 rows/s, ETA 8s");
	j.live_pace = -1;
	j.live_eta_s = -1;
	assert_string_equal(tui_job_live_text(buf, sizeof buf, &j),
	                    "runner db-ops-1:4411 (cleanupctl:job:7:run?[2J), last step 1s ago, ETA ?");
	snprintf(j.phase, sizeof j.phase, "collecting");
	assert_string_equal(tui_job_live_text(buf, sizeof buf, &j), "");
}

/* The ETA on the demo's own data is true. The steps of a
 * scenario's job as `job run --max-rate 1` ran them on a fresh demo
 * library (1,200 items, the manifest every fourth ID, one dependent
 * record per item): start (s from the first), duration (ms), rows settled
 * (claim steps settle none). After every step from the second on, the ETA
 * (the pace window running to now, half a step after that step's end) is
 * within twice, plus 3 s, of the time the job really took from there
 * (20.93 s in all; the demo once showed "ETA 8m45s" on its 20,000-item
 * library). Measured: 22.6 s for 19.0 after step 2, 35.7 for 17.9 after
 * step 3 (the two claim steps settle no row), 16.5 for 14.6 after step 6,
 * 3.5 for 7.0 after step 13 (two claim steps to come): a pace of settled
 * rows cannot see steps that settle none. */
static void test_eta_is_true_on_the_demos_steps(void **state)
{
	static const double start[] = {0.000, 1.395, 2.458, 3.519, 4.624, 5.724, 6.835, 7.923, 9.023, 10.115,
	                               11.218, 12.337, 13.384, 14.471, 15.517, 16.547, 17.610, 18.716, 19.835, 20.887};
	static const int ms[] = {282, 6, 37, 56, 80, 73, 63, 66, 63, 63, 75, 20, 46, 2, 10, 36, 65, 72, 23, 39};
	static const int rows[] = {93, 0, 0, 47, 102, 89, 89, 88, 92, 86, 92, 88, 93, 0, 0, 55, 94, 80, 12, 0};
	const int n = (int)(sizeof rows / sizeof rows[0]);
	const double t0 = 5000.0, done_at = t0 + 20.887 + 0.039;
	tui_step_window *w = calloc(1, sizeof *w);
	cleanup_mon_job v;
	int64_t settled = 0;
	int k;

	(void)state;
	assert_non_null(w);
	for (k = 0; k < n; k++) {
		double end = t0 + start[k] + ms[k] / 1000.0, now = end + 0.5, eta, real;

		tui_step_window_add(w, t0 + start[k], end, rows[k]);
		settled += rows[k];
		if (k == n - 1 || k < 1)
			continue;
		memset(&v, 0, sizeof v);
		v.job = draining(1200, settled * 3 / 4, settled - settled * 3 / 4, 0);
		tui_step_window_view(&v, w, now, 4242);
		eta = tui_eta_s(&v.job, tui_job_pace(&v));
		real = done_at - now;
		if (!(eta >= 0 && eta <= real * 2.0 + 3.0 && real <= eta * 2.0 + 3.0))
			fail_msg("after step %d: ETA %.1f s, the job really took %.1f s more", k + 1, eta, real);
	}
	assert_int_equal(settled, 1200);
	free(w);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_progress_counts_settled_rows_not_retained),
          cmocka_unit_test(test_pace_is_not_capped_by_a_step_count),
          cmocka_unit_test(test_pace_needs_two_steps),
          cmocka_unit_test(test_eta_says_no_runner),
          cmocka_unit_test(test_durations),
          cmocka_unit_test(test_job_app_name),
          cmocka_unit_test(test_run_window_is_the_monitors),
          cmocka_unit_test(test_progress_line),
          cmocka_unit_test(test_throttle_waits_an_interval_after_each_slot),
          cmocka_unit_test(test_live_text),
          cmocka_unit_test(test_eta_is_true_on_the_demos_steps),)
