/* Unit tests of display-width cells (tui/common/sanitize.c):
 * names are text, not bytes. A cell is cut by terminal columns at a
 * character boundary: wide CJK takes two columns and is never split over
 * the cell's edge, combining marks stay with their base, four-byte
 * characters are whole, and every cell is valid UTF-8 of exactly its
 * width. The table does not depend on the locale. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cleanup/engine.h"
#include "sanitize.h"
#include "test_main.h"

/* True when S is valid UTF-8 from start to end. */
static int valid_utf8(const char *s)
{
	size_t n = strlen(s), i = 0;

	while (i < n) {
		int32_t cp;

		i += tui_utf8_next(s + i, n - i, &cp);
		if (cp < 0)
			return 0;
	}
	return 1;
}

/* COUNT copies of CH (one UTF-8 character) into a malloc'd string. */
static char *repeat(const char *ch, size_t count)
{
	size_t l = strlen(ch), i;
	char *s = malloc(l * count + 1);

	assert_non_null(s);
	for (i = 0; i < count; i++)
		memcpy(s + i * l, ch, l);
	s[l * count] = '\0';
	return s;
}

static void test_widths_of_code_points(void **state)
{
	(void)state;
	assert_int_equal(tui_char_width('A'), 1);
	assert_int_equal(tui_char_width(0xE9), 1);    /* é */
	assert_int_equal(tui_char_width(0x00AD), 1);  /* soft hyphen is drawn */
	assert_int_equal(tui_char_width(0x0301), 0);  /* combining acute */
	assert_int_equal(tui_char_width(0x200B), 0);  /* zero width space */
	assert_int_equal(tui_char_width(0xFE0F), 0);  /* variation selector */
	assert_int_equal(tui_char_width(0x65E5), 2);  /* 日 */
	assert_int_equal(tui_char_width(0xAC00), 2);  /* 가 */
	assert_int_equal(tui_char_width(0xFF21), 2);  /* fullwidth A */
	assert_int_equal(tui_char_width(0x1F3AC), 2); /* 🎬 */
	assert_int_equal(tui_char_width(0x20000), 2); /* CJK extension B */
	assert_int_equal(tui_char_width(0x10348), 1); /* Gothic hwair: 4 bytes, narrow */
	assert_int_equal(tui_char_width(0x20AC), 1);  /* € */
	/* Unsafe code points and bad bytes are drawn as one '?'. */
	assert_int_equal(tui_char_width(0x1B), 1);
	assert_int_equal(tui_char_width(0x202E), 1);
	assert_int_equal(tui_char_width(-1), 1);
}

static void test_text_width(void **state)
{
	(void)state;
	assert_int_equal(tui_text_width("abc"), 3);
	assert_int_equal(tui_text_width("日本語"), 6);
	assert_int_equal(tui_text_width("e\xcc\x81"), 1); /* e + U+0301 */
	assert_int_equal(tui_text_width("\xf0\x9f\x8e\xac!"), 3);
	assert_int_equal(tui_text_width("\xc3"), 1); /* a bad byte: '?' */
	assert_int_equal(tui_text_width(NULL), 0);
}

static void test_cells_of_wide_characters_fill_exact_columns(void **state)
{
	char buf[CLEANUP_NAME_SIZE];

	(void)state;
	/* Four columns hold two CJK characters. */
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "日本語", 4), "日本");
	/* Five: two characters and a space; the third would overhang. */
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "日本語", 5), "日本 ");
	assert_int_equal(tui_text_width(buf), 5);
	/* Short wide text is padded to the width in columns, not characters. */
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "日", 4), "日  ");
	/* One column cannot hold a wide character: a space. */
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "日", 1), " ");
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "a\xf0\x9f\x8e\xac" "b", 3), "a\xf0\x9f\x8e\xac");
}

static void test_combining_marks_stay_with_their_base(void **state)
{
	char buf[64];

	(void)state;
	/* "éé" written as e + U+0301 twice: two columns, four characters. */
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "e\xcc\x81" "e\xcc\x81" "x", 2), "e\xcc\x81" "e\xcc\x81");
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "e\xcc\x81", 3), "e\xcc\x81  ");
	/* A mark whose base was cut is not kept alone. */
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "a日\xcc\x81", 2), "a ");
}

/* tui_sanitize_cut: the same cut, no padding. */
static void test_cut_without_padding(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(tui_sanitize_cut(buf, sizeof buf, "日本語", 5), "日本");
	assert_string_equal(tui_sanitize_cut(buf, sizeof buf, "ab", 5), "ab");
	assert_string_equal(tui_sanitize_cut(buf, sizeof buf, "e\xcc\x81x", 1), "e\xcc\x81");
	assert_string_equal(tui_sanitize_cut(buf, sizeof buf, "a\x1b", 0), "a?");
}

/* Names at the schema's limit: 200 characters of 2, 3 and 4 bytes, wide
 * and with combining marks. A cell of any width is valid UTF-8 with the
 * cell's width; a whole copy (width 0) into CLEANUP_NAME_SIZE keeps every
 * byte. */
static void test_names_at_the_limit(void **state)
{
	static const char *const chars[] = {"é", "€", "日", "\xf0\x9f\x8e\xac", "\xf0\x90\x8d\x88", "e\xcc\x81"};
	char buf[CLEANUP_NAME_SIZE], *name;
	size_t i, w;

	(void)state;
	for (i = 0; i < sizeof chars / sizeof chars[0]; i++) {
		name = repeat(chars[i], i == 5 ? 100 : 200); /* e + mark: 200 characters */
		assert_true(strlen(name) < sizeof buf);
		tui_sanitize(buf, sizeof buf, name);
		assert_string_equal(buf, name);
		for (w = 1; w <= 30; w++) {
			tui_sanitize_cell(buf, sizeof buf, name, w);
			assert_true(valid_utf8(buf));
			assert_int_equal(tui_text_width(buf), w);
		}
		/* A buffer too small for the name cuts it at a boundary. */
		tui_sanitize(buf, 208, name);
		assert_true(valid_utf8(buf));
		assert_true(strlen(buf) <= 207 && strlen(buf) >= 204);
		free(name);
	}
}

/* cleanup_text_copy (core, error.h): copies cut at character boundaries,
 * as col_copy and every error record now are. */
static void test_text_copy_cuts_at_character_boundaries(void **state)
{
	char buf[8], big[CLEANUP_NAME_SIZE];
	char *name = repeat("\xc3\xa9", 200);

	(void)state;
	assert_int_equal(cleanup_text_copy(buf, sizeof buf, "abc"), 3);
	assert_string_equal(buf, "abc");
	/* 7 bytes of room: three é (6 bytes), never half of the fourth. */
	assert_int_equal(cleanup_text_copy(buf, sizeof buf, "éééé"), 6);
	assert_string_equal(buf, "ééé");
	assert_int_equal(cleanup_text_copy(buf, 6, "€€€"), 3);
	assert_string_equal(buf, "€");
	assert_int_equal(cleanup_text_copy(buf, 5, "\xf0\x9f\x8e\xac" "x"), 4);
	assert_int_equal(cleanup_text_copy(buf, 4, "\xf0\x9f\x8e\xac"), 0);
	assert_string_equal(buf, "");
	assert_int_equal(cleanup_text_copy(buf, sizeof buf, NULL), 0);
	/* The 113-character name of the bug report ended in a lone 0xC3 at 207
	 * bytes: a 208-byte copy now keeps 103 whole characters. */
	assert_int_equal(cleanup_text_copy(big, 208, name), 206);
	assert_true(valid_utf8(big));
	assert_int_equal(cleanup_text_copy(big, sizeof big, name), 400);
	assert_string_equal(big, name);
	free(name);
}

/* Error records cut at character boundaries too (cleanup_error_set). */
static void test_error_messages_cut_at_character_boundaries(void **state)
{
	cleanup_error err;
	char *name = repeat("\xe2\x82\xac", 600); /* 1800 bytes */

	(void)state;
	cleanup_error_set(&err, CLEANUP_EINVAL, "x%s", name);
	assert_true(strlen(err.message) <= CLEANUP_ERR_TEXT - 1);
	assert_true(valid_utf8(err.message));
	assert_int_equal((strlen(err.message) - 1) % 3, 0);
	cleanup_error_hint(&err, "%s", name);
	assert_true(valid_utf8(err.hint));
	free(name);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_widths_of_code_points),
          cmocka_unit_test(test_text_width),
          cmocka_unit_test(test_cells_of_wide_characters_fill_exact_columns),
          cmocka_unit_test(test_combining_marks_stay_with_their_base),
          cmocka_unit_test(test_cut_without_padding),
          cmocka_unit_test(test_names_at_the_limit),
          cmocka_unit_test(test_text_copy_cuts_at_character_boundaries),
          cmocka_unit_test(test_error_messages_cut_at_character_boundaries),)
