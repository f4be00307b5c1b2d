/* Unit tests of the theme parser and loader (tui/console/theme.c): every theme in
 * themes/ parses and sets every role; the built-ins equal their files; bad
 * files (unknown role, unknown colour, bad attribute, duplicate role,
 * overlong line, ...) are rejected whole with the line number; named
 * lookup, the config file and the fallback to the default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "theme.h"
#include "test_main.h"
#include "unit_support.h"

static char tmpdir[] = "/tmp/test_theme.XXXXXX";

/* Every role is set explicitly in a shipped theme (none inherits). */
static void assert_all_roles_set(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int seen[ROLE__COUNT] = {0}, i;

	assert_non_null(f);
	while (fgets(line, sizeof line, f)) {
		char name[64];

		if (sscanf(line, " %63[a-z.-] =", name) == 1 && line[0] != '#') {
			int r = theme_role_from_name(name);

			assert_true(r >= 0);
			seen[r] = 1;
		}
	}
	fclose(f);
	for (i = 0; i < ROLE__COUNT; i++) {
		if (!seen[i])
			fprintf(stderr, "%s does not set role %s\n", path, theme_role_name(i));
		assert_true(seen[i]);
	}
}

static void test_shipped_themes_parse(void **state)
{
	static const char *const required[] = {"dark", "light", "high-contrast", "monochrome"};
	char path[1024], err[512];
	DIR *d;
	struct dirent *de;
	int n = 0;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof required / sizeof required[0]; i++) {
		theme t;

		snprintf(path, sizeof path, "%s/%s.theme", CLEANUP_THEME_DIR, required[i]);
		assert_int_equal(access(path, R_OK), 0);
		memset(&t, 0, sizeof t);
		if (theme_load_file(&t, path, err, sizeof err) != 0)
			fail_msg("%s", err);
		assert_string_equal(t.name, required[i]);
	}
	d = opendir(CLEANUP_THEME_DIR);
	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		theme t;

		if (l < 7 || strcmp(de->d_name + l - 6, ".theme") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", CLEANUP_THEME_DIR, de->d_name);
		if (theme_load_file(&t, path, err, sizeof err) != 0)
			fail_msg("%s", err);
		assert_all_roles_set(path);
		n++;
	}
	closedir(d);
	assert_true(n >= 4);
}

static void test_builtins_equal_files(void **state)
{
	theme b, f;
	char path[1024], err[512];

	(void)state;
	theme_default(&b);
	snprintf(path, sizeof path, "%s/dark.theme", CLEANUP_THEME_DIR);
	assert_int_equal(theme_load_file(&f, path, err, sizeof err), 0);
	assert_memory_equal(b.roles, f.roles, sizeof b.roles);
	assert_string_equal(b.name, "dark");

	theme_monochrome(&b);
	snprintf(path, sizeof path, "%s/monochrome.theme", CLEANUP_THEME_DIR);
	assert_int_equal(theme_load_file(&f, path, err, sizeof err), 0);
	assert_memory_equal(b.roles, f.roles, sizeof b.roles);
	/* Monochrome is attributes only, and the roles that matter differ. */
	for (int r = 0; r < ROLE__COUNT; r++) {
		assert_int_equal(b.roles[r].fg, THEME_DEFAULT_COLOUR);
		assert_int_equal(b.roles[r].bg, THEME_DEFAULT_COLOUR);
	}
	assert_int_not_equal(b.roles[ROLE_SELECTION].attrs, b.roles[ROLE_NORMAL].attrs);
	assert_int_not_equal(b.roles[ROLE_HEADER].attrs, b.roles[ROLE_NORMAL].attrs);
	assert_int_not_equal(b.roles[ROLE_DANGER].attrs, b.roles[ROLE_NORMAL].attrs);
	assert_int_not_equal(b.roles[ROLE_BADGE].attrs, b.roles[ROLE_NORMAL].attrs);
}

static void test_parse_grammar(void **state)
{
	theme t;
	char err[256];

	(void)state;
	memset(&t, 0, sizeof t);
	assert_int_equal(theme_parse(&t,
	                             "# a comment\n"
	                             "\n"
	                             "normal = default\n"
	                             "  header=black on cyan bold   # trailing comment\r\n"
	                             "TITLE = bright-white underline reverse\n"
	                             "dim = 244\n"
	                             "badge = on 17 bold\n"
	                             "selection = reverse\n"
	                             "warning = grey on default dim italic standout",
	                             err, sizeof err),
	                 0);
	assert_int_equal(t.roles[ROLE_HEADER].fg, 0);
	assert_int_equal(t.roles[ROLE_HEADER].bg, 6);
	assert_int_equal(t.roles[ROLE_HEADER].attrs, THEME_BOLD);
	assert_int_equal(t.roles[ROLE_TITLE].fg, 15);
	assert_int_equal(t.roles[ROLE_TITLE].attrs, THEME_UNDERLINE | THEME_REVERSE);
	assert_int_equal(t.roles[ROLE_DIM].fg, 244);
	assert_int_equal(t.roles[ROLE_DIM].bg, THEME_DEFAULT_COLOUR);
	assert_int_equal(t.roles[ROLE_BADGE].fg, THEME_DEFAULT_COLOUR);
	assert_int_equal(t.roles[ROLE_BADGE].bg, 17);
	assert_int_equal(t.roles[ROLE_SELECTION].attrs, THEME_REVERSE);
	assert_int_equal(t.roles[ROLE_WARNING].fg, 8);
	assert_int_equal(t.roles[ROLE_WARNING].attrs, THEME_DIM | THEME_ITALIC | THEME_STANDOUT);
	/* Roles not set look like normal. */
	assert_int_equal(t.roles[ROLE_PHASE_DRAINING].fg, THEME_DEFAULT_COLOUR);
	assert_int_equal(t.roles[ROLE_PHASE_DRAINING].attrs, 0);

	/* An empty text is a valid theme: everything normal. */
	assert_int_equal(theme_parse(&t, "", err, sizeof err), 0);
	assert_int_equal(theme_parse(&t, "normal = white on blue\n", err, sizeof err), 0);
	assert_int_equal(t.roles[ROLE_OK].fg, 7);
	assert_int_equal(t.roles[ROLE_OK].bg, 4);
}

/* TEXT must be rejected with an error containing WANT, and T unchanged. */
static void rejected(const char *text, const char *want)
{
	theme t, before;
	char err[256];

	theme_default(&t);
	before = t;
	assert_int_equal(theme_parse(&t, text, err, sizeof err), -1);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
	assert_memory_equal(&t, &before, sizeof t);
}

static void test_bad_themes_rejected_whole(void **state)
{
	char longline[400];

	(void)state;
	rejected("normal = default\nheder = bold\n", "line 2: unknown role before \"=\"");
	rejected("normal = default\n\n# x\n\n\n\nheader = blu on black\n", "line 7: header: word 1 is not a colour");
	rejected("header = black on cyann\n", "line 1: header: word 3 after \"on\" is not a colour");
	rejected("ok = green blod\n", "line 1: ok: word 2 is not an attribute");
	rejected("ok = green\nwarning = yellow\nok = red\n", "line 3: role \"ok\" is set twice (first on line 1)");
	rejected("ok = 256\n", "line 1: ok: word 1: a colour number out of range 0-255");
	rejected("ok = green on\n", "line 1: ok: \"on\" needs a background colour");
	rejected("ok = green red\n", "line 1: ok: word 2 is a second foreground colour");
	rejected("ok = green on black on white\n", "line 1: ok: a second background colour");
	rejected("ok =\n", "line 1: ok: no colour or attribute");
	rejected("ok green\n", "line 1: expected \"ROLE = [FG] [on BG] [ATTR ...]\"");
	rejected(" = green\n", "line 1: a role name is missing");
	rejected("ok = gr\x01" "een\n", "line 1: control character 0x01");
	memset(longline, 'x', sizeof longline);
	memcpy(longline, "# ", 2);
	longline[sizeof longline - 1] = '\0';
	rejected(longline, "line 1: longer than 255 bytes");
	{
		char text[600];

		snprintf(text, sizeof text, "ok = green\nwarning = yellow\n%s\n", longline);
		rejected(text, "line 3: longer than 255 bytes");
	}
	/* One bad line rejects the good ones before it too. */
	rejected("normal = white on blue\nheader = black on cyan\nbadge = purple\n", "line 3");
}

static void test_load_file_and_named(void **state)
{
	char path[512], err[700], user[256];
	const char *dirs[3];
	theme t;

	(void)state;
	snprintf(user, sizeof user, "%s/user", tmpdir);
	assert_int_equal(mkdir(user, 0700), 0);

	/* A user theme shadows the shipped one of the same name. */
	snprintf(path, sizeof path, "%s/light.theme", user);
	write_file(path, "normal = red\n");
	dirs[0] = user;
	dirs[1] = CLEANUP_THEME_DIR;
	dirs[2] = NULL;
	assert_int_equal(theme_load_named_in(&t, "light", dirs, err, sizeof err), 0);
	assert_int_equal(t.roles[ROLE_NORMAL].fg, 1);
	assert_string_equal(t.name, "light");
	assert_int_equal(theme_load_named_in(&t, "high-contrast", dirs, err, sizeof err), 0);
	assert_string_equal(t.name, "high-contrast");

	/* A bad file names the file and the line. */
	snprintf(path, sizeof path, "%s/typo.theme", user);
	write_file(path, "normal = default\nwarning = yelow bold\n");
	assert_int_equal(theme_load_named_in(&t, "typo", dirs, err, sizeof err), -1);
	assert_non_null(strstr(err, "typo.theme: line 2: warning: word 1 is not a colour"));

	/* Unknown names, bad names, paths. */
	assert_int_equal(theme_load_named_in(&t, "nosuch", dirs, err, sizeof err), -1);
	assert_non_null(strstr(err, "theme \"nosuch\" not found"));
	assert_int_equal(theme_load_named_in(&t, "../etc", dirs, err, sizeof err), 0 - 1);
	assert_int_equal(theme_load_named_in(&t, "a b", dirs, err, sizeof err), -1);
	assert_non_null(strstr(err, "not valid"));
	snprintf(path, sizeof path, "%s/light.theme", user);
	assert_int_equal(theme_load_named_in(&t, path, dirs, err, sizeof err), 0);
	assert_int_equal(t.roles[ROLE_NORMAL].fg, 1);

	/* Without any directory, dark and monochrome still exist (built in). */
	dirs[0] = NULL;
	assert_int_equal(theme_load_named_in(&t, "dark", dirs, err, sizeof err), 0);
	assert_string_equal(t.name, "dark");
	assert_int_equal(theme_load_named_in(&t, "monochrome", dirs, err, sizeof err), 0);
	assert_int_equal(theme_load_named_in(&t, "light", dirs, err, sizeof err), -1);

	/* Oversized and binary files. */
	{
		char *big = malloc(THEME_FILE_MAX + 100);

		assert_non_null(big);
		memset(big, '\n', THEME_FILE_MAX + 99);
		big[THEME_FILE_MAX + 99] = '\0';
		snprintf(path, sizeof path, "%s/big.theme", user);
		write_file(path, big);
		free(big);
		assert_int_equal(theme_load_file(&t, path, err, sizeof err), -1);
		assert_non_null(strstr(err, "larger than"));
	}
	assert_int_equal(theme_load_file(&t, "/nonexistent/x.theme", err, sizeof err), -1);
	assert_non_null(strstr(err, "No such file"));
}

static void test_select_and_config(void **state)
{
	char cfgdir[256], path[300], name[64], err[512], msg[700];
	theme t, dflt;

	(void)state;
	theme_default(&dflt);
	snprintf(cfgdir, sizeof cfgdir, "%s/cfg", tmpdir);
	assert_int_equal(mkdir(cfgdir, 0700), 0);
	setenv("XDG_CONFIG_HOME", cfgdir, 1);
	snprintf(path, sizeof path, "%s/cleanupctl", cfgdir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/cleanupctl/themes", cfgdir);
	assert_int_equal(mkdir(path, 0700), 0);

	/* No config: the default theme, no message. */
	assert_int_equal(theme_select(&t, NULL, msg, sizeof msg), 0);
	assert_string_equal(msg, "");
	assert_memory_equal(t.roles, dflt.roles, sizeof t.roles);

	/* The config file chooses. */
	snprintf(path, sizeof path, "%s/cleanupctl/config", cfgdir);
	write_file(path, "# console settings\nrefresh = 2\ntheme = high-contrast\n");
	assert_int_equal(theme_config_name(name, sizeof name, NULL, err, sizeof err), 1);
	assert_string_equal(name, "high-contrast");
	assert_int_equal(theme_select(&t, NULL, msg, sizeof msg), 0);
	assert_string_equal(t.name, "high-contrast");
	/* --theme wins over the config. */
	assert_int_equal(theme_select(&t, "light", msg, sizeof msg), 0);
	assert_string_equal(t.name, "light");

	/* A bad theme file: the default, and a message naming the line. */
	snprintf(path, sizeof path, "%s/cleanupctl/themes/broken.theme", cfgdir);
	write_file(path, "normal = default\nheader = black on cyan\nheader = red\n");
	assert_int_equal(theme_select(&t, "broken", msg, sizeof msg), -1);
	assert_non_null(strstr(msg, "line 3: role \"header\" is set twice"));
	assert_non_null(strstr(msg, "using the default theme"));
	assert_memory_equal(t.roles, dflt.roles, sizeof t.roles);
	assert_int_equal(theme_select(&t, "nosuch", msg, sizeof msg), -1);
	assert_non_null(strstr(msg, "not found"));

	/* A malformed config setting. */
	snprintf(path, sizeof path, "%s/cleanupctl/config", cfgdir);
	write_file(path, "theme = x y!\n");
	assert_int_equal(theme_config_name(name, sizeof name, NULL, err, sizeof err), -1);
	assert_non_null(strstr(err, "line 1"));
	assert_int_equal(theme_select(&t, NULL, msg, sizeof msg), -1);
	assert_memory_equal(t.roles, dflt.roles, sizeof t.roles);
	unsetenv("XDG_CONFIG_HOME");
}

static void test_roles_and_colours(void **state)
{
	int r;

	(void)state;
	for (r = 0; r < ROLE__COUNT; r++)
		assert_int_equal(theme_role_from_name(theme_role_name(r)), r);
	assert_int_equal(theme_role_from_name("nope"), -1);
	assert_string_equal(theme_role_name(ROLE_PHASE_DRAINING), "phase.draining");
	/* Approximation to 8 colours. */
	assert_int_equal(theme_nearest_basic(9), 1);    /* bright-red -> red */
	assert_int_equal(theme_nearest_basic(196), 1);  /* xterm red */
	assert_int_equal(theme_nearest_basic(21), 4);   /* xterm blue */
	assert_int_equal(theme_nearest_basic(231), 7);  /* white */
	assert_int_equal(theme_nearest_basic(16), 0);   /* black */
	assert_int_equal(theme_nearest_basic(3), 3);
	assert_int_equal(theme_nearest_basic(-1), -1);
	/* NO_COLOR: set and non-empty. */
	unsetenv("NO_COLOR");
	assert_false(theme_no_color_env());
	setenv("NO_COLOR", "", 1);
	assert_false(theme_no_color_env());
	setenv("NO_COLOR", "1", 1);
	assert_true(theme_no_color_env());
	unsetenv("NO_COLOR");
}

/* theme_apply() on real terminal descriptions (output to /dev/null). */
static SCREEN *open_term(const char *name, FILE **out, FILE **in)
{
	SCREEN *s;

	*out = fopen("/dev/null", "w");
	*in = fopen("/dev/null", "r");
	assert_non_null(*out);
	assert_non_null(*in);
	s = newterm(name, *out, *in);
	assert_non_null(s);
	return s;
}

static void close_term(SCREEN *s, FILE *out, FILE *in)
{
	endwin();
	delscreen(s);
	fclose(out);
	fclose(in);
}

static void test_apply(void **state)
{
	FILE *out, *in;
	SCREEN *s;
	theme t;
	short fg, bg;

	(void)state;
	theme_default(&t);
	unsetenv("NO_COLOR");

	/* 256 colours: each role its pair, colours as written. */
	s = open_term("xterm-256color", &out, &in);
	theme_apply(&t);
	assert_false(theme_is_monochrome());
	assert_int_equal(PAIR_NUMBER(theme_attr(ROLE_HEADER)), ROLE_HEADER + 1);
	assert_int_equal(pair_content(ROLE_HEADER + 1, &fg, &bg), OK);
	assert_int_equal(fg, COLOR_BLACK);
	assert_int_equal(bg, COLOR_CYAN);
	assert_true(theme_attr(ROLE_HEADER) & A_BOLD);
	assert_int_equal(pair_content(ROLE_TITLE + 1, &fg, &bg), OK);
	assert_int_equal(fg, 14);
	assert_int_equal(bg, -1); /* the terminal's default background */

	/* NO_COLOR: attributes of the monochrome theme, no colour pair. */
	setenv("NO_COLOR", "1", 1);
	theme_apply(&t);
	assert_true(theme_is_monochrome());
	assert_int_equal(PAIR_NUMBER(theme_attr(ROLE_HEADER)), 0);
	assert_true(theme_attr(ROLE_SELECTION) & A_REVERSE);
	assert_true(theme_attr(ROLE_HEADER) & A_REVERSE);
	assert_int_equal(theme_attr(ROLE_NORMAL), A_NORMAL);
	unsetenv("NO_COLOR");
	close_term(s, out, in);

	/* 8 colours: bright colours become the base colour in bold. */
	s = open_term("xterm", &out, &in);
	theme_apply(&t);
	assert_false(theme_is_monochrome());
	assert_int_equal(pair_content(ROLE_TITLE + 1, &fg, &bg), OK);
	assert_int_equal(fg, COLOR_CYAN);
	assert_true(theme_attr(ROLE_TITLE) & A_BOLD);
	close_term(s, out, in);

	/* A terminal without colour: monochrome. */
	s = open_term("vt100", &out, &in);
	theme_apply(&t);
	assert_true(theme_is_monochrome());
	assert_true(theme_attr(ROLE_SELECTION) & A_REVERSE);
	close_term(s, out, in);
}

static int group_setup(void **state)
{
	(void)state;
	return files_dir_make(tmpdir);
}

static int group_teardown(void **state)
{
	(void)state;
	return files_dir_remove(tmpdir);
}

TEST_MAIN(group_setup, group_teardown,
          cmocka_unit_test(test_shipped_themes_parse),
          cmocka_unit_test(test_builtins_equal_files),
          cmocka_unit_test(test_parse_grammar),
          cmocka_unit_test(test_bad_themes_rejected_whole),
          cmocka_unit_test(test_load_file_and_named),
          cmocka_unit_test(test_select_and_config),
          cmocka_unit_test(test_roles_and_colours),
          cmocka_unit_test(test_apply),)
