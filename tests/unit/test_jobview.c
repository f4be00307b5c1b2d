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
#include "test_main.h"

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

/* The jobs view of the fixture's five jobs J with FILTER and SORT: the ids
 * of its rows, in order, are WANT (N of them). */
static void expect_jobs(const cleanup_mon_job *j, const char *filter, tui_job_sort sort, const int64_t *want,
                        size_t n)
{
	size_t v[5], i;

	assert_int_equal(tui_jobs_view(v, 5, j, 5, filter, sort), n);
	for (i = 0; i < n; i++)
		assert_int_equal(j[v[i]].job.id, want[i]);
}

/* Every word must match (id, kind, target, phase), ignoring case. */
static void test_filter_matches_every_word(void **state)
{
	static const int64_t movies[] = {6, 3}, draining_movies[] = {6}, server_2[] = {5};
	cleanup_mon_job j[5];
	size_t v[5];

	(void)state;
	fixture(j);
	expect_jobs(j, "movies", JOB_SORT_NEWEST, movies, 2);
	expect_jobs(j, "MOVIES drain", JOB_SORT_NEWEST, draining_movies, 1);
	expect_jobs(j, "srv 2", JOB_SORT_NEWEST, server_2, 1);
	assert_int_equal(tui_jobs_view(v, 5, j, 5, "nothing-like-this", JOB_SORT_NEWEST), 0);
	assert_int_equal(tui_jobs_view(v, 5, j, 5, "", JOB_SORT_NEWEST), 5);
	assert_int_equal(tui_jobs_view(v, 5, j, 5, NULL, JOB_SORT_NEWEST), 5);
	assert_int_equal(tui_jobs_view(v, 2, j, 5, NULL, JOB_SORT_NEWEST), 2); /* bounded by MAX */
}

/* Phase: unfinished first (finalizing, draining, collecting, paused), then
 * finished; progress: furthest from done first; ties newest first. */
static void test_sort_orders(void **state)
{
	static const int64_t by_phase[] = {6, 5, 4, 2, 3}, by_progress[] = {4, 2, 5, 6, 3}, newest[] = {6, 5, 4, 3, 2},
	                     unfinished[] = {6, 5, 4, 2, 3};
	cleanup_mon_job j[5];

	(void)state;
	fixture(j);
	expect_jobs(j, NULL, JOB_SORT_PHASE, by_phase, 5);
	expect_jobs(j, NULL, JOB_SORT_PROGRESS, by_progress, 5);
	expect_jobs(j, NULL, JOB_SORT_NEWEST, newest, 5);
	assert_string_equal(tui_job_sort_name(JOB_SORT_PROGRESS), "progress");
	/* the default: unfinished above finished, newest first in
	 * each; completed job 3 goes below paused job 2 */
	assert_int_equal(JOB_SORT_UNFINISHED, 0);
	expect_jobs(j, NULL, JOB_SORT_UNFINISHED, unfinished, 5);
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

/* The step history's columns by panel width (a whole
 * cursor 24 wide, its end 10: "  > 12,345"). */
static void test_step_history_keeps_cursor_and_runner_tag(void **state)
{
	tui_step_cols c;
	int w;

	(void)state;
	/* 200 columns: everything */
	c = tui_step_columns(198, 24, 10);
	assert_true(c.dur && c.runner && c.cursor && !c.tag && c.lock && c.action_w == 12);
	assert_int_equal(c.counters, 0xffu);
	/* the fixed columns: STEP .. GAP, 83 wide without the duration */
	assert_int_equal(c.width, 83 + 8 + 23 + 24);
	/* the detail zoomed at 120 columns (118 inside the border): the tag
	 * and the whole cursor; the duration gives way */
	c = tui_step_columns(118, 24, 10);
	assert_true(c.cursor && c.tag && !c.runner && !c.dur && c.counters == 0xffu);
	assert_int_equal(c.width, 83 + TUI_RUNNER_TAG_W + 1 + 24);
	/* room for the duration too */
	c = tui_step_columns(130, 24, 10);
	assert_true(c.cursor && c.tag && c.dur && !c.runner);
	/* a key-range cursor (40 wide) at 118: its end instead (20), and the
	 * tag; with a shorter end (12), the duration back */
	c = tui_step_columns(118, 40, 20);
	assert_true(!c.cursor && c.cursor_end && c.tag && !c.dur && c.counters == 0xffu);
	c = tui_step_columns(118, 40, 12);
	assert_true(!c.cursor && c.cursor_end && c.tag && c.dur && c.counters == 0xffu);
	/* the detail beside the locks panel at 120 (74 wide): the cursor's
	 * end and the runner tag stay; the duration and the lesser counters
	 * give way; VIS and DEL stay */
	c = tui_step_columns(74, 24, 10);
	assert_true(c.cursor_end && c.tag && !c.cursor && !c.runner && !c.dur);
	assert_true((c.counters & 3u) == 3u);
	assert_true(c.width <= 74);
	/* the same with a 13-column end ("  > 1,234,567"): still there */
	c = tui_step_columns(74, 28, 13);
	assert_true(c.cursor_end && c.tag && c.width <= 74);
	/* never wider than the panel, down to what always stays (41); the
	 * columns only ever give way as the panel narrows */
	for (w = 41; w < 220; w++) {
		tui_step_cols wider = tui_step_columns(w + 1, 24, 10);

		c = tui_step_columns(w, 24, 10);
		assert_true(c.width <= w);
		assert_int_equal(c.width, tui_step_cols_width(&c, 24, 10));
		assert_true((c.counters & 3u) == 3u);
		assert_true((c.counters & ~wider.counters) == 0);
		assert_true(!(c.cursor || c.cursor_end) || (wider.cursor || wider.cursor_end));
		assert_true(!(c.tag || c.runner) || (wider.tag || wider.runner));
	}
	/* where even the columns that stay do not fit: those, no more */
	c = tui_step_columns(30, 24, 10);
	assert_true(!c.tag && !c.cursor_end && !c.lock && c.action_w == 8 && c.counters == 3u);
}

static cleanup_mon_step mk_step(int no, double gap, int pid, const char *app, int64_t from, int64_t to)
{
	cleanup_mon_step s;

	memset(&s, 0, sizeof s);
	s.step_no = no;
	snprintf(s.action, sizeof s.action, "drain");
	s.pass_no = 1;
	s.library_id = 4;
	s.gap_s = gap;
	s.runner_pid = pid;
	snprintf(s.runner_app, sizeof s.runner_app, "%s", app);
	s.cursor_from = from;
	s.cursor_to = to;
	return s;
}

/* The "next gap" keys' finder. A page, newest first:
 * steps 1-3 by run 20327, 4 by the same after a 2m13s stop, 5-6 by wkr
 * 4411 (after 0.3 s), 7 resuming at another cursor, 8 fine. */
static void test_step_gaps(void **state)
{
	cleanup_mon_step st[8];
	unsigned why;
	char text[300];
	int i;

	(void)state;
	st[7] = mk_step(1, -1, 20327, "cleanupctl:job:9:run", 0, 128);
	st[6] = mk_step(2, 0.1, 20327, "cleanupctl:job:9:run", 128, 256);
	st[5] = mk_step(3, 0.1, 20327, "cleanupctl:job:9:run", 256, 384);
	st[4] = mk_step(4, 133, 20327, "cleanupctl:job:9:run", 384, 512);
	st[3] = mk_step(5, 0.3, 4411, "cleanupctl:job:9:worker", 512, 640);
	st[2] = mk_step(6, 0.1, 4411, "cleanupctl:job:9:worker", 640, 768);
	st[1] = mk_step(7, 0.1, 4411, "cleanupctl:job:9:worker", 4100, 4228);
	st[0] = mk_step(8, 0.1, 4411, "cleanupctl:job:9:worker", 4228, 4356);

	/* each step against the one before */
	assert_int_equal(tui_step_gap(NULL, &st[7], TUI_GAP_THRESHOLD_S), 0);
	assert_int_equal(tui_step_gap(&st[7], &st[6], TUI_GAP_THRESHOLD_S), 0);
	assert_int_equal(tui_step_gap(&st[5], &st[4], TUI_GAP_THRESHOLD_S), TUI_GAP_TIME);
	assert_int_equal(tui_step_gap(&st[4], &st[3], TUI_GAP_THRESHOLD_S), TUI_GAP_RUNNER);
	assert_int_equal(tui_step_gap(&st[2], &st[1], TUI_GAP_THRESHOLD_S), TUI_GAP_CURSOR);
	assert_int_equal(tui_step_gap(&st[1], &st[0], TUI_GAP_THRESHOLD_S), 0);
	/* a higher threshold: the stop is no gap */
	assert_int_equal(tui_step_gap(&st[5], &st[4], 200), 0);
	assert_ptr_equal(tui_step_prev(st, 8, &st[3]), &st[4]);
	assert_null(tui_step_prev(st, 8, &st[7]));

	/* from the newest, older: 7 (cursor), 5 (runner), 4 (time), none */
	i = tui_step_find_gap(st, 8, 8, -1, TUI_GAP_THRESHOLD_S, &why);
	assert_int_equal(st[i].step_no, 7);
	assert_int_equal(why, TUI_GAP_CURSOR);
	assert_string_equal(tui_step_gap_text(text, sizeof text, tui_step_prev(st, 8, &st[i]), &st[i], why),
	                    "cursor did not continue: step 6 ended at 768, step 7 began at 4,100 (library 4)");
	i = tui_step_find_gap(st, 8, 7, -1, TUI_GAP_THRESHOLD_S, &why);
	assert_int_equal(st[i].step_no, 5);
	assert_string_equal(tui_step_gap_text(text, sizeof text, tui_step_prev(st, 8, &st[i]), &st[i], why),
	                    "runner changed: run 20327 -> wkr 4411 after 0.3s");
	i = tui_step_find_gap(st, 8, 5, -1, TUI_GAP_THRESHOLD_S, &why);
	assert_int_equal(st[i].step_no, 4);
	assert_string_equal(tui_step_gap_text(text, sizeof text, tui_step_prev(st, 8, &st[i]), &st[i], why),
	                    "stopped 2m13s, same runner run 20327");
	assert_int_equal(tui_step_find_gap(st, 8, 4, -1, TUI_GAP_THRESHOLD_S, &why), -1);
	/* and back, newer: 5, 7, none */
	i = tui_step_find_gap(st, 8, 4, 1, TUI_GAP_THRESHOLD_S, &why);
	assert_int_equal(st[i].step_no, 5);
	i = tui_step_find_gap(st, 8, 5, 1, TUI_GAP_THRESHOLD_S, &why);
	assert_int_equal(st[i].step_no, 7);
	assert_int_equal(tui_step_find_gap(st, 8, 7, 1, TUI_GAP_THRESHOLD_S, &why), -1);
	/* a runner change after a stop says both; steps recorded without a
	 * runner are no change; another pass restarts its cursor */
	st[3].gap_s = 133;
	assert_int_equal(tui_step_gap(&st[4], &st[3], TUI_GAP_THRESHOLD_S), TUI_GAP_RUNNER | TUI_GAP_TIME);
	assert_string_equal(tui_step_gap_text(text, sizeof text, &st[4], &st[3], TUI_GAP_RUNNER | TUI_GAP_TIME),
	                    "runner changed: run 20327 -> wkr 4411 after 2m13s");
	st[3].runner_pid = st[4].runner_pid = 0;
	st[3].gap_s = 0.3;
	assert_int_equal(tui_step_gap(&st[4], &st[3], TUI_GAP_THRESHOLD_S), 0);
	st[1].pass_no = 2;
	assert_int_equal(tui_step_gap(&st[2], &st[1], TUI_GAP_THRESHOLD_S), 0);
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

/* The locks panel's selection follows the backend's pid across a refresh
 * that reorders the rows; when that backend is gone, the index selected
 * before stays, clamped to the list. */
static void test_follow_row_keeps_the_selected_pid(void **state)
{
	static const int keys[] = {5, 7, 9};
	static const int reordered[] = {9, 5, 7};

	(void)state;
	assert_int_equal(tui_follow_row(keys, 3, 7, 0), 1);
	assert_int_equal(tui_follow_row(keys, 3, 9, 0), 2);
	assert_int_equal(tui_follow_row(reordered, 3, 7, 1), 2);
	assert_int_equal(tui_follow_row(reordered, 3, 9, 2), 0);
	assert_int_equal(tui_follow_row(keys, 3, 8, 2), 2); /* gone: same index */
	assert_int_equal(tui_follow_row(keys, 3, 8, 5), 2); /* clamped */
	assert_int_equal(tui_follow_row(keys, 3, 0, 1), 1); /* no key: same index */
	assert_int_equal(tui_follow_row(keys, 0, 7, 1), 0); /* empty list */
	assert_int_equal(tui_follow_row(keys, 3, 7, -1), 1);
	assert_int_equal(tui_follow_row(keys, 3, 4, -1), 0);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_filter_matches_every_word),
          cmocka_unit_test(test_sort_orders),
          cmocka_unit_test(test_count_words_say_the_cache_state),
          cmocka_unit_test(test_libraries_filter_and_sort),
          cmocka_unit_test(test_step_history_keeps_cursor_and_runner_tag),
          cmocka_unit_test(test_runner_tag),
          cmocka_unit_test(test_step_gaps),
          cmocka_unit_test(test_follow_row_keeps_the_selected_pid),)
