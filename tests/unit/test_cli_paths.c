/* Unit tests of where a build-tree program finds its checkout (no path
 * into the source tree is compiled in: <build>/cleanupctl-checkout names
 * it): the shipped themes are the checkout's themes/, the default sandbox
 * is the checkout's .sandbox unless $CLEANUP_SANDBOX_DIR says otherwise.
 * The installed layout (data directory, $XDG_STATE_HOME) is tested on a
 * real install by tests/cli/test_package.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cleanup/sandbox.h"
#include "config.h"
#include "test_main.h"

static void test_build_tree_themes_are_the_checkouts(void **state)
{
	const char *src = getenv("CLEANUP_SOURCE_DIR");
	char want[4096];

	(void)state;
	assert_non_null(src); /* set by ctest */
	snprintf(want, sizeof want, "%s/themes", src);
	assert_string_equal(tui_theme_data_dir(), want);
	assert_string_equal(CLEANUP_THEME_DIR, want);
}

static void test_build_tree_sandbox_is_the_checkouts(void **state)
{
	const char *src = getenv("CLEANUP_SOURCE_DIR");
	char want[CLEANUP_PATH_MAX], got[CLEANUP_PATH_MAX];

	(void)state;
	assert_non_null(src);
	unsetenv("CLEANUP_SANDBOX_DIR");
	snprintf(want, sizeof want, "%s/.sandbox", src);
	cleanup_sandbox_default_dir(got, sizeof got);
	assert_string_equal(got, want);
	setenv("CLEANUP_SANDBOX_DIR", "/tmp/elsewhere", 1);
	cleanup_sandbox_default_dir(got, sizeof got);
	assert_string_equal(got, "/tmp/elsewhere");
	/* the XDG state directory is for installed programs only */
	unsetenv("CLEANUP_SANDBOX_DIR");
	setenv("XDG_STATE_HOME", "/tmp/state", 1);
	cleanup_sandbox_default_dir(got, sizeof got);
	assert_string_equal(got, want);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_build_tree_themes_are_the_checkouts),
          cmocka_unit_test(test_build_tree_sandbox_is_the_checkouts),)
