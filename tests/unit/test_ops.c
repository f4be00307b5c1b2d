/* The operation layer's error mapping (tui/common/ops.h):
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
#include <time.h>
#include "cli.h"
#include "console_int.h"
#include "ops.h"
#include "test_main.h"
#include "unit_support.h"

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
	/* A write on a hot standby (read_only_sql_transaction): its own code. */
	assert_int_equal(cleanup_status_from_sqlstate("25006"), CLEANUP_EREADONLY);
	assert_int_equal(tui_op_exit_code(cleanup_status_from_sqlstate("25006"), false), 5);
	assert_int_equal(EXIT_READONLY, 5);
	assert_string_equal(cleanup_status_name(CLEANUP_EREADONLY), "read-only-server");
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

/* Starts capturing stderr into a temporary file: *SAVED and *FD to give
 * to capture_end. */
static void capture_begin(int *saved, int *fd, char *path)
{
	*fd = mkstemp(path);
	*saved = dup(STDERR_FILENO);
	assert_true(*fd >= 0 && *saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(*fd, STDERR_FILENO), STDERR_FILENO);
}

/* Ends the capture: stderr back, what was written into OUT (LEN > 0). */
static void capture_end(int saved, int fd, const char *path, char *out, size_t len)
{
	FILE *f;
	size_t n;

	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
	unlink(path);
}

/* The CLI's error line (cli_fail) is the table's words, and its exit code
 * the table's: what it prints to stderr is captured. */
static void test_cli_fail_prints_the_tables_words_and_exit_code(void **state)
{
	cleanup_error busy = error_from_sqlstate("55P03", "library 4 is being fenced");
	cli_ctx ctx;
	char path[] = "/tmp/test_ops_XXXXXX", out[2048], want[1200], text[1100];
	int fd, saved, code;

	(void)state;
	memset(&ctx, 0, sizeof ctx);
	capture_begin(&saved, &fd, path);
	code = cli_fail(&ctx, &busy);
	capture_end(saved, fd, path, out, sizeof out);
	assert_int_equal(code, tui_op_exit_code(CLEANUP_EBUSY, false));
	snprintf(want, sizeof want, "cleanupctl: %s\n", tui_op_error_text(text, sizeof text, "", &busy, TUI_FRONT_CLI));
	assert_string_equal(out, want);
	assert_string_equal(out, "cleanupctl: busy, retry later: library 4 is being fenced\n");
}

/* What cli_parse_id() prints on stderr for S (into OUT) and whether it
 * accepted S (*ID then). */
static bool cli_id_captured(const char *s, int64_t *id, char *out, size_t len)
{
	cli_ctx ctx;
	char path[] = "/tmp/test_ops_XXXXXX";
	int fd, saved;
	bool ok;

	memset(&ctx, 0, sizeof ctx);
	capture_begin(&saved, &fd, path);
	ok = cli_parse_id(&ctx, "job id", s, id);
	capture_end(saved, fd, path, out, len);
	return ok;
}

/* One id rule under both front ends. The console's `:` commands
 * used strtoll (" 5", "+5" and, by its own check, nothing else odd); now
 * each of these inputs is accepted or refused alike by the CLI's
 * cli_parse_id and the console's console_parse_id_arg, with the same
 * value, and the console's message carries the CLI's words. "05" is the
 * CLI's rule: digits, so 5. */
static void test_ids_are_parsed_alike_by_the_cli_and_the_console(void **state)
{
	static const struct {
		const char *s;
		bool ok;
		int64_t v;
		const char *why;
	} cases[] = {
		{"5", true, 5, NULL},
		{"05", true, 5, NULL},
		{"9223372036854775807", true, INT64_MAX, NULL},
		{"+5", false, 0, "digits only: no sign, space or prefix"},
		{" 5", false, 0, "digits only: no sign, space or prefix"},
		{"", false, 0, "an empty value"},
		{"5x", false, 0, "digits only: no spaces, letters, prefixes or fractions"},
		{"-1", false, 0, "digits only: no sign, space or prefix"},
		{"0", false, 0, "out of range"},
		{"9223372036854775808", false, 0, "out of range"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t cli_v = -7, con_v = -7;
		char cli_out[2048], con_msg[2048], cli_line[1024];
		bool cli_ok = cli_id_captured(cases[i].s, &cli_v, cli_out, sizeof cli_out);
		bool con_ok = console_parse_id_arg(&con_v, con_msg, sizeof con_msg, "pause", "job id", cases[i].s,
		                                   "pause JOB");

		assert_int_equal(cli_ok, cases[i].ok);
		assert_int_equal(con_ok, cases[i].ok);
		if (cases[i].ok) {
			assert_int_equal(cli_v, cases[i].v);
			assert_int_equal(con_v, cases[i].v);
			assert_string_equal(cli_out, "");
			continue;
		}
		assert_int_equal(cli_v, -7); /* untouched on failure */
		assert_int_equal(con_v, -7);
		/* the CLI's first line: "cleanupctl: job id must be ...: RULE" */
		assert_true(starts_with(cli_out, "cleanupctl: "));
		snprintf(cli_line, sizeof cli_line, "%.*s", (int)strcspn(cli_out + 12, "\n"), cli_out + 12);
		assert_non_null(strstr(cli_line, cases[i].why));
		/* the console shows exactly those words */
		assert_true(starts_with(con_msg, "pause: "));
		assert_true(starts_with(con_msg + 7, cli_line));
		assert_string_equal(con_msg + 7 + strlen(cli_line), " (usage: pause JOB)");
	}
}

/* One success wording. The CLI printed "paused job N: ..."
 * while the console said "pause: job N is now paused"; both now print
 * the table's verb and the job line, a seal where it fenced, a removal
 * that admission is closed. */
static void test_success_reads_the_same_in_both_front_ends(void **state)
{
	cleanup_job j;
	char buf[1024];

	(void)state;
	memset(&j, 0, sizeof j);
	j.id = 12;
	snprintf(j.kind, sizeof j.kind, "prune");
	j.library_id = 3;
	snprintf(j.target_name, sizeof j.target_name, "Movies");
	snprintf(j.phase, sizeof j.phase, "paused");
	assert_string_equal(tui_op_done_text(buf, sizeof buf, ACT_PAUSE, &j),
	                    "paused job 12: prune of library 3 (Movies), phase paused, step 0");
	snprintf(j.phase, sizeof j.phase, "collecting");
	assert_string_equal(tui_op_done_text(buf, sizeof buf, ACT_RESUME, &j),
	                    "resumed job 12: prune of library 3 (Movies), phase collecting, step 0");
	snprintf(j.phase, sizeof j.phase, "cancelled");
	assert_string_equal(tui_op_done_text(buf, sizeof buf, ACT_CANCEL, &j),
	                    "cancelled job 12: prune of library 3 (Movies), phase cancelled, step 0");
	snprintf(j.phase, sizeof j.phase, "draining");
	j.high_water_id = 20000;
	assert_string_equal(tui_op_done_text(buf, sizeof buf, ACT_SEAL, &j),
	                    "sealed job 12: prune of library 3 (Movies), phase draining, step 0; library fenced at "
	                    "high-water id 20000");
	snprintf(j.phase, sizeof j.phase, "collecting");
	assert_string_equal(tui_op_created_text(buf, sizeof buf, &j),
	                    "created job 12: prune of library 3 (Movies), phase collecting, step 0");
	snprintf(j.kind, sizeof j.kind, "remove-server");
	j.server_id = 2;
	snprintf(j.phase, sizeof j.phase, "draining");
	assert_string_equal(tui_op_created_text(buf, sizeof buf, &j),
	                    "created job 12: remove-server of server 2 (Movies), phase draining, step 0; admission is "
	                    "closed");
	assert_string_equal(tui_op_done_text(buf, sizeof buf, ACT_REMOVE_SERVER, &j),
	                    tui_op_created_text(buf + 512, 512, &j));
	/* a step or a run says what it did in its own lines: no verb */
	assert_null(tui_op_done_verb(ACT_STEP));
	assert_null(tui_op_done_verb(ACT_RUN));
	/* a name from the database is made terminal-safe */
	snprintf(j.target_name, sizeof j.target_name, "a\033[2Jb");
	assert_null(strchr(tui_op_job_line(buf, sizeof buf, &j), '\033'));
}

typedef struct wait_probe {
	int told;        /* RETRYING calls */
	double last_left;
	int stop_after;  /* STOP says stop from this call on (0: never) */
	int stop_calls;
} wait_probe;

static bool probe_stop(void *arg)
{
	wait_probe *p = arg;

	p->stop_calls++;
	return p->stop_after > 0 && p->stop_calls >= p->stop_after;
}

static void probe_retrying(const tui_op_wait *w, const cleanup_error *err, double left_s, void *arg)
{
	wait_probe *p = arg;

	(void)w;
	assert_int_equal(err->status, CLEANUP_EBUSY);
	p->told++;
	p->last_left = left_s;
}

/* The one retry rule: busy is retried until the deadline and
 * then stands, its detail naming the setting (--wait in the CLI, :wait in
 * the console); a front end is told before each wait how long is left,
 * and a stop ends the wait at once with the busy error kept. */
static void test_busy_is_retried_until_the_deadline_by_one_rule(void **state)
{
	tui_op_wait w;
	wait_probe p;
	cleanup_error err;
	double t0;
	int tries = 0;

	(void)state;
	/* not busy: no retry */
	tui_op_wait_begin(&w, 5, ":wait");
	cleanup_error_clear(&err);
	err.status = CLEANUP_EREFUSED;
	assert_false(tui_op_wait_again(&w, &err));
	/* 0 s: one attempt, the busy answer at once, no note */
	tui_op_wait_begin(&w, 0, ":wait");
	err.status = CLEANUP_EBUSY;
	assert_false(tui_op_wait_again(&w, &err));
	assert_string_equal(err.detail, "");
	/* 0.3 s: retries, told each time, none past the deadline */
	memset(&p, 0, sizeof p);
	t0 = mono_seconds();
	tui_op_wait_begin(&w, 0.3, ":wait");
	w.stop = probe_stop;
	w.retrying = probe_retrying;
	w.arg = &p;
	for (;;) {
		tries++;
		cleanup_error_clear(&err);
		err.status = CLEANUP_EBUSY;
		if (!tui_op_wait_again(&w, &err))
			break;
		assert_int_equal(err.status, CLEANUP_OK);
	}
	assert_true(mono_seconds() - t0 >= 0.3);
	assert_true(tries >= 2 && tries <= 8);
	assert_int_equal(p.told, tries - 1);
	assert_true(p.last_left > 0 && p.last_left <= 0.3);
	assert_int_equal(err.status, CLEANUP_EBUSY);
	assert_non_null(strstr(err.detail, "still busy after :wait 0.3 s ("));
	/* the CLI's wrapper is the same rule, named --wait */
	{
		cli_wait cw;

		cli_wait_begin(&cw, 0.05);
		assert_string_equal(cw.what, "--wait");
		assert_int_equal(cw.delay_ms, TUI_OP_WAIT_FIRST_MS);
	}
	/* a stop during a long wait: false at once, the busy error stands */
	memset(&p, 0, sizeof p);
	p.stop_after = 3;
	t0 = mono_seconds();
	tui_op_wait_begin(&w, 60, ":wait");
	w.stop = probe_stop;
	w.arg = &p;
	cleanup_error_clear(&err);
	err.status = CLEANUP_EBUSY;
	while (tui_op_wait_again(&w, &err)) {
		cleanup_error_clear(&err);
		err.status = CLEANUP_EBUSY;
	}
	assert_true(mono_seconds() - t0 < 5);
	assert_int_equal(err.status, CLEANUP_EBUSY);
	assert_null(strstr(err.detail, "still busy after"));
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_sqlstate_maps_to_the_product_exit_codes),
          cmocka_unit_test(test_interrupted_is_130_whatever_the_status),
          cmocka_unit_test(test_busy_and_refused_read_the_same_in_both_front_ends),
          cmocka_unit_test(test_console_names_connection_loss_and_other_failures),
          cmocka_unit_test(test_both_front_ends_word_every_status_from_one_row),
          cmocka_unit_test(test_console_colours_outcomes_from_the_table),
          cmocka_unit_test(test_cli_fail_prints_the_tables_words_and_exit_code),
          cmocka_unit_test(test_ids_are_parsed_alike_by_the_cli_and_the_console),
          cmocka_unit_test(test_success_reads_the_same_in_both_front_ends),
          cmocka_unit_test(test_busy_is_retried_until_the_deadline_by_one_rule),)
