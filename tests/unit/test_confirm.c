/* The confirmation state machine of console actions (tui/common/confirm.h):
 * which actions need y/N or a typed confirmation, No as the default, a
 * typed confirmation with the wrong text doing nothing, and the binding to
 * the job id, phase and step the dialog showed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <curses.h>
#include "confirm.h"
#include "test_main.h"

static confirm_target job_target(tui_action a, int64_t id, const char *phase, int step_no)
{
	confirm_target t;

	memset(&t, 0, sizeof t);
	t.action = a;
	t.job_id = id;
	snprintf(t.kind, sizeof t.kind, "prune");
	snprintf(t.phase, sizeof t.phase, "%s", phase);
	t.step_no = step_no;
	t.seal_count = 40;
	t.target_id = 7;
	snprintf(t.target_name, sizeof t.target_name, "Movies");
	t.items = -1;
	return t;
}

static confirm_target removal(tui_action a, int64_t id, const char *name)
{
	confirm_target t;

	memset(&t, 0, sizeof t);
	t.action = a;
	t.job_id = -1;
	t.target_id = id;
	snprintf(t.target_name, sizeof t.target_name, "%s", name);
	t.items = 1234;
	return t;
}

static void type(confirm_state *c, const char *s, confirm_result expect_each)
{
	for (; *s; s++)
		assert_int_equal(confirm_key(c, (unsigned char)*s), expect_each);
}

/* Opens the typed dialog for t, types text and answers with Enter. */
static confirm_result answer(confirm_state *c, const confirm_target *t, const char *text)
{
	assert_int_equal(confirm_begin(c, t), CONFIRM_PENDING);
	type(c, text, CONFIRM_PENDING);
	return confirm_key(c, '\n');
}

static void test_confirm_kinds(void **state)
{
	static const struct {
		tui_action action;
		const char *phase; /* NULL: a removal of library or server 5 */
		int step_no;
		int gone;
		confirm_kind expect;
	} cases[] = {
		/* reversible: y/N */
		{ACT_PAUSE, "collecting", 0, 0, CONFIRM_YES_NO},
		{ACT_RESUME, "paused", 0, 0, CONFIRM_YES_NO},
		{ACT_CANCEL, "collecting", 0, 0, CONFIRM_YES_NO},
		{ACT_CANCEL, "paused", 0, 0, CONFIRM_YES_NO},
		{ACT_STEP, "draining", 4, 0, CONFIRM_YES_NO},
		/* irreversible: typed */
		{ACT_STEP, "draining", 0, 0, CONFIRM_TYPED},
		{ACT_RUN, "draining", 7, 0, CONFIRM_TYPED},
		{ACT_SEAL, "collecting", 0, 0, CONFIRM_TYPED},
		{ACT_REMOVE_LIBRARY, NULL, 0, 0, CONFIRM_TYPED},
		{ACT_REMOVE_SERVER, NULL, 0, 0, CONFIRM_TYPED},
		/* nothing to confirm: read-only, or the engine refuses and explains */
		{ACT_PREVIEW, "draining", 0, 0, CONFIRM_NONE},
		/* after the first deletion the engine refuses, saying what is gone */
		{ACT_CANCEL, "draining", 2, 128, CONFIRM_NONE},
		/* a sealed job or removal that has deleted nothing cancels */
		{ACT_CANCEL, "draining", 0, 0, CONFIRM_YES_NO},
		{ACT_CANCEL, "finalizing", 2, 0, CONFIRM_YES_NO},
		{ACT_PAUSE, "draining", 2, 0, CONFIRM_NONE},
		{ACT_STEP, "collecting", 0, 0, CONFIRM_NONE},
		{ACT_SEAL, "draining", 0, 0, CONFIRM_NONE},
	};
	confirm_target t;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (cases[i].phase)
			t = job_target(cases[i].action, 3, cases[i].phase, cases[i].step_no);
		else
			t = removal(cases[i].action, 5, "Movies");
		t.gone = cases[i].gone;
		assert_int_equal(confirm_required(&t), cases[i].expect);
	}
}

static void test_confirm_yes_no_defaults_to_no(void **state)
{
	confirm_target t = job_target(ACT_PAUSE, 3, "collecting", 0);
	confirm_state c;
	static const int no_keys[] = {'\n', '\r', KEY_ENTER, 27, 'n', 'N'};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof no_keys / sizeof no_keys[0]; i++) {
		assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
		assert_true(c.active);
		assert_non_null(strstr(c.question, "[y/N]"));
		assert_int_equal(confirm_key(&c, no_keys[i]), CONFIRM_DECLINED);
		assert_false(c.active);
	}
	/* other keys keep asking; a stray key never acts */
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, 's'), CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, 'x'), CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, 'Y'), CONFIRM_ACCEPTED);
	assert_string_equal(confirm_audit_text(&c), "y");
	assert_false(c.active);
	/* a closed dialog accepts nothing */
	assert_int_equal(confirm_key(&c, 'y'), CONFIRM_DECLINED);
}

static void test_confirm_typed_job_id(void **state)
{
	confirm_target t = job_target(ACT_STEP, 12, "draining", 0);
	confirm_state c;

	(void)state;
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
	assert_int_equal(c.kind, CONFIRM_TYPED);
	/* A phrase naming the kind and the target, not the
	 * job id (often one keystroke) */
	assert_string_equal(c.expect, "prune 7 Movies");
	assert_non_null(strstr(c.question, "FIRST step of job 12"));
	assert_non_null(strstr(c.question, "Type \"prune 7 Movies\""));
	/* y does not confirm an irreversible action, nor does the job id */
	assert_int_equal(confirm_key(&c, 'y'), CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, KEY_BACKSPACE), CONFIRM_PENDING);
	type(&c, "12", CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, '\n'), CONFIRM_MISMATCH);
	assert_int_equal(answer(&c, &t, "prune 7 Movies"), CONFIRM_ACCEPTED);
	assert_string_equal(confirm_audit_text(&c), "prune 7 Movies");
}

static void test_confirm_typed_wrong_text_does_nothing(void **state)
{
	static const char *const wrong[] = {"Movies", "remove-library 5 Movie", "remove-library 5 movies", "5"};
	confirm_target t = removal(ACT_REMOVE_LIBRARY, 5, "Movies");
	confirm_state c;
	size_t i;

	(void)state;
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
	assert_non_null(strstr(c.question, "Type \"remove-library 5 Movies\""));
	assert_non_null(strstr(c.question, "1234 items now"));
	type(&c, "remove-library 5 Movis", CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, '\n'), CONFIRM_MISMATCH);
	assert_false(c.active);
	assert_string_equal(confirm_audit_text(&c), "remove-library 5 Movis");
	/* the name alone is ambiguous (every server has a "Movies"); a prefix,
	 * a different case, the id instead of the name: all mismatch */
	for (i = 0; i < sizeof wrong / sizeof wrong[0]; i++)
		assert_int_equal(answer(&c, &t, wrong[i]), CONFIRM_MISMATCH);
	/* Esc declines; backspace corrects a typo, ^U starts over */
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
	type(&c, "remove-library 5 Moviex", CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, 127), CONFIRM_PENDING);
	type(&c, "s", CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, '\n'), CONFIRM_ACCEPTED);
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
	type(&c, "xyz", CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, 0x15), CONFIRM_PENDING);
	type(&c, "Movies", CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, 27), CONFIRM_DECLINED);
}

static void test_confirm_typed_utf8_name(void **state)
{
	confirm_target t = removal(ACT_REMOVE_SERVER, 9, "Médiathèque");
	confirm_state c;

	(void)state;
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
	type(&c, "remove-server 9 Médiathèqux", CONFIRM_PENDING);
	/* one backspace removes the last character, whatever its bytes */
	assert_int_equal(confirm_key(&c, KEY_BACKSPACE), CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, KEY_BACKSPACE), CONFIRM_PENDING);
	type(&c, "èque", CONFIRM_PENDING);
	assert_string_equal(c.typed, "remove-server 9 Médiathèqèque");
	assert_int_equal(confirm_key(&c, '\n'), CONFIRM_MISMATCH);
	assert_int_equal(answer(&c, &t, "remove-server 9 Médiathèque"), CONFIRM_ACCEPTED);
}

static void test_confirm_no_dialog_when_engine_refuses(void **state)
{
	confirm_target t = job_target(ACT_CANCEL, 4, "draining", 3);
	confirm_state c;

	(void)state;
	t.gone = 1;
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_ACCEPTED);
	assert_false(c.active);
	assert_string_equal(confirm_audit_text(&c), "");
}

/* The dialog binds to the job id, phase and step it displayed. */
static void test_confirm_binding_refuses_when_phase_moved(void **state)
{
	char why[256];
	confirm_target t;

	(void)state;
	t = job_target(ACT_PAUSE, 8, "collecting", 0);
	assert_true(confirm_check_binding(&t, "collecting", 0, why, sizeof why));
	assert_false(confirm_check_binding(&t, "draining", 0, why, sizeof why));
	assert_non_null(strstr(why, "job 8 moved on"));
	assert_non_null(strstr(why, "draining"));
	assert_non_null(strstr(why, "collecting"));
	assert_non_null(strstr(why, "nothing was done"));
	/* a job that is gone */
	assert_false(confirm_check_binding(&t, NULL, 0, why, sizeof why));
	assert_non_null(strstr(why, "gone"));
	/* a step binds to the step number too */
	t = job_target(ACT_STEP, 8, "draining", 5);
	assert_true(confirm_check_binding(&t, "draining", 5, why, sizeof why));
	assert_false(confirm_check_binding(&t, "draining", 6, why, sizeof why));
	assert_non_null(strstr(why, "last step is 6"));
	assert_false(confirm_check_binding(&t, "completed", 5, why, sizeof why));
	/* run does not: it continues whatever step the job is at */
	t = job_target(ACT_RUN, 8, "draining", 5);
	assert_true(confirm_check_binding(&t, "draining", 9, why, sizeof why));
	/* removals bind to their target; the engine checks it */
	t = removal(ACT_REMOVE_LIBRARY, 5, "Movies");
	assert_true(confirm_check_binding(&t, NULL, 0, why, sizeof why));
}

static void test_action_names(void **state)
{
	int a;

	(void)state;
	for (a = ACT_NONE + 1; a < ACT__COUNT; a++)
		assert_int_equal(tui_action_from_name(tui_action_name((tui_action)a)), a);
	assert_int_equal(tui_action_from_name("delete"), ACT_NONE);
	assert_int_equal(tui_action_from_name(NULL), ACT_NONE);
}

/* C3 from the console: S asks for the expected count to be typed; it is
 * the operator's statement, never copied from the manifest. */
static void test_C3_seal_confirmation_is_the_typed_count(void **state)
{
	confirm_target t = job_target(ACT_SEAL, 3, "collecting", 0);
	confirm_state c;

	(void)state;
	t.seal_count = -1;
	t.manifest_count = 40;
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
	/* The manifest's size is not shown beside the field
	 * that asks for the independent count (it would be copied) */
	assert_null(strstr(c.question, "40"));
	assert_non_null(strstr(c.question, "expected unique count"));
	type(&c, "4O", CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, '\n'), CONFIRM_MISMATCH);
	assert_int_equal(c.target.seal_count, -1);

	assert_int_equal(answer(&c, &t, ""), CONFIRM_MISMATCH); /* nothing typed */

	assert_int_equal(answer(&c, &t, "39"), CONFIRM_ACCEPTED);
	assert_int_equal(c.target.seal_count, 39); /* the engine refuses 39 != 40 (CU402) */
	assert_string_equal(confirm_audit_text(&c), "39");

	/* :seal 3 40 carries its count: the phrase is typed as usual. */
	t.seal_count = 40;
	assert_int_equal(answer(&c, &t, "prune 7 Movies"), CONFIRM_ACCEPTED);
	assert_int_equal(c.target.seal_count, 40);
}

/* S (a seal without a count) on a paused or completed
 * job is refused before any dialog, naming the job and its phase; it used
 * to reach the engine as "expected count -1 is not valid" (and that was
 * audited). A collecting job, or a seal that carries a count, goes on. */
static void test_C3_seal_without_count_needs_a_collecting_job(void **state)
{
	static const char *const phases[] = {"paused", "completed", "draining", "cancelled"};
	confirm_target t;
	char why[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof phases / sizeof phases[0]; i++) {
		t = job_target(ACT_SEAL, 7, phases[i], 0);
		t.seal_count = -1;
		why[0] = '\0';
		assert_false(confirm_precheck(&t, why, sizeof why));
		assert_non_null(strstr(why, "job 7 is "));
		assert_non_null(strstr(why, phases[i]));
		assert_null(strstr(why, "-1"));
	}
	t = job_target(ACT_SEAL, 7, "collecting", 0);
	t.seal_count = -1;
	assert_true(confirm_precheck(&t, why, sizeof why));
	t = job_target(ACT_SEAL, 7, "paused", 0); /* :seal 7 40 -- the engine explains */
	assert_true(confirm_precheck(&t, why, sizeof why));
	t = job_target(ACT_STEP, 7, "paused", 0);
	assert_true(confirm_precheck(&t, why, sizeof why));
}

/* Killing a job's runner asks y/N naming the backend
 * the operator saw; without a runner it is refused before any dialog. */
static void test_kill_runner_names_the_backend(void **state)
{
	confirm_target t = job_target(ACT_KILL_RUNNER, 8, "draining", 40);
	confirm_state c;
	char why[128];

	(void)state;
	t.runner_pid = 4242;
	assert_true(confirm_precheck(&t, why, sizeof why));
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
	assert_int_equal(c.kind, CONFIRM_YES_NO);
	assert_non_null(strstr(c.question, "Terminate backend 4242, the runner of job 8"));
	assert_int_equal(confirm_key(&c, '\n'), CONFIRM_DECLINED);
	t.runner_pid = 0;
	assert_false(confirm_precheck(&t, why, sizeof why));
	assert_non_null(strstr(why, "job 8 has no runner"));
	assert_string_equal(tui_action_name(ACT_KILL_RUNNER), "kill-runner");
}

/* The seal, removal, run and cancel dialogs say where
 * the point of no return is: the first step that deletes a row. */
static void test_dialogs_say_where_the_point_of_no_return_is(void **state)
{
	static const char *const where = "cancelled (x) until its first step deletes a row; after that it only goes forward";
	confirm_target said[4], t;
	confirm_state c;
	size_t i;

	(void)state;
	said[0] = job_target(ACT_SEAL, 3, "collecting", 0);
	said[0].seal_count = -1;
	said[1] = job_target(ACT_SEAL, 3, "collecting", 0);
	said[2] = removal(ACT_REMOVE_LIBRARY, 5, "Movies");
	said[3] = removal(ACT_REMOVE_SERVER, 2, "server-2");
	for (i = 0; i < sizeof said / sizeof said[0]; i++) {
		confirm_begin(&c, &said[i]);
		assert_non_null(strstr(c.question, where));
	}
	t = job_target(ACT_CANCEL, 3, "draining", 0);
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
	assert_non_null(strstr(c.question, "Nothing has been deleted yet: the job ends and library 7 admits writes again"));
	assert_non_null(strstr(c.question, where));
	t = job_target(ACT_RUN, 3, "draining", 0);
	confirm_begin(&c, &t);
	assert_non_null(strstr(c.question, "the first step that deletes a row is the point of no return"));
	t.gone = 5;
	confirm_begin(&c, &t);
	assert_null(strstr(c.question, "point of no return"));
	t = job_target(ACT_STEP, 3, "draining", 0);
	confirm_begin(&c, &t);
	assert_non_null(strstr(c.question, "This is the point of no return"));
}

/* T3: terminate-holder asks "terminate PID" typed, names the
 * holder in full, and needs a pid. */
static void test_terminate_holder_typed_pid(void **state)
{
	confirm_target t = {.action = ACT_TERMINATE_HOLDER, .job_id = -1};
	confirm_state c;
	char why[200];

	(void)state;
	assert_false(confirm_precheck(&t, why, sizeof why));
	t.holder_pid = 4411;
	snprintf(t.holder_text, sizeof t.holder_text,
	         "pid 4411 (role sync_movies, application psql, client local, idle in transaction, transaction 91.2 s old) "
	         "holds RowShareLock on cleanup.jobs");
	assert_true(confirm_precheck(&t, why, sizeof why));
	assert_int_equal(confirm_required(&t), CONFIRM_TYPED);
	assert_int_equal(confirm_begin(&c, &t), CONFIRM_PENDING);
	assert_string_equal(c.expect, "terminate 4411");
	assert_non_null(strstr(c.question, "Terminate backend 4411? pid 4411 (role sync_movies, application psql, client "
	                                   "local, idle in transaction, transaction 91.2 s old) holds RowShareLock on "
	                                   "cleanup.jobs."));
	assert_non_null(strstr(c.question, "Type \"terminate 4411\" to confirm"));
	assert_string_equal(tui_action_name(ACT_TERMINATE_HOLDER), "terminate-holder");
	type(&c, "terminate 441", CONFIRM_PENDING);
	assert_int_equal(confirm_key(&c, '\n'), CONFIRM_MISMATCH);
	assert_int_equal(answer(&c, &t, "terminate 4411"), CONFIRM_ACCEPTED);
}

/* An action on stale data asks first, naming it. */
static void test_stale_question(void **state)
{
	confirm_target t = job_target(ACT_STEP, 3, "draining", 4);
	char q[600];

	(void)state;
	confirm_stale_question(&t, "the console lost its connection at 12:15:03 and is reconnecting", q, sizeof q);
	assert_non_null(strstr(q, "STALE: the console lost its connection at 12:15:03 and is reconnecting."));
	assert_non_null(strstr(q, "Go on to the step of job 3 anyway? [y/N]"));
	t.action = ACT_TERMINATE_HOLDER;
	t.holder_pid = 77;
	confirm_stale_question(&t, "x", q, sizeof q);
	assert_non_null(strstr(q, "terminate-holder of backend 77"));
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_C3_seal_confirmation_is_the_typed_count),
          cmocka_unit_test(test_confirm_kinds),
          cmocka_unit_test(test_confirm_yes_no_defaults_to_no),
          cmocka_unit_test(test_confirm_typed_job_id),
          cmocka_unit_test(test_confirm_typed_wrong_text_does_nothing),
          cmocka_unit_test(test_confirm_typed_utf8_name),
          cmocka_unit_test(test_confirm_no_dialog_when_engine_refuses),
          cmocka_unit_test(test_confirm_binding_refuses_when_phase_moved),
          cmocka_unit_test(test_action_names),
          cmocka_unit_test(test_C3_seal_without_count_needs_a_collecting_job),
          cmocka_unit_test(test_kill_runner_names_the_backend),
          cmocka_unit_test(test_dialogs_say_where_the_point_of_no_return_is),
          cmocka_unit_test(test_terminate_holder_typed_pid),
          cmocka_unit_test(test_stale_question),)
