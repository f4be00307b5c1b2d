/* Key dispatch of the console (tui/console/keys.h): movement, panels, overlays,
 * actions, the read-only mode hiding every action, the help table listing
 * every command, and the refresh-interval ladder of + and -. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <curses.h>
#include "keys.h"
#include "test_main.h"

static void test_keys_navigation(void **state)
{
	(void)state;
	assert_int_equal(keys_dispatch('j', false), CMD_DOWN);
	assert_int_equal(keys_dispatch(KEY_DOWN, false), CMD_DOWN);
	assert_int_equal(keys_dispatch('k', false), CMD_UP);
	assert_int_equal(keys_dispatch(KEY_UP, false), CMD_UP);
	assert_int_equal(keys_dispatch('\t', false), CMD_NEXT_PANEL);
	assert_int_equal(keys_dispatch(KEY_BTAB, false), CMD_PREV_PANEL);
	assert_int_equal(keys_dispatch('\n', false), CMD_OPEN);
	assert_int_equal(keys_dispatch(KEY_ENTER, false), CMD_OPEN);
	assert_int_equal(keys_dispatch('?', false), CMD_HELP);
	assert_int_equal(keys_dispatch('p', false), CMD_PAUSE_DISPLAY);
	assert_int_equal(keys_dispatch('q', false), CMD_QUIT);
	assert_int_equal(keys_dispatch('+', false), CMD_SLOWER);
	assert_int_equal(keys_dispatch('-', false), CMD_FASTER);
	assert_int_equal(keys_dispatch(':', false), CMD_CMDLINE);
	assert_int_equal(keys_dispatch(27, false), CMD_CLOSE);
	assert_int_equal(keys_dispatch(KEY_NPAGE, false), CMD_PAGE_DOWN);
	assert_int_equal(keys_dispatch('G', false), CMD_END);
	assert_int_equal(keys_dispatch('z', false), CMD_NONE);
	assert_int_equal(keys_dispatch(KEY_RESIZE, false), CMD_NONE);
}

static void test_keys_actions_and_readonly(void **state)
{
	static const struct {
		int key;
		tui_cmd cmd;
	} actions[] = {{'s', CMD_STEP},    {'r', CMD_RUN},  {'t', CMD_STOP_RUN}, {'P', CMD_PAUSE_JOB},
	               {'x', CMD_CANCEL},  {'S', CMD_SEAL}, {'v', CMD_PREVIEW},  {'D', CMD_REMOVE}};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof actions / sizeof actions[0]; i++) {
		assert_int_equal(keys_dispatch(actions[i].key, false), actions[i].cmd);
		assert_true(keys_is_action(actions[i].cmd));
		/* --readonly hides every action */
		assert_int_equal(keys_dispatch(actions[i].key, true), CMD_NONE);
	}
	/* p pauses the display, P the job: case matters */
	assert_int_equal(keys_dispatch('p', true), CMD_PAUSE_DISPLAY);
	assert_false(keys_is_action(CMD_PAUSE_DISPLAY));
	assert_false(keys_is_action(CMD_QUIT));
	assert_int_equal(keys_dispatch('q', true), CMD_QUIT);
	assert_int_equal(keys_dispatch(':', true), CMD_CMDLINE);
}

/* Every command a key produces appears in the help table, and every row of
 * the table names a command that some key produces. */
static void test_keys_help_lists_every_key(void **state)
{
	bool produced[CMD__COUNT] = {false}, listed[CMD__COUNT] = {false};
	const key_help *t;
	size_t n, i;
	int key, c;

	(void)state;
	for (key = 0; key < KEY_MAX; key++)
		produced[keys_dispatch(key, false)] = true;
	t = keys_help_table(&n);
	assert_true(n > 10);
	for (i = 0; i < n; i++) {
		assert_non_null(t[i].keys);
		assert_true(strlen(t[i].what) > 3);
		listed[t[i].cmd] = true;
		assert_true(produced[t[i].cmd]);
	}
	/* pairs listed on one line */
	listed[CMD_PAGE_UP] = listed[CMD_PAGE_DOWN];
	listed[CMD_END] = listed[CMD_HOME];
	listed[CMD_PREV_PANEL] = listed[CMD_NEXT_PANEL];
	listed[CMD_FASTER] = listed[CMD_SLOWER];
	listed[CMD_PREV_GAP] = listed[CMD_NEXT_GAP];
	for (c = CMD_NONE + 1; c < CMD__COUNT; c++)
		if (produced[c])
			assert_true(listed[c]);
}

static void test_keys_interval_ladder(void **state)
{
	(void)state;
	assert_int_equal(keys_next_interval(1000, +1), 2000);
	assert_int_equal(keys_next_interval(1000, -1), 500);
	assert_int_equal(keys_next_interval(250, -1), 250);
	assert_int_equal(keys_next_interval(60000, +1), 60000);
	assert_int_equal(keys_next_interval(1500, +1), 2000);
	assert_int_equal(keys_next_interval(1500, -1), 1000);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_keys_navigation),
          cmocka_unit_test(test_keys_actions_and_readonly),
          cmocka_unit_test(test_keys_help_lists_every_key),
          cmocka_unit_test(test_keys_interval_ladder),)
