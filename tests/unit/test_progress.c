/* Progress, pace and ETA as the CLI and the console both define them
 * (tui/progress.h; issue 11, bugs 2 and 9). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_progress_counts_settled_rows_not_retained),
		cmocka_unit_test(test_pace_is_not_capped_by_a_step_count),
		cmocka_unit_test(test_pace_needs_two_steps),
		cmocka_unit_test(test_eta_says_no_runner),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_job_app_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
