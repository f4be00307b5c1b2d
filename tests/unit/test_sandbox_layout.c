/* Unit tests of the sandbox's path computation (cleanup_sandbox_layout and
 * the length checks of cleanup_sandbox_init): the 107-byte Unix socket path
 * limit, the private directories under /tmp when the server's user cannot
 * enter the chosen directory (never a predictable name), and bad
 * directories, whose errors report their real length. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "cleanup/sandbox.h"
#include "test_main.h"

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
	assert_int_equal(cleanup_sandbox_layout(&sb, "/work/x/.sandbox", true, NULL, NULL, &err), CLEANUP_OK);
	assert_string_equal(sb.dir, "/work/x/.sandbox");
	assert_string_equal(sb.base, "/work/x/.sandbox");
	assert_string_equal(sb.datadir, "/work/x/.sandbox/data");
	assert_string_equal(sb.sockdir, "/work/x/.sandbox/sock");
	assert_string_equal(sb.logfile, "/work/x/.sandbox/log/postgres.log");
	assert_int_equal(sb.port, CLEANUP_SANDBOX_PORT);
	/* A trailing slash names the same sandbox. */
	assert_int_equal(cleanup_sandbox_layout(&sb, "/work/x/.sandbox//", true, NULL, NULL, &err), CLEANUP_OK);
	assert_string_equal(sb.datadir, "/work/x/.sandbox/data");
}

/* Every directory length up to the limit yields a socket path within the
 * 107-byte limit once a private socket directory exists; the socket leaves
 * DIR exactly when it must, and then waits for start to make one. */
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
		assert_int_equal(cleanup_sandbox_layout(&sb, dir, true, NULL, NULL, &err), CLEANUP_OK);
		if (sb.sockdir[0]) {
			kept++;
			assert_int_equal(strncmp(sb.sockdir, dir, len), 0);
			/* Inside DIR only while DIR + "/sock/.s.PGSQL.54329" fits. */
			assert_true(len + strlen("/sock/.s.PGSQL.54329") <= CLEANUP_SOCKET_PATH_MAX);
		} else {
			moved++;
			assert_true(len + strlen("/sock/.s.PGSQL.54329") > CLEANUP_SOCKET_PATH_MAX);
			assert_int_equal(cleanup_sandbox_layout(&sb, dir, true, NULL, "/tmp/cleanupctl-sock-Ab3dE9", &err),
			                 CLEANUP_OK);
			assert_string_equal(sb.sockdir, "/tmp/cleanupctl-sock-Ab3dE9");
		}
		assert_true(socket_path_len(&sb) <= CLEANUP_SOCKET_PATH_MAX);
		/* The data always stays in DIR when it is reachable. */
		assert_int_equal(strncmp(sb.datadir, dir, len), 0);
	}
	assert_true(kept > 0 && moved > 0);
}

/* A recorded private socket directory is used only where DIR's own would
 * not do (too long, or a comma); a short DIR keeps its socket inside. */
static void test_private_socket_only_when_needed(void **state)
{
	cleanup_sandbox sb;
	cleanup_error err;

	(void)state;
	assert_int_equal(cleanup_sandbox_layout(&sb, "/w/sb", true, NULL, "/tmp/cleanupctl-sock-Ab3dE9", &err),
	                 CLEANUP_OK);
	assert_string_equal(sb.sockdir, "/w/sb/sock");
	/* libpq cannot take a comma in a socket directory: a DIR with one
	 * keeps its data but not its socket. */
	assert_int_equal(cleanup_sandbox_layout(&sb, "/w/a,b", true, NULL, NULL, &err), CLEANUP_OK);
	assert_string_equal(sb.datadir, "/w/a,b/data");
	assert_string_equal(sb.sockdir, "");
	assert_int_equal(cleanup_sandbox_layout(&sb, "/w/a,b", true, NULL, "/tmp/cleanupctl-sock-Ab3dE9", &err),
	                 CLEANUP_OK);
	assert_string_equal(sb.sockdir, "/tmp/cleanupctl-sock-Ab3dE9");
}

/* A directory the server's user cannot enter (a checkout under /root with
 * mode 700): nothing is placed until start makes a private directory, and
 * the layout never invents a predictable /tmp path. */
static void test_unreachable_dir_waits_for_a_private_base(void **state)
{
	cleanup_sandbox sb;
	cleanup_error err;

	(void)state;
	assert_int_equal(cleanup_sandbox_layout(&sb, "/root/x/build/test-sandbox", false, NULL, NULL, &err),
	                 CLEANUP_OK);
	assert_string_equal(sb.dir, "/root/x/build/test-sandbox");
	assert_string_equal(sb.base, "");
	assert_string_equal(sb.datadir, "");
	assert_string_equal(sb.sockdir, "");
	assert_string_equal(sb.logfile, "");
	assert_int_equal(cleanup_sandbox_layout(&sb, "/root/x/build/test-sandbox", false, "/tmp/cleanupctl-q7ZkP0", NULL,
	                                        &err),
	                 CLEANUP_OK);
	assert_string_equal(sb.base, "/tmp/cleanupctl-q7ZkP0");
	assert_string_equal(sb.datadir, "/tmp/cleanupctl-q7ZkP0/data");
	assert_string_equal(sb.sockdir, "/tmp/cleanupctl-q7ZkP0/sock");
	assert_string_equal(sb.logfile, "/tmp/cleanupctl-q7ZkP0/log/postgres.log");
	assert_true(socket_path_len(&sb) <= CLEANUP_SOCKET_PATH_MAX);
	/* A recorded private base wins even when DIR became reachable: status
	 * and stop must find the cluster start made. */
	assert_int_equal(cleanup_sandbox_layout(&sb, "/root/x/build/test-sandbox", true, "/tmp/cleanupctl-q7ZkP0", NULL,
	                                        &err),
	                 CLEANUP_OK);
	assert_string_equal(sb.datadir, "/tmp/cleanupctl-q7ZkP0/data");
}

static void test_bad_dirs_are_refused(void **state)
{
	char big[CLEANUP_SANDBOX_DIR_MAX + 2];
	cleanup_sandbox sb;
	cleanup_error err;

	(void)state;
	assert_int_equal(cleanup_sandbox_layout(&sb, "relative/dir", true, NULL, NULL, &err), CLEANUP_EINVAL);
	assert_non_null(strstr(err.message, "relative/dir"));
	assert_non_null(strstr(err.message, "absolute"));
	assert_int_equal(cleanup_sandbox_layout(&sb, NULL, true, NULL, NULL, &err), CLEANUP_EINVAL);
	memset(big, 'x', sizeof big - 1);
	big[0] = '/';
	big[sizeof big - 1] = '\0';
	assert_int_equal(cleanup_sandbox_layout(&sb, big, true, NULL, NULL, &err), CLEANUP_EINVAL);
	assert_non_null(strstr(err.message, "901 bytes"));
	assert_non_null(strstr(err.message, "limit is 900"));
	assert_int_equal(cleanup_sandbox_layout(&sb, "/a\nb", true, NULL, NULL, &err), CLEANUP_EINVAL);
	assert_non_null(strstr(err.message, "control character (byte 0x0a at offset 2)"));
}

/* An over-long --dir reports its real byte length, never that of a
 * truncated copy (it used to say 2047 for any --dir past 2 kB). */
static void test_overlong_dir_reports_its_real_length(void **state)
{
	static const size_t lens[] = {901, 2047, 2048, 3001, 5000, 10000};
	cleanup_sandbox sb;
	cleanup_error err;
	char want[64], cwd[CLEANUP_PATH_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		char *dir = malloc(lens[i] + 1);

		assert_non_null(dir);
		memset(dir, 'x', lens[i]);
		dir[0] = '/';
		dir[lens[i]] = '\0';
		assert_int_equal(cleanup_sandbox_init(&sb, dir, &err), CLEANUP_EINVAL);
		snprintf(want, sizeof want, "sandbox directory is %zu bytes long;", lens[i]);
		assert_non_null(strstr(err.message, want));
		assert_non_null(strstr(err.message, "the limit is 900 bytes"));
		/* The same name, relative: its length once made absolute. */
		assert_non_null(getcwd(cwd, sizeof cwd));
		assert_int_equal(cleanup_sandbox_init(&sb, dir + 1, &err), CLEANUP_EINVAL);
		snprintf(want, sizeof want, "is %zu bytes long once made absolute",
		         (strcmp(cwd, "/") == 0 ? 0 : strlen(cwd)) + lens[i]);
		assert_non_null(strstr(err.message, want));
		free(dir);
	}
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_short_dir_keeps_everything_inside),
          cmocka_unit_test(test_socket_path_limit),
          cmocka_unit_test(test_private_socket_only_when_needed),
          cmocka_unit_test(test_unreachable_dir_waits_for_a_private_base),
          cmocka_unit_test(test_bad_dirs_are_refused),
          cmocka_unit_test(test_overlong_dir_reports_its_real_length),)
