/* The command line's tests, shared by test_cmdline_builtin.c (compiled
 * with CLEANUP_NO_READLINE) and test_cmdline_readline.c (compiled with GNU
 * readline): keys fed as the console feeds them, the submitted line,
 * cancelling, history in memory and in $XDG_STATE_HOME, completion,
 * UTF-8, rendering with horizontal scrolling, and that the backend never
 * writes to the terminal (stdout, stderr) itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdbool.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmdline.h"
#include "test_main.h"
#include "unit_support.h"

#ifndef EXPECT_BACKEND
#error "define EXPECT_BACKEND"
#endif

#define CTRL(c) ((c) & 0x1f)

static char statedir[] = "/tmp/test_cmdline.XXXXXX";
static char history_file[256];

/* Redirects stdout and stderr to a file while the backend works; the
 * originals are kept from the start so that a failed test (which leaves
 * the capture on) cannot confuse the next one. */
static int orig_out = -1, orig_err = -1;
static bool capturing;
static char capture_path[300];

static void capture_begin(void)
{
	int fd;

	fflush(stdout);
	fflush(stderr);
	snprintf(capture_path, sizeof capture_path, "%s/terminal", statedir);
	fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
	capturing = true;
}

static void capture_restore(void)
{
	fflush(stdout);
	fflush(stderr);
	dup2(orig_out, 1);
	dup2(orig_err, 2);
	capturing = false;
}

/* Restores stdout and stderr; returns how many bytes were written. */
static long capture_end(void)
{
	struct stat st;

	capture_restore();
	assert_int_equal(stat(capture_path, &st), 0);
	return (long)st.st_size;
}

/* Each test starts uncaptured; a failure inside a capture shows it. */
static int test_setup(void **state)
{
	(void)state;
	return 0;
}

static int test_teardown(void **state)
{
	FILE *f;
	int c;

	(void)state;
	if (!capturing)
		return 0;
	capture_restore();
	fprintf(stderr, "--- written to the terminal during the failed test:\n");
	f = fopen(capture_path, "r");
	while (f && (c = fgetc(f)) != EOF)
		fputc(c, stderr);
	if (f)
		fclose(f);
	return 0;
}

static int feed_str(const char *s)
{
	int st = CMDLINE_ACTIVE;

	for (; *s; s++)
		st = cmdline_feed((unsigned char)*s);
	return st;
}

/* Opens the command line, without completion. */
static void open_plain(void)
{
	assert_int_equal(cmdline_open(":", NULL, NULL), 0);
}

/* Feeds KEY; the line then reads TEXT. */
static void key_shows(int key, const char *text)
{
	cmdline_feed(key);
	assert_string_equal(cmdline_text(), text);
}

/* Feeds KEY, an Enter: the line is submitted and reads LINE. */
static void enter_gives(int key, const char *line)
{
	assert_int_equal(cmdline_feed(key), CMDLINE_SUBMITTED);
	assert_string_equal(cmdline_result(), line);
}

/* Closes the command line and ends the capture: the backend wrote nothing
 * to the terminal. */
static void close_quiet(void)
{
	cmdline_close();
	assert_int_equal(capture_end(), 0);
}

static void offer(lineedit_candidates *out, const char *line, size_t word_start, const char *word, void *arg)
{
	static const char *const commands[] = {"step", "seal", "show", "pause", "resume", "cancel", NULL};
	static const char *const jobs[] = {"12", "120", "7", NULL};
	const char *const *list = word_start == 0 ? commands : jobs;
	int i;

	(void)line;
	(void)word;
	(*(int *)arg)++;
	for (i = 0; list[i]; i++)
		lineedit_candidates_add(out, list[i]);
}

static void test_backend(void **state)
{
	(void)state;
	assert_string_equal(cmdline_backend(), EXPECT_BACKEND);
	/* Nothing open: keys are refused, no result. */
	assert_false(cmdline_active());
	assert_int_equal(cmdline_feed('x'), CMDLINE_CANCELLED);
	assert_string_equal(cmdline_result(), "");
}

/* $XDG_STATE_HOME when absolute, else ~/.local/state. */
static void test_history_path(void **state)
{
	char path[300], *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

	(void)state;
	setenv("HOME", "/home/op", 1);
	setenv("XDG_STATE_HOME", "relative/dir", 1);
	assert_int_equal(cmdline_history_path(path, sizeof path), 0);
	assert_string_equal(path, "/home/op/.local/state/cleanupctl/history");
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(cmdline_history_path(path, sizeof path), 0);
	assert_string_equal(path, "/home/op/.local/state/cleanupctl/history");
	setenv("XDG_STATE_HOME", "/var/state", 1);
	assert_int_equal(cmdline_history_path(path, sizeof path), 0);
	assert_string_equal(path, "/var/state/cleanupctl/history");
	setenv("XDG_STATE_HOME", statedir, 1);
	if (home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	free(home);
}

static void test_submit_and_history_file(void **state)
{
	char path[300], line[64];
	FILE *f;

	(void)state;
	assert_int_equal(cmdline_history_path(path, sizeof path), 0);
	assert_string_equal(path, history_file);

	capture_begin();
	open_plain();
	assert_true(cmdline_active());
	assert_int_equal(feed_str("step 12"), CMDLINE_ACTIVE);
	assert_string_equal(cmdline_text(), "step 12");
	assert_int_equal(cmdline_cursor(), 7);
	enter_gives('\r', "step 12");
	assert_false(cmdline_active());
	/* After submitting, keys change nothing. */
	assert_int_equal(cmdline_feed('x'), CMDLINE_SUBMITTED);
	assert_string_equal(cmdline_result(), "step 12");
	cmdline_close();
	close_quiet(); /* closing twice is harmless */

	/* Saved at once under $XDG_STATE_HOME/cleanupctl/, one entry a line. */
	f = fopen(history_file, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	assert_string_equal(line, "step 12\n");
	fclose(f);
}

static void test_editing_keys(void **state)
{
	(void)state;
	capture_begin();
	open_plain();
	feed_str("pause 12");
	cmdline_feed(KEY_LEFT);
	cmdline_feed(KEY_LEFT);
	assert_int_equal(cmdline_cursor(), 6);
	cmdline_feed(KEY_HOME);
	assert_int_equal(cmdline_cursor(), 0);
	cmdline_feed(KEY_RIGHT);
	assert_int_equal(cmdline_cursor(), 1);
	cmdline_feed(KEY_END);
	assert_int_equal(cmdline_cursor(), 8);
	cmdline_feed(CTRL('a'));
	assert_int_equal(cmdline_cursor(), 0);
	cmdline_feed(CTRL('e'));
	assert_int_equal(cmdline_cursor(), 8);
	cmdline_feed(CTRL('b'));
	cmdline_feed(CTRL('f'));
	assert_int_equal(cmdline_cursor(), 8);
	key_shows(CTRL('w'), "pause ");
	feed_str("7 x");
	cmdline_feed(KEY_BACKSPACE);
	key_shows(127, "pause 7");
	cmdline_feed(KEY_LEFT);
	key_shows(CTRL('k'), "pause ");
	key_shows(CTRL('u'), "");
	feed_str("abc");
	cmdline_feed(KEY_HOME);
	cmdline_feed(KEY_DC);
	key_shows(CTRL('d'), "c");
	cmdline_feed(KEY_RESIZE); /* the console's business, not ours */
	key_shows(KEY_F(2), "c");
	assert_int_equal(cmdline_feed(27), CMDLINE_CANCELLED); /* Esc */
	assert_string_equal(cmdline_result(), "");
	cmdline_close();

	/* ^C cancels; ^D on an empty line cancels. */
	open_plain();
	feed_str("seal 3");
	assert_int_equal(cmdline_feed(CTRL('c')), CMDLINE_CANCELLED);
	cmdline_close();
	open_plain();
	assert_int_equal(cmdline_feed(CTRL('d')), CMDLINE_CANCELLED);
	cmdline_close();
	/* Opening again starts empty. */
	open_plain();
	assert_string_equal(cmdline_text(), "");
	enter_gives(KEY_ENTER, "");
	close_quiet();
}

static void test_history_keys(void **state)
{
	size_t before;

	(void)state;
	capture_begin();
	before = cmdline_history_count();
	open_plain();
	feed_str("resume 7\n");
	assert_string_equal(cmdline_result(), "resume 7");
	open_plain();           /* closes the previous one */
	feed_str("resume 7\n"); /* a repeat: kept once */
	open_plain();
	feed_str("   \n"); /* blank: not kept */
	assert_int_equal(cmdline_history_count(), before + 1);

	open_plain();
	feed_str("dra");
	key_shows(KEY_UP, "resume 7");
	key_shows(KEY_UP, "step 12");
	key_shows(KEY_DOWN, "resume 7");
	key_shows(KEY_DOWN, "dra");
	cmdline_feed(KEY_UP);
	enter_gives('\n', "resume 7");
	close_quiet();
}

static void test_history_survives_restart(void **state)
{
	size_t n;

	(void)state;
	n = cmdline_history_count();
	assert_true(n >= 2);
	capture_begin();
	cmdline_shutdown(); /* as if the console exited */
	assert_int_equal(cmdline_history_count(), 0);
	open_plain(); /* loads the file */
	assert_int_equal(cmdline_history_count(), n);
	key_shows(KEY_UP, "resume 7");
	close_quiet();
}

static void test_completion(void **state)
{
	int calls = 0;

	(void)state;
	capture_begin();
	assert_int_equal(cmdline_open(":", offer, &calls), 0);
	feed_str("pa");
	assert_int_equal(cmdline_feed('\t'), CMDLINE_ACTIVE);
	assert_string_equal(cmdline_text(), "pause ");
	assert_true(calls >= 1);
	feed_str("1");
	key_shows('\t', "pause 12"); /* 12 and 120: their common prefix */
	assert_non_null(strstr(cmdline_message(), "12"));
	assert_non_null(strstr(cmdline_message(), "120"));
	cmdline_feed(CTRL('u'));
	assert_string_equal(cmdline_message(), ""); /* the hint lasts one key */
	feed_str("s");
	key_shows('\t', "s");
	assert_non_null(strstr(cmdline_message(), "step"));
	assert_non_null(strstr(cmdline_message(), "seal"));
	assert_non_null(strstr(cmdline_message(), "show"));
	feed_str("e");
	key_shows('\t', "seal ");
	feed_str("x");
	cmdline_feed('\t'); /* nothing starts with x */
	assert_string_equal(cmdline_text(), "seal x");
	enter_gives('\r', "seal x");
	cmdline_close();

	/* Without a callback Tab completes nothing (never file names). */
	open_plain();
	feed_str("st");
	key_shows('\t', "st");
	close_quiet();
}

static void test_utf8(void **state)
{
	(void)state;
	capture_begin();
	open_plain();
	feed_str("caf\xc3\xa9 \xe6\xbc\xa2");
	assert_string_equal(cmdline_text(), "caf\xc3\xa9 \xe6\xbc\xa2");
	assert_int_equal(cmdline_cursor(), 9);
	cmdline_feed(KEY_LEFT);
	assert_int_equal(cmdline_cursor(), 6);
	cmdline_feed(KEY_END);
	key_shows(KEY_BACKSPACE, "caf\xc3\xa9 ");
	cmdline_feed(KEY_BACKSPACE);
	key_shows(KEY_BACKSPACE, "caf");
	feed_str("\xc3\xa9");
	key_shows(CTRL('w'), "");
	close_quiet();
}

static void test_render_scrolls(void **state)
{
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *s;
	WINDOW *w;
	char got[64];
	int i;

	(void)state;
	assert_non_null(out);
	assert_non_null(in);
	s = newterm("xterm-256color", out, in);
	assert_non_null(s);
	w = newwin(3, 40, 0, 0);
	assert_non_null(w);

	open_plain();
	feed_str("step 12");
	cmdline_render(w, 1, 2, 20, A_BOLD, A_NORMAL);
	assert_int_equal(getcury(w), 1);
	assert_int_equal(getcurx(w), 2 + 1 + 7);
	mvwinnstr(w, 1, 2, got, 20);
	assert_string_equal(got, ":step 12            ");

	/* A line longer than the field scrolls so that the cursor stays in it. */
	for (i = 0; i < 30; i++)
		cmdline_feed('a' + i % 26);
	cmdline_render(w, 1, 2, 20, A_BOLD, A_NORMAL);
	assert_int_equal(getcurx(w), 2 + 19);               /* the cursor at the field's end ... */
	mvwinnstr(w, 1, 2, got, 20);
	assert_int_equal(got[0], ':');
	assert_non_null(strstr(got, "bcd"));               /* ... after the end of the text */
	mvwinnstr(w, 1, 22, got, 5);
	assert_string_equal(got, "     ");                  /* nothing drawn past the field */
	cmdline_feed(KEY_HOME);
	cmdline_render(w, 1, 2, 20, A_BOLD, A_NORMAL);
	assert_int_equal(getcurx(w), 3);
	mvwinnstr(w, 1, 2, got, 20);
	assert_string_equal(got, ":step 12abcdefghijkl");
	/* Moving right into the hidden part scrolls again. */
	for (i = 0; i < 25; i++)
		cmdline_feed(KEY_RIGHT);
	cmdline_render(w, 1, 2, 20, A_BOLD, A_NORMAL);
	assert_true(getcurx(w) >= 3 && getcurx(w) <= 21);
	/* Wide characters count two columns. */
	cmdline_feed(CTRL('u'));
	cmdline_feed(CTRL('k'));
	feed_str("\xe6\xbc\xa2\xe5\xad\x97");
	cmdline_render(w, 1, 2, 20, A_BOLD, A_NORMAL);
	assert_int_equal(getcurx(w), 2 + 1 + 4);
	cmdline_render(w, 1, 2, 1, A_BOLD, A_NORMAL); /* too narrow: draws nothing, no crash */
	cmdline_feed(27);
	cmdline_close();
	delwin(w);
	endwin();
	delscreen(s);
	fclose(out);
	fclose(in);
}

#ifdef EXPECT_READLINE
/* Readline's incremental search (^R): its own prompt is rendered; Esc ends
 * the search keeping the line (it does not cancel), ^G aborts it. */
static void test_readline_search(void **state)
{
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *s;
	WINDOW *w;
	char got[64];

	(void)state;
	s = newterm("xterm-256color", out, in);
	assert_non_null(s);
	w = newwin(2, 60, 0, 0);
	capture_begin();
	open_plain();
	cmdline_feed(CTRL('r'));
	feed_str("ste");
	assert_string_equal(cmdline_text(), "step 12");
	cmdline_render(w, 0, 0, 60, A_BOLD, A_NORMAL);
	mvwinnstr(w, 0, 0, got, 30);
	assert_non_null(strstr(got, "reverse-i-search"));
	assert_int_equal(cmdline_feed(27), CMDLINE_ACTIVE);
	assert_string_equal(cmdline_text(), "step 12");
	cmdline_render(w, 0, 0, 60, A_BOLD, A_NORMAL);
	mvwinnstr(w, 0, 0, got, 10);
	assert_string_equal(got, ":step 12  ");
	enter_gives('\r', "step 12");
	open_plain();
	feed_str("x");
	cmdline_feed(CTRL('r'));
	feed_str("resu");
	assert_string_equal(cmdline_text(), "resume 7");
	assert_int_equal(cmdline_feed(CTRL('g')), CMDLINE_ACTIVE); /* aborts the search only */
	assert_string_equal(cmdline_text(), "x");
	assert_int_equal(cmdline_feed(27), CMDLINE_CANCELLED);
	close_quiet();
	delwin(w);
	endwin();
	delscreen(s);
	fclose(out);
	fclose(in);
}
#endif

static int group_setup(void **state)
{
	(void)state;
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		return -1;
	if (files_dir_make(statedir) != 0)
		return -1;
	/* The history goes to a fresh state directory; no ~/.inputrc. */
	setenv("XDG_STATE_HOME", statedir, 1);
	setenv("INPUTRC", "/dev/null", 1);
	snprintf(history_file, sizeof history_file, "%s/cleanupctl/history", statedir);
	orig_out = dup(1);
	orig_err = dup(2);
	return orig_out >= 0 && orig_err >= 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	cmdline_shutdown();
	return files_dir_remove(statedir);
}

/* A case whose failure shows what the backend wrote to the terminal
 * (test_teardown). */
#define CMDLINE_TEST(t) cmocka_unit_test_setup_teardown(t, test_setup, test_teardown)

/* The readline backend's own case; nothing with the built-in editor. */
#ifdef EXPECT_READLINE
#define READLINE_CASE(t) CMDLINE_TEST(t),
#else
#define READLINE_CASE(t)
#endif

TEST_MAIN(group_setup, group_teardown,
          CMDLINE_TEST(test_backend),
          CMDLINE_TEST(test_history_path),
          CMDLINE_TEST(test_submit_and_history_file),
          CMDLINE_TEST(test_editing_keys),
          CMDLINE_TEST(test_history_keys),
          CMDLINE_TEST(test_history_survives_restart),
          CMDLINE_TEST(test_completion),
          CMDLINE_TEST(test_utf8),
          CMDLINE_TEST(test_render_scrolls),
          READLINE_CASE(test_readline_search))
