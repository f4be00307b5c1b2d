/* The jobs panel's filter and sort (tui/jobview.h; issue 11, item 13). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "jobview.h"

static cleanup_mon_job job(int64_t id, const char *kind, int64_t lib, const char *name, const char *phase,
                           int64_t total, int64_t deleted)
{
	cleanup_mon_job v;

	memset(&v, 0, sizeof v);
	v.job.id = id;
	snprintf(v.job.kind, sizeof v.job.kind, "%s", kind);
	v.job.library_id = lib;
	v.job.server_id = lib;
	snprintf(v.job.target_name, sizeof v.job.target_name, "%s", name);
	snprintf(v.job.phase, sizeof v.job.phase, "%s", phase);
	v.job.total_estimate = total;
	v.job.deleted = deleted;
	return v;
}

static void fixture(cleanup_mon_job *j)
{
	j[0] = job(6, "prune", 7, "Movies", "draining", 100, 90);
	j[1] = job(5, "remove-server", 2, "server-2", "draining", 1000, 10);
	j[2] = job(4, "prune", 4, "Shows", "collecting", -1, 0);
	j[3] = job(3, "prune", 1, "Movies", "completed", 50, 50);
	j[4] = job(2, "remove-library", 9, "Music", "paused", -1, 0);
}

/* Every word must match (id, kind, target, phase), ignoring case. */
static void test_filter_matches_every_word(void **state)
{
	cleanup_mon_job j[5];
	size_t v[5], n;

	(void)state;
	fixture(j);
	n = tui_jobs_view(v, 5, j, 5, "movies", JOB_SORT_NEWEST);
	assert_int_equal(n, 2);
	assert_int_equal(v[0], 0);
	assert_int_equal(v[1], 3);
	n = tui_jobs_view(v, 5, j, 5, "MOVIES drain", JOB_SORT_NEWEST);
	assert_int_equal(n, 1);
	assert_int_equal(v[0], 0);
	n = tui_jobs_view(v, 5, j, 5, "srv 2", JOB_SORT_NEWEST);
	assert_int_equal(n, 1);
	assert_int_equal(j[v[0]].job.id, 5);
	assert_int_equal(tui_jobs_view(v, 5, j, 5, "nothing-like-this", JOB_SORT_NEWEST), 0);
	assert_int_equal(tui_jobs_view(v, 5, j, 5, "", JOB_SORT_NEWEST), 5);
	assert_int_equal(tui_jobs_view(v, 5, j, 5, NULL, JOB_SORT_NEWEST), 5);
	assert_int_equal(tui_jobs_view(v, 2, j, 5, NULL, JOB_SORT_NEWEST), 2); /* bounded by MAX */
}

/* Phase: unfinished first (finalizing, draining, collecting, paused), then
 * finished; progress: furthest from done first; ties newest first. */
static void test_sort_orders(void **state)
{
	cleanup_mon_job j[5];
	size_t v[5], n, i;
	int64_t by_phase[] = {6, 5, 4, 2, 3}, by_progress[] = {4, 2, 5, 6, 3}, newest[] = {6, 5, 4, 3, 2};

	(void)state;
	fixture(j);
	n = tui_jobs_view(v, 5, j, 5, NULL, JOB_SORT_PHASE);
	for (i = 0; i < n; i++)
		assert_int_equal(j[v[i]].job.id, by_phase[i]);
	n = tui_jobs_view(v, 5, j, 5, NULL, JOB_SORT_PROGRESS);
	for (i = 0; i < n; i++)
		assert_int_equal(j[v[i]].job.id, by_progress[i]);
	n = tui_jobs_view(v, 5, j, 5, NULL, JOB_SORT_NEWEST);
	for (i = 0; i < n; i++)
		assert_int_equal(j[v[i]].job.id, newest[i]);
	assert_string_equal(tui_job_sort_name(JOB_SORT_PROGRESS), "progress");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_matches_every_word),
		cmocka_unit_test(test_sort_orders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
