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

int main(void)
{
	const struct CMUnitTest tests[] = {
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
