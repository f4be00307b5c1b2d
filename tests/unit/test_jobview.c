/* The jobs and libraries panels' filter and sort (tui/console/jobview.h)
 * and the libraries' count words (seed 002). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
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
	int64_t by_phase[] = {6, 5, 4, 2, 3}, by_progress[] = {4, 2, 5, 6, 3}, newest[] = {6, 5, 4, 3, 2},
	        unfinished[] = {6, 5, 4, 2, 3};

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
	/* the default: unfinished above finished, newest first in
	 * each; completed job 3 goes below paused job 2 */
	assert_int_equal(JOB_SORT_UNFINISHED, 0);
	n = tui_jobs_view(v, 5, j, 5, NULL, JOB_SORT_UNFINISHED);
	for (i = 0; i < n; i++)
		assert_int_equal(j[v[i]].job.id, unfinished[i]);
	assert_string_equal(tui_job_sort_name(JOB_SORT_UNFINISHED), "unfinished");
}

static cleanup_mon_library lib(int64_t id, int64_t srv, const char *name, const char *state, const char *reason,
                               int64_t items)
{
	cleanup_mon_library l;

	memset(&l, 0, sizeof l);
	l.row.id = id;
	l.row.server_id = srv;
	snprintf(l.row.name, sizeof l.row.name, "%s", name);
	snprintf(l.row.admission, sizeof l.row.admission, "open");
	snprintf(l.count_state, sizeof l.count_state, "%s", state);
	snprintf(l.count_reason, sizeof l.count_reason, "%s", reason);
	l.row.item_count = items;
	l.row.job_id = -1;
	return l;
}

static const char *num(char *buf, size_t len, int64_t n)
{
	snprintf(buf, len, "%" PRId64, n);
	return buf;
}

static void libs_fixture(cleanup_mon_library *l)
{
	l[0] = lib(1, 1, "Movies", "unwatched", "not watched: cleanupctl counts --library ID starts a watch", 300);
	l[1] = lib(2, 1, "Shows", "fresh", "", 1200);
	l[2] = lib(3, 2, "anime", "dirty", "stale: 2 page(s) changed since the count was published (revision 4, now 6)", 80);
	l[3] = lib(4, 2, "Music", "withheld", "building: no page counted yet", -1);
	l[4] = lib(5, 2, "Books", "withheld", "restart required: truncate of inventory.items", -1);
	l[5] = lib(6, 3, "Photos", "withheld", "capacity: all 32 registry slots are in use", -1);
	l[6] = lib(7, 3, "Old", "expired", "expired: not confirmed by a visit since 2026-12-01 10:00:00Z", 40);
}

/* Seed 002: each cache state reads as its own word, and a count that is not
 * the library's now says so ("~") or is not shown ("-"). */
static void test_count_words_say_the_cache_state(void **state)
{
	cleanup_mon_library l[7];
	static const char *const words[] = {"counter", "fresh", "~stale", "building", "restart", "withheld: capacity",
	                                    "expired"};
	static const char *const items[] = {"300", "1200", "~80", "-", "-", "-", "~40"};
	char buf[64];
	int i;

	(void)state;
	libs_fixture(l);
	for (i = 0; i < 7; i++) {
		assert_string_equal(tui_count_state_text(buf, sizeof buf, &l[i]), words[i]);
		assert_string_equal(tui_count_items_text(buf, sizeof buf, &l[i], num), items[i]);
	}
	assert_int_equal(tui_count_kind_of("withheld", "busy: writes in flight"), COUNT_WITHHELD);
	assert_int_equal(tui_count_kind_of("somethingnew", ""), COUNT_UNKNOWN);
}

/* The libraries list filters on every word (id, srv N, name, admission,
 * count word, job) and sorts by server, name, items and count state. */
static void test_libraries_filter_and_sort(void **state)
{
	cleanup_mon_library l[7];
	size_t v[7], n;

	(void)state;
	libs_fixture(l);
	/* words, not a phrase: "srv 2" is "srv" and "2" anywhere (library 2
	 * on server 1 too) */
	n = tui_libs_view(v, 7, l, 7, "srv 2", LIB_SORT_SERVER);
	assert_int_equal(n, 4);
	assert_int_equal(l[v[0]].row.id, 2);
	assert_int_equal(l[v[1]].row.id, 3);
	assert_int_equal(l[v[3]].row.id, 5);
	n = tui_libs_view(v, 7, l, 7, "STALE", LIB_SORT_SERVER);
	assert_int_equal(n, 1);
	assert_int_equal(l[v[0]].row.id, 3);
	n = tui_libs_view(v, 7, l, 7, "restart books", LIB_SORT_SERVER);
	assert_int_equal(n, 1);
	n = tui_libs_view(v, 7, l, 7, "restart movies", LIB_SORT_SERVER);
	assert_int_equal(n, 0);
	l[0].row.job_id = 12;
	snprintf(l[0].job_phase, sizeof l[0].job_phase, "draining");
	n = tui_libs_view(v, 7, l, 7, "draining", LIB_SORT_SERVER);
	assert_int_equal(n, 1);
	assert_int_equal(l[v[0]].row.id, 1);

	/* The whole name is searched: a name of 200 two-byte characters (400
	 * bytes) whose last word comes after byte 200. */
	{
		cleanup_mon_library big[1];
		size_t o = 0, i;

		big[0] = lib(9, 1, "", "fresh", "", 1);
		for (i = 0; i < 195; i++)
			o += (size_t)snprintf(big[0].row.name + o, sizeof big[0].row.name - o, "\xc3\xa9");
		snprintf(big[0].row.name + o, sizeof big[0].row.name - o, " tail");
		assert_int_equal(tui_libs_view(v, 1, big, 1, "tail", LIB_SORT_SERVER), 1);
	}

	n = tui_libs_view(v, 7, l, 7, "", LIB_SORT_NAME);
	assert_int_equal(n, 7);
	assert_string_equal(l[v[0]].row.name, "anime"); /* case ignored */
	assert_string_equal(l[v[1]].row.name, "Books");
	n = tui_libs_view(v, 7, l, 7, NULL, LIB_SORT_ITEMS);
	assert_int_equal(l[v[0]].row.id, 2); /* 1200 */
	assert_int_equal(l[v[1]].row.id, 1); /* 300 */
	assert_true(l[v[6]].row.item_count < 0);
	n = tui_libs_view(v, 7, l, 7, NULL, LIB_SORT_COUNT);
	assert_int_equal(l[v[0]].row.id, 5); /* restart first */
	assert_int_equal(l[v[1]].row.id, 6); /* withheld */
	assert_int_equal(l[v[2]].row.id, 4); /* building */
	assert_int_equal(l[v[6]].row.id, 1); /* the counter last */
	assert_string_equal(tui_lib_sort_name(LIB_SORT_COUNT), "count state");
}

/* The step history's columns by panel width (fixed
 * columns 83 wide, duration 8, RUNNER 22, a cursor 24 wide). */
static void test_step_history_keeps_cursor_and_runner_tag(void **state)
{
	tui_step_cols c;

	(void)state;
	/* 200 columns: everything */
	c = tui_step_columns(198, 83, 8, 22, 24);
	assert_true(c.dur && c.runner && c.cursor && !c.tag);
	/* the detail zoomed at 120 columns (118 inside the border): the tag
	 * and the whole cursor; the duration gives way */
	c = tui_step_columns(118, 83, 8, 22, 24);
	assert_true(c.cursor && c.tag && !c.runner && !c.dur);
	assert_true(83 + TUI_RUNNER_TAG_W + 1 + 24 <= 118);
	/* room for the duration too */
	c = tui_step_columns(130, 83, 8, 22, 24);
	assert_true(c.cursor && c.tag && c.dur && !c.runner);
	/* a key-range cursor (40 wide) at 118: still whole, with the tag? no
	 * room: the cursor goes, the tag and the duration stay */
	c = tui_step_columns(118, 83, 8, 22, 40);
	assert_true(!c.cursor && c.tag && c.dur);
	/* the detail beside the locks panel at 120 (74 wide): the fixed
	 * columns only */
	c = tui_step_columns(74, 83, 8, 22, 24);
	assert_true(!c.cursor && !c.tag && !c.runner && !c.dur);
	/* never wider than the panel */
	for (int w = 60; w < 220; w++) {
		c = tui_step_columns(w, 83, 8, 22, 24);
		assert_true(83 + (c.dur ? 8 : 0) + (c.runner ? 23 : 0) + (c.tag ? TUI_RUNNER_TAG_W + 1 : 0) +
		                (c.cursor ? 24 : 0) <=
		            (w > 83 ? w : 83));
	}
}

static void test_runner_tag(void **state)
{
	char b[40];

	(void)state;
	assert_string_equal(tui_runner_tag(b, sizeof b, 20327, "cleanupctl:job:4:run"), "run 20327");
	assert_string_equal(tui_runner_tag(b, sizeof b, 20328, "cleanupctl:job:4:console"), "con 20328");
	assert_string_equal(tui_runner_tag(b, sizeof b, 7, "cleanupctl:job:4:worker"), "wkr 7");
	assert_string_equal(tui_runner_tag(b, sizeof b, 9, "psql"), "psq 9");
	assert_string_equal(tui_runner_tag(b, sizeof b, 9, "\x1b[31m"), "?[3 9");
	assert_string_equal(tui_runner_tag(b, sizeof b, 0, "cleanupctl:job:4:run"), "-");
	assert_true(strlen(tui_runner_tag(b, sizeof b, 2147483, "cleanupctl:job:4:run")) <= TUI_RUNNER_TAG_W + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_matches_every_word),
		cmocka_unit_test(test_sort_orders),
		cmocka_unit_test(test_count_words_say_the_cache_state),
		cmocka_unit_test(test_libraries_filter_and_sort),
		cmocka_unit_test(test_step_history_keeps_cursor_and_runner_tag),
		cmocka_unit_test(test_runner_tag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
