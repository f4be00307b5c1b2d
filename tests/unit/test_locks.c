/* Unit tests of the pure parts of the lock view (core/src/locks.c): job ids
 * from application_name, the blocking-tree order (blockers first, then the
 * backends they block, indented; several blockers; cycles), and that the
 * JSON query wraps the very same statement as the row query. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/locks.h"
#include "config.h"
#include "test_main.h"

static void test_job_id_from_application_name(void **state)
{
	(void)state;
	assert_int_equal(cleanup_locks_job_id("cleanupctl:job:12:step"), 12);
	assert_int_equal(cleanup_locks_job_id("cleanupctl:job:7"), 7);
	assert_int_equal(cleanup_locks_job_id("cleanupctl:job:123456789012:run"), 123456789012LL);
	assert_int_equal(cleanup_locks_job_id("cleanupctl:writer:all"), -1);
	assert_int_equal(cleanup_locks_job_id("cleanupctl:console"), -1);
	assert_int_equal(cleanup_locks_job_id("cleanupctl:job::step"), -1);
	assert_int_equal(cleanup_locks_job_id("cleanupctl:job:12x:step"), -1);
	assert_int_equal(cleanup_locks_job_id("cleanupctl:job:0:step"), -1);
	assert_int_equal(cleanup_locks_job_id("cleanupctl:job:-3:step"), -1);
	assert_int_equal(cleanup_locks_job_id("cleanupctl:job:1234567890123456789:step"), -1); /* too long */
	assert_int_equal(cleanup_locks_job_id("xcleanupctl:job:1:step"), -1);
	assert_int_equal(cleanup_locks_job_id("psql"), -1);
	assert_int_equal(cleanup_locks_job_id(""), -1);
	assert_int_equal(cleanup_locks_job_id(NULL), -1);
}

static cleanup_lock_row row(int pid, int b1, int b2)
{
	cleanup_lock_row r;

	memset(&r, 0, sizeof r);
	r.pid = pid;
	if (b1)
		r.blocked_by[r.nblocked_by++] = b1;
	if (b2)
		r.blocked_by[r.nblocked_by++] = b2;
	r.job_id = -1;
	return r;
}

static void test_tree_order(void **state)
{
	/* 10 blocks 20 and 30; 20 blocks 40; 50 and 5 stand alone; 60 is
	 * blocked by 70, which is not listed (e.g. another database): a root.
	 * 5 is listed first (the lowest pid), yet the tree comes first:
	 * 10, 30 (its first listed child), 20, 40, then 5, 50, 60. */
	static const struct {
		int pid, depth;
	} want[7] = {{10, 0}, {30, 1}, {20, 1}, {40, 2}, {5, 0}, {50, 0}, {60, 0}};
	cleanup_lock_row rows[7];
	size_t order[7], i;
	int depth[7];
	size_t blocked;

	(void)state;
	rows[0] = row(5, 0, 0);
	rows[1] = row(40, 20, 0);
	rows[2] = row(30, 10, 0);
	rows[3] = row(10, 0, 0);
	rows[4] = row(50, 0, 0);
	rows[5] = row(20, 10, 0);
	rows[6] = row(60, 70, 0);
	blocked = cleanup_locks_tree(order, depth, rows, 7);
	assert_int_equal(blocked, 3);
	for (i = 0; i < 7; i++) {
		assert_int_equal(rows[order[i]].pid, want[i].pid);
		assert_int_equal(depth[i], want[i].depth);
	}
	assert_true(cleanup_lock_blocked_by(&rows[1], 20));
	assert_false(cleanup_lock_blocked_by(&rows[1], 10));
}

static void test_tree_several_blockers_and_cycles(void **state)
{
	cleanup_lock_row rows[5];
	size_t order[5], i, seen;
	int depth[5];

	(void)state;
	/* 3 waits for 1 and 2: it appears once, under 1 (its first blocker). */
	rows[0] = row(3, 1, 2);
	rows[1] = row(2, 0, 0);
	rows[2] = row(1, 0, 0);
	assert_int_equal(cleanup_locks_tree(order, depth, rows, 3), 1);
	/* 1 blocks, 2 (listed first) blocks no one shown under it: 1's tree
	 * comes first. */
	assert_int_equal(rows[order[0]].pid, 1);
	assert_int_equal(rows[order[1]].pid, 3);
	assert_int_equal(depth[1], 1);
	assert_int_equal(rows[order[2]].pid, 2);
	assert_int_equal(depth[2], 0);

	/* A deadlock about to be detected: 4 <-> 5, and 6 waits for 5. Every
	 * row still appears exactly once. */
	rows[0] = row(4, 5, 0);
	rows[1] = row(5, 4, 0);
	rows[2] = row(6, 5, 0);
	assert_int_equal(cleanup_locks_tree(order, depth, rows, 3), 3);
	seen = 0;
	for (i = 0; i < 3; i++)
		seen |= (size_t)1 << order[i];
	assert_int_equal(seen, 7);
	assert_int_equal(depth[0], 0);
	assert_int_equal(rows[order[0]].pid, 4);

	/* A backend that appears blocked by itself is not its own child. */
	rows[0] = row(9, 9, 0);
	assert_int_equal(cleanup_locks_tree(order, depth, rows, 1), 0);
	assert_int_equal(order[0], 0);
	assert_int_equal(cleanup_locks_tree(order, depth, rows, 0), 0);
}

static void test_tree_longest_wait_first(void **state)
{
	/* Two trees: 1 blocks 2 for 3 ms (writers queueing on one row), 7
	 * blocks 8 for a minute and 9 for 5 ms (a holder stalling a job's
	 * fence): 7's tree comes first, though 1 has the lower pid; ties keep
	 * the list order. */
	cleanup_lock_row rows[6];
	size_t order[6];
	int depth[6];

	(void)state;
	rows[0] = row(1, 0, 0);
	rows[1] = row(2, 1, 0);
	rows[1].wait_ms = 3;
	rows[2] = row(7, 0, 0);
	rows[3] = row(8, 7, 0);
	rows[3].wait_ms = 60000;
	rows[4] = row(9, 8, 0);
	rows[4].wait_ms = 5;
	rows[5] = row(4, 0, 0);
	assert_int_equal(cleanup_locks_tree(order, depth, rows, 6), 3);
	assert_int_equal(rows[order[0]].pid, 7);
	assert_int_equal(rows[order[1]].pid, 8);
	assert_int_equal(rows[order[2]].pid, 9);
	assert_int_equal(depth[2], 2);
	assert_int_equal(rows[order[3]].pid, 1);
	assert_int_equal(rows[order[4]].pid, 2);
	assert_int_equal(rows[order[5]].pid, 4);
	/* Equal waits: list order. */
	rows[1].wait_ms = 60000;
	assert_int_equal(cleanup_locks_tree(order, depth, rows, 6), 3);
	assert_int_equal(rows[order[0]].pid, 1);
	assert_int_equal(rows[order[2]].pid, 7);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_job_id_from_application_name),
          cmocka_unit_test(test_tree_order),
          cmocka_unit_test(test_tree_several_blockers_and_cycles),
          cmocka_unit_test(test_tree_longest_wait_first),)
