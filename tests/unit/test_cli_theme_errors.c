/* Unit tests: theme errors never echo the file (untrusted text:
 * `--theme /etc/shadow` showed that file's first line). Messages name the
 * path, the line, the word's position and the rule, and may suggest a word
 * of the theme vocabulary; a path is read only when it names a regular
 * file ending in ".theme" owned by the user or root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "theme.h"
#include "test_main.h"
#include "unit_support.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/cleanupctl-theme-errors.XXXXXX");
	return files_dir_make(tmpdir);
}

static int teardown(void **state)
{
	(void)state;
	return files_dir_remove(tmpdir);
}

/* A theme text that does not parse, words its error holds (none: NULL),
 * and words of the file it must not echo. */
typedef struct bad_theme {
	const char *text, *want;
	const char *const *secrets;
} bad_theme;

/* Parsing each text fails, with its words and none of its secrets. */
static void secrets_kept(const bad_theme *cases, size_t n)
{
	const char *const *secret;
	char err[512];
	theme t;
	size_t i;

	for (i = 0; i < n; i++) {
		memset(&t, 0, sizeof t);
		assert_int_equal(theme_parse(&t, cases[i].text, err, sizeof err), -1);
		if (cases[i].want && !strstr(err, cases[i].want))
			fail_msg("error \"%s\" lacks \"%s\"", err, cases[i].want);
		for (secret = cases[i].secrets; *secret; secret++)
			if (strstr(err, *secret))
				fail_msg("error \"%s\" echoes \"%s\" from the file", err, *secret);
	}
}

static const char *const shadow[] = {"root", "$6$", "saltsalt", "19000", NULL};
static const char *const pw[] = {"hunter2", NULL};
static const char *const key[] = {"password", NULL};
static const char *const num[] = {"4096", NULL};
static const char *const none[] = {NULL};
static const char *const blu[] = {"\"blu\"", NULL};

static void test_parse_errors_never_quote_the_file(void **state)
{
	static const bad_theme cases[] = {
		{"root:$6$saltsalt$hash:19000:0:99999:7:::\n", "line 1: expected \"ROLE = [FG] [on BG] [ATTR ...]\"", shadow},
		{"normal = hunter2\n", "line 1: normal: word 1 is not a colour", pw},
		{"normal = red hunter2\n", "line 1: normal: word 2 is not an attribute", pw},
		{"normal = red on hunter2\n", "line 1: normal: word 3 after \"on\" is not a colour", pw},
		{"password = red\n", "line 1: unknown role", key},
		{"ok = 4096\n", "line 1: ok: word 1: a colour number out of range 0-255", num},
		{"ok = green hunter2 red\n", "word 2", pw},
	};

	(void)state;
	secrets_kept(cases, sizeof cases / sizeof cases[0]);
}

static void test_typos_get_a_suggestion_from_the_vocabulary(void **state)
{
	static const bad_theme cases[] = {
		{"header = blu on black\n", "line 1: header: word 1 is not a colour", blu},
		{"header = blu on black\n", "did you mean \"blue\"?", none},
		{"ok = green blod\n", "did you mean \"bold\"?", none},
		{"heder = bold\n", "did you mean \"header\"?", none},
		{"ok = green red\n", "line 1: ok: word 2 is a second foreground colour", none},
	};

	(void)state;
	secrets_kept(cases, sizeof cases / sizeof cases[0]);
}

static void test_paths_must_be_theme_files(void **state)
{
	char path[512], err[700];
	const char *dirs[] = {NULL};
	theme t;

	(void)state;
	/* Not ending in .theme: refused without reading it. */
	snprintf(path, sizeof path, "%s/shadow", tmpdir);
	write_file(path, "root:$6$secret:19000:0:99999:7:::\n");
	assert_int_equal(theme_load_named_in(&t, path, dirs, err, sizeof err), -1);
	assert_non_null(strstr(err, "must name a file ending in \".theme\""));
	assert_null(strstr(err, "secret"));
	assert_int_equal(theme_load_named_in(&t, "/etc/shadow", dirs, err, sizeof err), -1);
	assert_null(strstr(err, "root"));
	/* A directory or a device named .theme: not a regular file. */
	snprintf(path, sizeof path, "%s/dir.theme", tmpdir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(theme_load_named_in(&t, path, dirs, err, sizeof err), -1);
	assert_non_null(strstr(err, "regular file"));
	/* A bad .theme file names path and line, not its text. */
	snprintf(path, sizeof path, "%s/bad.theme", tmpdir);
	write_file(path, "normal = default\nwarning = s3cr3t bold\n");
	assert_int_equal(theme_load_named_in(&t, path, dirs, err, sizeof err), -1);
	assert_non_null(strstr(err, "bad.theme: line 2: warning: word 1 is not a colour"));
	assert_null(strstr(err, "s3cr3t"));
	/* A good one loads. */
	snprintf(path, sizeof path, "%s/good.theme", tmpdir);
	write_file(path, "normal = red\n");
	assert_int_equal(theme_load_named_in(&t, path, dirs, err, sizeof err), 0);
	assert_int_equal(t.roles[ROLE_NORMAL].fg, 1);
	/* Owned by someone else (only root can make such a file here). */
	if (getuid() == 0) {
		snprintf(path, sizeof path, "%s/other.theme", tmpdir);
		write_file(path, "normal = red\n");
		assert_int_equal(chown(path, 12345, 12345), 0);
		assert_int_equal(theme_load_named_in(&t, path, dirs, err, sizeof err), -1);
		assert_non_null(strstr(err, "owned by you or by root"));
	}
}

TEST_MAIN(setup, teardown,
          cmocka_unit_test(test_parse_errors_never_quote_the_file),
          cmocka_unit_test(test_typos_get_a_suggestion_from_the_vocabulary),
          cmocka_unit_test(test_paths_must_be_theme_files),)
