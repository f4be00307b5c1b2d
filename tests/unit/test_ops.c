/* The operation layer's error mapping (tui/common/ops.h; issue 11, "Also build"):
 * one table gives a status's words in the CLI and the console and its exit
 * code, so the two front ends cannot word the same failure differently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "cli.h"
#include "ops.h"

static cleanup_error error_from_sqlstate(const char *sqlstate, const char *message)
{
	cleanup_error e;

	cleanup_error_clear(&e);
	snprintf(e.sqlstate, sizeof e.sqlstate, "%s", sqlstate);
	e.status = cleanup_status_from_sqlstate(sqlstate);
	snprintf(e.message, sizeof e.message, "%s", message);
	return e;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* PRODUCT.md's exit codes, from a SQLSTATE through the status. */
static void test_sqlstate_maps_to_the_product_exit_codes(void **state)
{
	(void)state;
	assert_int_equal(tui_op_exit_code(cleanup_status_from_sqlstate("55P03"), false), 3);
	assert_int_equal(tui_op_exit_code(cleanup_status_from_sqlstate("40P01"), false), 3);
	assert_int_equal(tui_op_exit_code(cleanup_status_from_sqlstate("CU401"), false), 4);
	assert_int_equal(tui_op_exit_code(cleanup_status_from_sqlstate("CUA01"), false), 4);
	assert_int_equal(tui_op_exit_code(cleanup_status_from_sqlstate("CU101"), false), 2);
	assert_int_equal(tui_op_exit_code(cleanup_status_from_sqlstate("CU001"), false), 1);
	assert_int_equal(tui_op_exit_code(cleanup_status_from_sqlstate("08006"), false), 1);
	assert_int_equal(tui_op_exit_code(cleanup_status_from_sqlstate("XX000"), false), 1);
	assert_int_equal(tui_op_exit_code(CLEANUP_OK, false), 0);
	assert_int_equal(tui_op_exit_code(CLEANUP_EINVAL, false), EXIT_USAGE);
}

/* A Ctrl-C wins over the status: 130, also after a success or a busy. */
static void test_interrupted_is_130_whatever_the_status(void **state)
{
	(void)state;
	assert_int_equal(tui_op_exit_code(CLEANUP_OK, true), 130);
	assert_int_equal(tui_op_exit_code(CLEANUP_EBUSY, true), 130);
	assert_int_equal(tui_op_exit_code(CLEANUP_ECONN, true), 130);
	assert_int_equal(EXIT_INTERRUPTED, 130);
}

/* Busy (55P03, "busy, retry later" in one place: STYLE.md rule 5) and
 * refused read the same in the CLI and the console. */
static void test_busy_and_refused_read_the_same_in_both_front_ends(void **state)
{
	cleanup_error busy = error_from_sqlstate("55P03", "job 7 is locked");
	cleanup_error refused = error_from_sqlstate("CU401", "job 7 is draining");
	char cli[1024], con[1024];

	(void)state;
	tui_op_error_text(cli, sizeof cli, "", &busy, TUI_FRONT_CLI);
	tui_op_error_text(con, sizeof con, "", &busy, TUI_FRONT_CONSOLE);
	assert_string_equal(cli, "busy, retry later: job 7 is locked");
	assert_string_equal(con, cli);
	tui_op_error_text(cli, sizeof cli, NULL, &refused, TUI_FRONT_CLI);
	tui_op_error_text(con, sizeof con, NULL, &refused, TUI_FRONT_CONSOLE);
	assert_string_equal(cli, "refused: job 7 is draining");
	assert_string_equal(con, cli);
}

/* The console's message line names the other failures; the CLI's stderr
 * line and exit code already do. */
static void test_console_names_connection_loss_and_other_failures(void **state)
{
	cleanup_error lost = error_from_sqlstate("08006", "server closed the connection");
	cleanup_error other = error_from_sqlstate("CU001", "job 99 does not exist");
	char buf[1024];

	(void)state;
	assert_string_equal(tui_op_error_text(buf, sizeof buf, "step job 3", &lost, TUI_FRONT_CONSOLE),
	                    "step job 3: connection lost: server closed the connection");
	assert_string_equal(tui_op_error_text(buf, sizeof buf, "step job 3", &lost, TUI_FRONT_CLI),
	                    "step job 3: server closed the connection");
	assert_string_equal(tui_op_error_text(buf, sizeof buf, "pause job 99", &other, TUI_FRONT_CONSOLE),
	                    "pause job 99: failed: job 99 does not exist");
	/* a status the table does not list reads as an error */
	assert_ptr_equal(tui_op_error_lookup(-99), tui_op_error_lookup(CLEANUP_ERROR));
	assert_ptr_equal(tui_op_error_lookup(CLEANUP_ENOMEM), tui_op_error_lookup(CLEANUP_ERROR));
}

/* The console colours an outcome as the table says: done, nothing done
 * (busy, refused: a warning), failed (danger). */
static void test_console_colours_outcomes_from_the_table(void **state)
{
	(void)state;
	assert_int_equal(tui_op_error_severity(CLEANUP_OK), TUI_OP_SEVERITY_OK);
	assert_int_equal(tui_op_error_severity(CLEANUP_EBUSY), TUI_OP_SEVERITY_WARNING);
	assert_int_equal(tui_op_error_severity(CLEANUP_EREFUSED), TUI_OP_SEVERITY_WARNING);
	assert_int_equal(tui_op_error_severity(CLEANUP_ECONN), TUI_OP_SEVERITY_DANGER);
	assert_int_equal(tui_op_error_severity(CLEANUP_ENOTFOUND), TUI_OP_SEVERITY_DANGER);
	assert_int_equal(tui_op_error_severity(CLEANUP_EINVAL), TUI_OP_SEVERITY_DANGER);
}

/* Every status: both front ends' words are the table's row, and the text
 * starts with them. */
static void test_both_front_ends_word_every_status_from_one_row(void **state)
{
	static const int statuses[] = {CLEANUP_ERROR,     CLEANUP_EINVAL, CLEANUP_EBUSY, CLEANUP_EREFUSED,
	                               CLEANUP_ENOTFOUND, CLEANUP_ECONN,  CLEANUP_ENOMEM};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
		const tui_op_error_words *w = tui_op_error_lookup(statuses[i]);
		cleanup_error e;
		char cli[1024], con[1024];

		cleanup_error_clear(&e);
		e.status = statuses[i];
		snprintf(e.message, sizeof e.message, "m");
		assert_ptr_equal(tui_op_error_prefix(statuses[i], TUI_FRONT_CLI), w->cli_prefix);
		assert_ptr_equal(tui_op_error_prefix(statuses[i], TUI_FRONT_CONSOLE), w->console_prefix);
		tui_op_error_text(cli, sizeof cli, "", &e, TUI_FRONT_CLI);
		tui_op_error_text(con, sizeof con, "", &e, TUI_FRONT_CONSOLE);
		assert_true(starts_with(cli, w->cli_prefix));
		assert_true(starts_with(con, w->console_prefix));
		assert_int_equal(tui_op_error_severity(statuses[i]), w->severity);
		/* the console's words never contradict the CLI's: the CLI's are
		 * the same or none */
		assert_true(w->cli_prefix[0] == '\0' || strcmp(w->cli_prefix, w->console_prefix) == 0);
	}
}

/* The CLI's error line (cli_fail) is the table's words, and its exit code
 * the table's: what it prints to stderr is captured. */
static void test_cli_fail_prints_the_tables_words_and_exit_code(void **state)
{
	cleanup_error busy = error_from_sqlstate("55P03", "library 4 is being fenced");
	cli_ctx ctx;
	char path[] = "/tmp/test_ops_XXXXXX", out[2048], want[1200];
	int fd = mkstemp(path), saved = dup(STDERR_FILENO), code;
	FILE *f;
	size_t n;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	memset(&ctx, 0, sizeof ctx);
	fflush(stderr);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	code = cli_fail(&ctx, &busy);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof out - 1, f);
	out[n] = '\0';
	fclose(f);
	unlink(path);
	assert_int_equal(code, tui_op_exit_code(CLEANUP_EBUSY, false));
	{
		char text[1100];

		snprintf(want, sizeof want, "cleanupctl: %s\n",
		         tui_op_error_text(text, sizeof text, "", &busy, TUI_FRONT_CLI));
	}
	assert_string_equal(out, want);
	assert_string_equal(out, "cleanupctl: busy, retry later: library 4 is being fenced\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sqlstate_maps_to_the_product_exit_codes),
	    cmocka_unit_test(test_interrupted_is_130_whatever_the_status),
	    cmocka_unit_test(test_busy_and_refused_read_the_same_in_both_front_ends),
	    cmocka_unit_test(test_console_names_connection_loss_and_other_failures),
	    cmocka_unit_test(test_both_front_ends_word_every_status_from_one_row),
	    cmocka_unit_test(test_console_colours_outcomes_from_the_table),
	    cmocka_unit_test(test_cli_fail_prints_the_tables_words_and_exit_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
