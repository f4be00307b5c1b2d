/* Unit tests of the sandbox's path computation (cleanup_sandbox_layout):
 * the 107-byte Unix socket path limit, the fallback to /tmp when the
 * server's user cannot enter the chosen directory, and bad directories. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "cleanup/sandbox.h"

/* Length of the server's socket path for SB. */
static size_t socket_path_len(const cleanup_sandbox *sb)
{
	char path[CLEANUP_PATH_MAX + 32];

	snprintf(path, sizeof path, "%s/.s.PGSQL.%d", sb->sockdir, sb->port);
	return strlen(path);
}

static void test_short_dir_keeps_everything_inside(void **state)
{
	cleanup_sandbox sb;
	cleanup_error err;

	(void)state;
	memset(&sb, 0, sizeof sb);
	assert_int_equal(cleanup_sandbox_layout(&sb, "/work/x/.sandbox", true, &err), CLEANUP_OK);
	assert_string_equal(sb.dir, "/work/x/.sandbox");
	assert_string_equal(sb.datadir, "/work/x/.sandbox/data");
	assert_string_equal(sb.sockdir, "/work/x/.sandbox/sock");
	assert_string_equal(sb.logfile, "/work/x/.sandbox/log/postgres.log");
	assert_int_equal(sb.port, CLEANUP_SANDBOX_PORT);
	/* A trailing slash names the same sandbox. */
	assert_int_equal(cleanup_sandbox_layout(&sb, "/work/x/.sandbox//", true, &err), CLEANUP_OK);
	assert_string_equal(sb.datadir, "/work/x/.sandbox/data");
}

/* Every directory length up to the limit yields a socket path within the
 * 107-byte limit; the socket moves to /tmp exactly when it must. */
static void test_socket_path_limit(void **state)
{
	char dir[CLEANUP_SANDBOX_DIR_MAX + 1];
	cleanup_sandbox sb;
	cleanup_error err;
	size_t len;
	int moved = 0, kept = 0;

	(void)state;
	for (len = 2; len <= CLEANUP_SANDBOX_DIR_MAX; len++) {
		memset(dir, 'd', len);
		dir[0] = '/';
		dir[len] = '\0';
		assert_int_equal(cleanup_sandbox_layout(&sb, dir, true, &err), CLEANUP_OK);
		assert_true(socket_path_len(&sb) <= CLEANUP_SOCKET_PATH_MAX);
		if (strncmp(sb.sockdir, dir, len) == 0) {
			kept++;
			/* Inside DIR only while DIR + "/sock/.s.PGSQL.54329" fits. */
			assert_true(len + strlen("/sock/.s.PGSQL.54329") <= CLEANUP_SOCKET_PATH_MAX);
		} else {
			moved++;
			assert_true(len + strlen("/sock/.s.PGSQL.54329") > CLEANUP_SOCKET_PATH_MAX);
			assert_int_equal(strncmp(sb.sockdir, "/tmp/cleanupctl-sock-", 21), 0);
		}
		/* The data always stays in DIR when it is reachable. */
		assert_int_equal(strncmp(sb.datadir, dir, len), 0);
	}
	assert_true(kept > 0 && moved > 0);
}

/* Two long directories get different socket directories, and the same
 * directory always gets the same one (stop finds what start made). */
static void test_socket_dir_is_stable_and_distinct(void **state)
{
	char a[200], b[200];
	cleanup_sandbox s1, s2, s3;
	cleanup_error err;

	(void)state;
	memset(a, 'a', sizeof a - 1);
	a[0] = '/';
	a[sizeof a - 1] = '\0';
	memcpy(b, a, sizeof b);
	b[150] = 'b';
	assert_int_equal(cleanup_sandbox_layout(&s1, a, true, &err), CLEANUP_OK);
	assert_int_equal(cleanup_sandbox_layout(&s2, b, true, &err), CLEANUP_OK);
	assert_int_equal(cleanup_sandbox_layout(&s3, a, true, &err), CLEANUP_OK);
	assert_string_not_equal(s1.sockdir, s2.sockdir);
	assert_string_equal(s1.sockdir, s3.sockdir);
}

/* A directory the server's user cannot enter (a checkout under /root with
 * mode 700): the cluster lives in /tmp/cleanupctl-<hash> instead. */
static void test_unreachable_dir_falls_back_to_tmp(void **state)
{
	cleanup_sandbox sb;
	cleanup_error err;

	(void)state;
	assert_int_equal(cleanup_sandbox_layout(&sb, "/root/x/build/test-sandbox", false, &err), CLEANUP_OK);
	assert_string_equal(sb.dir, "/root/x/build/test-sandbox");
	assert_int_equal(strncmp(sb.datadir, "/tmp/cleanupctl-", 16), 0);
	assert_non_null(strstr(sb.datadir, "/data"));
	assert_int_equal(strncmp(sb.sockdir, "/tmp/cleanupctl-", 16), 0);
	assert_int_equal(strncmp(sb.logfile, "/tmp/cleanupctl-", 16), 0);
	assert_true(socket_path_len(&sb) <= CLEANUP_SOCKET_PATH_MAX);
}

static void test_bad_dirs_are_refused(void **state)
{
	char big[CLEANUP_SANDBOX_DIR_MAX + 2];
	cleanup_sandbox sb;
	cleanup_error err;

	(void)state;
	assert_int_equal(cleanup_sandbox_layout(&sb, "relative/dir", true, &err), CLEANUP_EINVAL);
	assert_non_null(strstr(err.message, "relative/dir"));
	assert_non_null(strstr(err.message, "absolute"));
	assert_int_equal(cleanup_sandbox_layout(&sb, NULL, true, &err), CLEANUP_EINVAL);
	memset(big, 'x', sizeof big - 1);
	big[0] = '/';
	big[sizeof big - 1] = '\0';
	assert_int_equal(cleanup_sandbox_layout(&sb, big, true, &err), CLEANUP_EINVAL);
	assert_non_null(strstr(err.message, "901 bytes"));
	assert_non_null(strstr(err.message, "limit is 900"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_dir_keeps_everything_inside),
		cmocka_unit_test(test_socket_path_limit),
		cmocka_unit_test(test_socket_dir_is_stable_and_distinct),
		cmocka_unit_test(test_unreachable_dir_falls_back_to_tmp),
		cmocka_unit_test(test_bad_dirs_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
