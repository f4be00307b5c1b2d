/* Unit tests of the built-in line editor (tui/lineedit/lineedit.c): editing with
 * every Emacs key, history and its bounds, UTF-8 (multi-byte input byte by
 * byte, backspace, ^W, the cursor column with wide characters), the
 * history file and completion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lineedit.h"
#include "test_main.h"

#define CTRL(c) ((c) & 0x1f)

static void type(lineedit *le, const char *s)
{
	for (; *s; s++)
		assert_int_equal(lineedit_key(le, (unsigned char)*s), LE_NONE);
}

static void keys(lineedit *le, int key, int times)
{
	while (times-- > 0)
		lineedit_key(le, key);
}

static int setup(void **state)
{
	lineedit *le = malloc(sizeof *le);

	if (!le)
		return -1;
	lineedit_init(le);
	*state = le;
	return 0;
}

static int teardown(void **state)
{
	lineedit_free(*state);
	free(*state);
	return 0;
}

static void test_insert_and_move(void **state)
{
	lineedit *le = *state;

	type(le, "step 12");
	assert_string_equal(lineedit_text(le), "step 12");
	assert_int_equal(lineedit_cursor(le), 7);
	keys(le, KEY_LEFT, 3);
	assert_int_equal(lineedit_cursor(le), 4);
	type(le, "s");
	assert_string_equal(lineedit_text(le), "steps 12");
	lineedit_key(le, KEY_HOME);
	assert_int_equal(lineedit_cursor(le), 0);
	lineedit_key(le, KEY_END);
	assert_int_equal(lineedit_cursor(le), 8);
	keys(le, KEY_RIGHT, 5); /* stops at the end */
	assert_int_equal(lineedit_cursor(le), 8);
	lineedit_key(le, KEY_HOME);
	keys(le, KEY_LEFT, 2); /* stops at the start */
	assert_int_equal(lineedit_cursor(le), 0);
	/* Control characters and unknown keys insert nothing. */
	lineedit_key(le, CTRL('l'));
	lineedit_key(le, KEY_F(5));
	lineedit_key(le, KEY_RESIZE);
	assert_string_equal(lineedit_text(le), "steps 12");
}

static void test_emacs_keys(void **state)
{
	lineedit *le = *state;

	type(le, "pause 12");
	lineedit_key(le, CTRL('a'));
	assert_int_equal(lineedit_cursor(le), 0);
	lineedit_key(le, CTRL('f'));
	lineedit_key(le, CTRL('f'));
	assert_int_equal(lineedit_cursor(le), 2);
	lineedit_key(le, CTRL('b'));
	assert_int_equal(lineedit_cursor(le), 1);
	lineedit_key(le, CTRL('e'));
	assert_int_equal(lineedit_cursor(le), 8);

	/* ^W deletes the word before the cursor, then ^Y yanks it back. */
	lineedit_key(le, CTRL('w'));
	assert_string_equal(lineedit_text(le), "pause ");
	lineedit_key(le, CTRL('y'));
	assert_string_equal(lineedit_text(le), "pause 12");
	/* ^W over trailing spaces takes the word before them too. */
	type(le, "   ");
	lineedit_key(le, CTRL('w'));
	assert_string_equal(lineedit_text(le), "pause ");

	/* ^K kills to the end, ^U to the start. */
	lineedit_set(le, "resume 7 now");
	keys(le, CTRL('b'), 4);
	lineedit_key(le, CTRL('k'));
	assert_string_equal(lineedit_text(le), "resume 7");
	lineedit_key(le, CTRL('b'));
	lineedit_key(le, CTRL('u'));
	assert_string_equal(lineedit_text(le), "7");
	assert_int_equal(lineedit_cursor(le), 0);
	lineedit_key(le, CTRL('y'));
	assert_string_equal(lineedit_text(le), "resume 7");

	/* ^D and Delete remove the character under the cursor. */
	lineedit_key(le, CTRL('a'));
	lineedit_key(le, CTRL('d'));
	assert_string_equal(lineedit_text(le), "esume 7");
	lineedit_key(le, KEY_DC);
	assert_string_equal(lineedit_text(le), "sume 7");
	lineedit_key(le, KEY_END);
	lineedit_key(le, KEY_DC); /* at the end: nothing */
	assert_string_equal(lineedit_text(le), "sume 7");

	/* Backspace in its three spellings. */
	lineedit_key(le, KEY_BACKSPACE);
	lineedit_key(le, 127);
	lineedit_key(le, CTRL('h'));
	assert_string_equal(lineedit_text(le), "sum");
	lineedit_key(le, KEY_HOME);
	lineedit_key(le, KEY_BACKSPACE); /* at the start: nothing */
	assert_string_equal(lineedit_text(le), "sum");

	/* ^T transposes. */
	lineedit_key(le, KEY_END);
	lineedit_key(le, CTRL('t'));
	assert_string_equal(lineedit_text(le), "smu");
}

static void test_actions(void **state)
{
	lineedit *le = *state;

	type(le, "seal 3");
	assert_int_equal(lineedit_key(le, '\n'), LE_SUBMIT);
	assert_int_equal(lineedit_key(le, '\r'), LE_SUBMIT);
	assert_int_equal(lineedit_key(le, KEY_ENTER), LE_SUBMIT);
	assert_int_equal(lineedit_key(le, '\t'), LE_COMPLETE);
	assert_int_equal(lineedit_key(le, 27), LE_CANCEL);
	assert_int_equal(lineedit_key(le, CTRL('c')), LE_CANCEL);
	assert_int_equal(lineedit_key(le, CTRL('g')), LE_CANCEL);
	assert_string_equal(lineedit_text(le), "seal 3"); /* none of them edits */
	/* ^D cancels only on an empty line. */
	lineedit_reset(le);
	assert_string_equal(lineedit_text(le), "");
	assert_int_equal(lineedit_key(le, CTRL('d')), LE_CANCEL);
}

static void test_bounded_buffer(void **state)
{
	lineedit *le = *state;
	int i;

	for (i = 0; i < LINEEDIT_MAX + 50; i++)
		lineedit_key(le, 'x');
	assert_int_equal(strlen(lineedit_text(le)), LINEEDIT_MAX - 1);
	/* A 2-byte character does not fit in the last byte either. */
	lineedit_key(le, KEY_BACKSPACE);
	lineedit_key(le, 0xC3);
	lineedit_key(le, 0xA9);
	lineedit_key(le, 0xC3);
	lineedit_key(le, 0xA9);
	assert_int_equal(strlen(lineedit_text(le)), LINEEDIT_MAX - 2);
	assert_false(lineedit_insert(le, "ab"));
	assert_int_equal(strlen(lineedit_text(le)), LINEEDIT_MAX - 2);
}

static void test_utf8_input_and_deletion(void **state)
{
	lineedit *le = *state;
	/* "é" (2 bytes), "漢" (3 bytes, wide), "😀" (4 bytes, wide). */
	static const char e_acute[] = "\xc3\xa9", kan[] = "\xe6\xbc\xa2", smile[] = "\xf0\x9f\x98\x80";

	type(le, "caf");
	type(le, e_acute);
	assert_string_equal(lineedit_text(le), "caf\xc3\xa9");
	assert_int_equal(lineedit_cursor_col(le), 4);
	type(le, " ");
	type(le, kan);
	type(le, smile);
	assert_int_equal(lineedit_cursor(le), 5 + 1 + 3 + 4);
	assert_int_equal(lineedit_cursor_col(le), 4 + 1 + 2 + 2);

	/* Left moves over whole characters. */
	lineedit_key(le, KEY_LEFT);
	assert_int_equal(lineedit_cursor(le), 9);
	assert_int_equal(lineedit_cursor_col(le), 7);
	lineedit_key(le, KEY_LEFT);
	assert_int_equal(lineedit_cursor(le), 6);
	lineedit_key(le, KEY_RIGHT);
	assert_int_equal(lineedit_cursor(le), 9);

	/* Backspace removes a whole character, never a part of one. */
	lineedit_key(le, KEY_END);
	lineedit_key(le, KEY_BACKSPACE);
	assert_string_equal(lineedit_text(le), "caf\xc3\xa9 \xe6\xbc\xa2");
	lineedit_key(le, KEY_BACKSPACE);
	assert_string_equal(lineedit_text(le), "caf\xc3\xa9 ");
	lineedit_key(le, KEY_BACKSPACE);
	lineedit_key(le, KEY_BACKSPACE);
	assert_string_equal(lineedit_text(le), "caf");

	/* ^W takes a word of multi-byte characters whole. */
	lineedit_set(le, "pause \xe6\xbc\xa2\xc3\xa9\xe6\xbc\xa2");
	lineedit_key(le, CTRL('w'));
	assert_string_equal(lineedit_text(le), "pause ");
	/* Delete under the cursor, ^T swap whole characters. */
	lineedit_set(le, "a\xc3\xa9z");
	lineedit_key(le, KEY_HOME);
	lineedit_key(le, KEY_RIGHT);
	lineedit_key(le, KEY_DC);
	assert_string_equal(lineedit_text(le), "az");
	lineedit_set(le, "a\xe6\xbc\xa2");
	lineedit_key(le, CTRL('t'));
	assert_string_equal(lineedit_text(le), "\xe6\xbc\xa2" "a");
}

static void test_utf8_invalid_dropped(void **state)
{
	lineedit *le = *state;

	lineedit_key(le, 0xC3);      /* lead byte, then a non-continuation */
	lineedit_key(le, 'a');
	assert_string_equal(lineedit_text(le), "a");
	lineedit_key(le, 0xA9);      /* stray continuation byte */
	lineedit_key(le, 0xFF);      /* never valid */
	lineedit_key(le, 0xC0);      /* overlong lead */
	lineedit_key(le, 0x80);
	assert_string_equal(lineedit_text(le), "a");
	lineedit_key(le, 0xED);      /* a surrogate U+D800 */
	lineedit_key(le, 0xA0);
	lineedit_key(le, 0x80);
	assert_string_equal(lineedit_text(le), "a");
	lineedit_key(le, 0xE6);      /* a sequence broken by a key */
	lineedit_key(le, KEY_LEFT);
	lineedit_key(le, 0xBC);
	lineedit_key(le, 0xA2);
	assert_string_equal(lineedit_text(le), "a");
	lineedit_key(le, 0xC2);      /* U+0085, a C1 control */
	lineedit_key(le, 0x85);
	assert_string_equal(lineedit_text(le), "a");
	/* lineedit_insert drops control characters and invalid bytes. */
	assert_true(lineedit_insert(le, "b\tc\x1b[A\xff" "d"));
	assert_string_equal(lineedit_text(le), "b" "c[Ad" "a");
}

static void test_width(void **state)
{
	(void)state;
	assert_int_equal(lineedit_width("abc", 3), 3);
	assert_int_equal(lineedit_width("\xe6\xbc\xa2\xe5\xad\x97", 6), 4);   /* two CJK characters */
	assert_int_equal(lineedit_width("e\xcc\x81", 3), 1);                   /* e + combining acute */
	assert_int_equal(lineedit_width("\xff", 1), 1);                        /* a stray byte counts 1 */
	assert_int_equal(lineedit_char_len("\xf0\x9f\x98\x80"), 4);
	assert_int_equal(lineedit_char_len(""), 0);
}

static void test_history_browse(void **state)
{
	lineedit *le = *state;

	lineedit_history_add(le, "step 1");
	lineedit_history_add(le, "step 2");
	lineedit_history_add(le, "step 2"); /* consecutive duplicate: ignored */
	lineedit_history_add(le, "   ");    /* blank: ignored */
	lineedit_history_add(le, "");
	lineedit_history_add(le, "pause 3");
	assert_int_equal(lineedit_history_count(le), 3);

	type(le, "draft");
	lineedit_key(le, KEY_UP);
	assert_string_equal(lineedit_text(le), "pause 3");
	assert_int_equal(lineedit_cursor(le), 7);
	lineedit_key(le, CTRL('p'));
	assert_string_equal(lineedit_text(le), "step 2");
	lineedit_key(le, KEY_UP);
	assert_string_equal(lineedit_text(le), "step 1");
	lineedit_key(le, KEY_UP); /* the oldest: stays */
	assert_string_equal(lineedit_text(le), "step 1");
	lineedit_key(le, KEY_DOWN);
	assert_string_equal(lineedit_text(le), "step 2");
	lineedit_key(le, CTRL('n'));
	assert_string_equal(lineedit_text(le), "pause 3");
	lineedit_key(le, KEY_DOWN); /* back to the line being written */
	assert_string_equal(lineedit_text(le), "draft");
	lineedit_key(le, KEY_DOWN); /* the newest: stays */
	assert_string_equal(lineedit_text(le), "draft");

	/* A non-consecutive duplicate is kept. */
	lineedit_history_add(le, "step 1");
	assert_int_equal(lineedit_history_count(le), 4);
	assert_string_equal(lineedit_history_get(le, 3), "step 1");
	assert_null(lineedit_history_get(le, 4));
}

static void test_history_bound(void **state)
{
	lineedit *le = *state;
	char line[32];
	int i;

	for (i = 0; i < LINEEDIT_HISTORY_MAX + 25; i++) {
		snprintf(line, sizeof line, "step %d", i);
		assert_true(lineedit_history_add(le, line));
	}
	assert_int_equal(lineedit_history_count(le), LINEEDIT_HISTORY_MAX);
	assert_string_equal(lineedit_history_get(le, 0), "step 25");
	snprintf(line, sizeof line, "step %d", LINEEDIT_HISTORY_MAX + 24);
	assert_string_equal(lineedit_history_get(le, LINEEDIT_HISTORY_MAX - 1), line);
	/* Browsing walks back exactly LINEEDIT_HISTORY_MAX entries. */
	keys(le, KEY_UP, LINEEDIT_HISTORY_MAX + 10);
	assert_string_equal(lineedit_text(le), "step 25");
}

static void test_history_file(void **state)
{
	lineedit *le = *state, other;
	char dir[] = "/tmp/test_lineedit.XXXXXX", path[128];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/history", dir);
	/* A missing file is an empty history, not an error. */
	assert_int_equal(lineedit_history_load(le, path), 0);
	assert_int_equal(lineedit_history_count(le), 0);

	lineedit_history_add(le, "step 1");
	lineedit_history_add(le, "seal 2 caf\xc3\xa9");
	assert_int_equal(lineedit_history_save(le, path), 0);

	lineedit_init(&other);
	assert_int_equal(lineedit_history_load(&other, path), 0);
	assert_int_equal(lineedit_history_count(&other), 2);
	assert_string_equal(lineedit_history_get(&other, 1), "seal 2 caf\xc3\xa9");
	lineedit_free(&other);

	/* Loading keeps the bound and drops blank lines and repeats. */
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < LINEEDIT_HISTORY_MAX + 3; i++)
		fprintf(f, "cmd %d\n\ncmd %d\r\n", i, i);
	fclose(f);
	lineedit_init(&other);
	assert_int_equal(lineedit_history_load(&other, path), 0);
	assert_int_equal(lineedit_history_count(&other), LINEEDIT_HISTORY_MAX);
	assert_string_equal(lineedit_history_get(&other, 0), "cmd 3");
	lineedit_free(&other);

	/* An unwritable place fails with -1. */
	assert_int_equal(lineedit_history_save(le, "/nonexistent-dir/x/history"), -1);
	unlink(path);
	rmdir(dir);
}

static void offer(lineedit_candidates *out, const char *line, size_t word_start, const char *word, void *arg)
{
	static const char *const commands[] = {"step", "seal", "show", "pause", "resume", "run", "cancel", NULL};
	static const char *const jobs[] = {"12", "120", "13", "7", NULL};
	const char *const *list = word_start == 0 ? commands : jobs;
	int i;

	(void)word;
	if (arg)
		(*(int *)arg)++;
	if (word_start > 0 && strncmp(line, "help", 4) == 0)
		return; /* nothing to offer */
	for (i = 0; list[i]; i++)
		lineedit_candidates_add(out, list[i]);
	if (word_start == 0)
		lineedit_candidates_add(out, "step"); /* a duplicate: counted once */
}

/* Completes the word before the cursor: N candidates, the line then TEXT. */
static void completes(lineedit *le, int *calls, int n, const char *text)
{
	assert_int_equal(lineedit_complete(le, offer, calls, NULL), n);
	assert_string_equal(lineedit_text(le), text);
}

static void test_complete(void **state)
{
	lineedit *le = *state;
	lineedit_candidates m;
	int calls = 0;

	/* A unique candidate completes the word and adds a space. */
	type(le, "pa");
	completes(le, &calls, 1, "pause ");
	assert_int_equal(calls, 1);

	/* Several: the longest common prefix, and the list. */
	lineedit_reset(le);
	type(le, "s");
	assert_int_equal(lineedit_complete(le, offer, &calls, &m), 3);
	assert_int_equal(m.n, 3);
	assert_string_equal(m.items[0], "step");
	lineedit_candidates_free(&m);
	assert_string_equal(lineedit_text(le), "s");
	type(le, "t");
	completes(le, &calls, 1, "step ");

	/* The second word: job ids; "1" -> common prefix "1". */
	type(le, "1");
	completes(le, &calls, 3, "step 1");
	type(le, "2");
	completes(le, &calls, 2, "step 12"); /* 12, 120 */

	/* No candidate: nothing changes. */
	lineedit_set(le, "xyz");
	completes(le, &calls, 0, "xyz");
	lineedit_set(le, "help ");
	completes(le, &calls, 0, "help ");

	/* Completion in the middle of the line works on the word before the
	 * cursor and steps over the space that follows. */
	lineedit_set(le, "re 12");
	keys(le, KEY_LEFT, 3);
	completes(le, &calls, 1, "resume 12");
	assert_int_equal(lineedit_cursor(le), 7);
	/* An empty word offers everything and inserts nothing but the common prefix. */
	lineedit_reset(le);
	completes(le, &calls, 7, "");
	assert_int_equal(lineedit_word_start("step 12", 7), 5);
	assert_int_equal(lineedit_word_start("step", 4), 0);
}

static void test_free_accepts_null(void **state)
{
	(void)state;
	lineedit_free(NULL);
	lineedit_candidates_free(NULL);
}

/* The group's setup: the tests type UTF-8. */
static int group_setup(void **state)
{
	(void)state;
	if (!setlocale(LC_CTYPE, "C.UTF-8")) {
		fprintf(stderr, "the C.UTF-8 locale is missing\n");
		return -1;
	}
	return 0;
}

/* A case run on an editor of its own (setup, teardown). */
#define EDITOR_TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

TEST_MAIN(group_setup, NULL,
          EDITOR_TEST(test_insert_and_move),
          EDITOR_TEST(test_emacs_keys),
          EDITOR_TEST(test_actions),
          EDITOR_TEST(test_bounded_buffer),
          EDITOR_TEST(test_utf8_input_and_deletion),
          EDITOR_TEST(test_utf8_invalid_dropped),
          cmocka_unit_test(test_width),
          EDITOR_TEST(test_history_browse),
          EDITOR_TEST(test_history_bound),
          EDITOR_TEST(test_history_file),
          EDITOR_TEST(test_complete),
          cmocka_unit_test(test_free_accepts_null),)
