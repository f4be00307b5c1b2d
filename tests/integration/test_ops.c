/* The operation layer under the CLI and the console 
 * (tui/common/ops.h) against the real PostgreSQL: a step takes the job's runner
 * lock and releases it, is busy beside another runner (naming it, exit 3,
 * nothing changed), and the transitions, seal and create go through one
 * path with the table's words and exit codes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/runner.h"
#include "ops.h"
#include "pgtest.h"

PGTEST_DB_GROUP(conninfo, pgtest_seeded_db("ops", 2, 2, 200))
PGTEST_OBSERVER(conninfo)

/* One runner per job: beside a runner that holds the job's lease a step
 * is busy, names that runner and takes no step; once it is gone the step
 * goes through the job driver, and ends the lease it took. */
static void test_step_beside_a_runner_is_busy_and_releases_its_lock(void **state)
{
	cleanup_engine *holder = NULL;
	cleanup_runner *hr = NULL;
	cleanup_step_result step;
	cleanup_error err;
	char needle[96], text[1200];
	int64_t job;
	int pid;

	(void)state;
	memset(&step, 0, sizeof step);
	job = pgtest_draining_prune(o, 1);
	assert_int_equal(cleanup_engine_open(&holder, conninfo, "cleanupctl:job:77:run", &err), CLEANUP_OK);
	assert_int_equal(cleanup_runner_open(&hr, holder, job, NULL, NULL, &err), CLEANUP_OK);
	pid = cleanup_engine_backend_pid(holder);

	assert_int_equal(tui_op_step(&step, e, job, &err), CLEANUP_EBUSY);
	snprintf(needle, sizeof needle, "already being run by backend %d", pid);
	assert_non_null(strstr(err.message, needle));
	assert_non_null(strstr(err.message, "cleanupctl:job:77:run"));
	assert_int_equal(tui_op_exit_code(err.status, false), 3);
	tui_op_error_text(text, sizeof text, "step job 1", &err, TUI_FRONT_CONSOLE);
	assert_true(strncmp(text, "step job 1: busy, retry later: ", 31) == 0);
	assert_int_equal(pgtest_int(o, "SELECT step_no FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                 0);
	/* A step by hand (no lease) is refused beside the runner too. */
	pgtest_fails(o, "CU471", "is already being run by", "SELECT * FROM cleanup.job_step(%lld, 1)", (long long)job);

	/* The holder lets go: the step goes, and its lease is ended after. */
	assert_int_equal(cleanup_runner_close(hr, NULL, &err), CLEANUP_OK);
	assert_int_equal(tui_op_step(&step, e, job, &err), CLEANUP_OK);
	assert_int_equal(step.step_no, 1);
	cleanup_step_result_reset(&step);
	assert_int_equal(pgtest_int(o, "SELECT step_no FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                 1);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.job_runners WHERE job_id = %lld", (long long)job),
	                 0);
	assert_int_equal(cleanup_runner_open(&hr, holder, job, NULL, NULL, &err), CLEANUP_OK);
	/* and the holder's lease makes the next step busy again */
	assert_int_equal(tui_op_step(&step, e, job, &err), CLEANUP_EBUSY);
	assert_int_equal(cleanup_runner_close(hr, NULL, &err), CLEANUP_OK);
	cleanup_engine_close(holder);
}

/* Create, pause, resume and seal through the layer; a transition the
 * phase refuses reads "refused: " with exit 4 and changes nothing; an
 * action that is not a transition is bad input (exit 2), sent nowhere. */
static void test_transitions_and_seal_through_one_path(void **state)
{
	tui_op_result r;
	cleanup_error err;
	char text[1200];
	int64_t job, lib;

	(void)state;
	tui_op_result_init(&r);
	/* a library of server 2: server 1 has the job of the test above */
	lib = pgtest_int(o, "SELECT min(id) FROM inventory.libraries WHERE server_id = 2");
	if (tui_op_create(&r.job, e, "prune", lib, NULL, &err) != CLEANUP_OK)
		fail_msg("create: %s", err.message);
	job = r.job.id;
	assert_string_equal(r.job.phase, "collecting");
	tui_op_result_reset(&r);

	assert_int_equal(tui_op_transition(&r.job, e, job, ACT_PAUSE, &err), CLEANUP_OK);
	assert_string_equal(r.job.phase, "paused");
	tui_op_result_reset(&r);
	assert_int_equal(tui_op_transition(&r.job, e, job, ACT_RESUME, &err), CLEANUP_OK);
	assert_string_equal(r.job.phase, "collecting");
	tui_op_result_reset(&r);

	assert_int_equal(tui_op_transition(&r.job, e, job, ACT_STEP, &err), CLEANUP_EINVAL);
	assert_int_equal(tui_op_exit_code(err.status, false), 2);
	assert_non_null(strstr(err.message, "step is not a transition"));

	assert_int_equal(tui_op_seal(&r.job, e, job, 0, &err), CLEANUP_OK);
	assert_string_equal(r.job.phase, "draining");
	tui_op_result_reset(&r);

	assert_int_equal(tui_op_transition(&r.job, e, job, ACT_PAUSE, &err), CLEANUP_EREFUSED);
	assert_int_equal(tui_op_exit_code(err.status, false), 4);
	tui_op_error_text(text, sizeof text, NULL, &err, TUI_FRONT_CLI);
	assert_true(strncmp(text, "refused: ", 9) == 0);
	tui_op_result_reset(&r);
	{
		char *phase =
		    pgtest_text(o, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job);

		assert_string_equal(phase, "draining");
		free(phase);
	}
	/* no runner to kill: nothing done, said so */
	assert_int_equal(tui_op_kill_runner(e, job, 1, &err), CLEANUP_ENOTFOUND);
}

PGTEST_MAIN(PGTEST_WITH_OBSERVER(test_step_beside_a_runner_is_busy_and_releases_its_lock),
            PGTEST_WITH_OBSERVER(test_transitions_and_seal_through_one_path))
