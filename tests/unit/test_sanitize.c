/* Unit tests of the terminal sanitizer (tui/common/sanitize.c): no ESC, C0, DEL,
 * C1, bidi override or invalid UTF-8 byte survives, printable UTF-8 passes
 * unchanged, and cuts never split a character. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sanitize.h"
#include "test_main.h"

static void check(const char *in, const char *want)
{
	char buf[256];

	tui_sanitize(buf, sizeof buf, in);
	if (strcmp(buf, want) != 0)
		fail_msg("sanitize(\"%s\") = \"%s\", want \"%s\"", in, buf, want);
	assert_true(tui_is_safe(buf));
	assert_int_equal(tui_is_safe(in), strcmp(in, want) == 0);
}

static void test_controls_become_question_marks(void **state)
{
	(void)state;
	check("plain", "plain");
	check("a\x1b[2Jb", "a?[2Jb");                      /* ESC */
	check("title\x1b]0;pwned\x07", "title?]0;pwned?"); /* OSC and BEL */
	check("tab\there\nnl\rcr", "tab?here?nl?cr");
	check("del\x7f", "del?");
	check("c1 \xc2\x9b"
	      "31m csi",
	      "c1 ?31m csi");                     /* U+009B, a one-character CSI */
	check("\xc2\x85next-line", "?next-line"); /* U+0085 */
	check("bidi \xe2\x80\xae"
	      "evil",
	      "bidi ?evil");                               /* U+202E */
	check("iso \xe2\x81\xa6x\xe2\x81\xa9", "iso ?x?"); /* U+2066, U+2069 */
	check("sep\xe2\x80\xa8", "sep?");                  /* U+2028 */
}

static void test_invalid_utf8_bytes(void **state)
{
	(void)state;
	check("\xff", "?");
	check("a\x80"
	      "b",
	      "a?b");                      /* stray continuation */
	check("\xc0\xaf", "??");           /* overlong '/' */
	check("\xe0\x80\xaf", "???");      /* overlong */
	check("\xed\xa0\x80", "???");      /* surrogate U+D800 */
	check("\xf4\x90\x80\x80", "????"); /* above U+10FFFF */
	check("cut \xe2\x82", "cut ??");   /* truncated sequence */
	check("\xc3(", "?(");
}

static void test_printable_utf8_passes(void **state)
{
	(void)state;
	check("Bibliothèque", "Bibliothèque");
	check("日本語", "日本語");
	check("emoji \xf0\x9f\x8e\xac", "emoji \xf0\x9f\x8e\xac");
	check("nbsp\xc2\xa0ok", "nbsp\xc2\xa0ok"); /* U+00A0 is not C1 */
}

static void test_cells_cut_by_characters(void **state)
{
	char buf[64], tiny[5];

	(void)state;
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "abc", 5), "abc  ");
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "abcdefgh", 5), "abcde");
	/* Five characters of two bytes each: never half a character. */
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "ééééééé", 5), "ééééé");
	assert_string_equal(tui_sanitize_cell(buf, sizeof buf, "\x1b\x1b", 3), "?? ");
	/* A small buffer cuts at a character boundary. */
	tui_sanitize(tiny, sizeof tiny, "éééé");
	assert_string_equal(tiny, "éé");
	tui_sanitize(tiny, sizeof tiny, NULL);
	assert_string_equal(tiny, "");
}

static void test_fputs_safe(void **state)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	(void)state;
	assert_non_null(f);
	tui_fputs_safe("x\x1b[31my\xff\xc2\x9bz", f);
	fclose(f);
	assert_string_equal(mem, "x?[31my??z");
	free(mem);
}

static void test_decoder(void **state)
{
	int32_t cp;

	(void)state;
	assert_int_equal(tui_utf8_next("A", 1, &cp), 1);
	assert_int_equal(cp, 'A');
	assert_int_equal(tui_utf8_next("\xc3\xa9", 2, &cp), 2);
	assert_int_equal(cp, 0xE9);
	assert_int_equal(tui_utf8_next("\xe2\x82\xac", 3, &cp), 3);
	assert_int_equal(cp, 0x20AC);
	assert_int_equal(tui_utf8_next("\xf0\x9f\x8e\xac", 4, &cp), 4);
	assert_int_equal(cp, 0x1F3AC);
	/* N limits the read: a sequence running past it is bad. */
	assert_int_equal(tui_utf8_next("\xe2\x82\xac", 2, &cp), 1);
	assert_int_equal(cp, -1);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_controls_become_question_marks),
          cmocka_unit_test(test_invalid_utf8_bytes),
          cmocka_unit_test(test_printable_utf8_passes),
          cmocka_unit_test(test_cells_cut_by_characters),
          cmocka_unit_test(test_fputs_safe),
          cmocka_unit_test(test_decoder),)
