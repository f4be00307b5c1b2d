/* The operation layer (ops.h): the table of the error words of both front
 * ends, and the job actions on an engine handle, each with the runner lock
 * where the one-runner rule wants it. */
#include "ops.h"
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cleanup/runner.h"
#include "progress.h"

/* The one table: busy and refused read the same in both front ends; the
 * console's message line also says what kind of failure the rest were. */
static const tui_op_error_words error_words[] = {
	{CLEANUP_OK, "", "", TUI_OP_SEVERITY_OK},
	{CLEANUP_EBUSY, TUI_BUSY_PREFIX, TUI_BUSY_PREFIX, TUI_OP_SEVERITY_WARNING},
	{CLEANUP_EREFUSED, "refused: ", "refused: ", TUI_OP_SEVERITY_WARNING},
	{CLEANUP_ECONN, "", "connection lost: ", TUI_OP_SEVERITY_DANGER},
	{CLEANUP_ERROR, "", "failed: ", TUI_OP_SEVERITY_DANGER}, /* also every status not listed */
};

const tui_op_error_words *tui_op_error_lookup(int status)
{
	size_t i, n = sizeof error_words / sizeof error_words[0];

	for (i = 0; i < n; i++)
		if (error_words[i].status == status)
			return &error_words[i];
	return &error_words[n - 1];
}

int tui_op_exit_code(int status, bool interrupted)
{
	return interrupted ? TUI_OP_EXIT_INTERRUPTED : cleanup_exit_code(status);
}

tui_op_severity tui_op_error_severity(int status)
{
	return tui_op_error_lookup(status)->severity;
}

const char *tui_op_error_prefix(int status, tui_op_front front)
{
	const tui_op_error_words *w = tui_op_error_lookup(status);

	return front == TUI_FRONT_CLI ? w->cli_prefix : w->console_prefix;
}

const char *tui_op_error_text(char *buf, size_t len, const char *what, const cleanup_error *err,
                              tui_op_front front)
{
	what = what ? what : "";
	snprintf(buf, len, "%.200s%s%s%.700s", what, *what ? ": " : "",
	         tui_op_error_prefix(err->status, front), err->message);
	return buf;
}

void tui_op_result_init(tui_op_result *r)
{
	memset(r, 0, sizeof *r);
}

void tui_op_result_reset(tui_op_result *r)
{
	if (!r)
		return;
	cleanup_job_reset(&r->job);
	cleanup_step_result_reset(&r->step);
	cleanup_job_reset(&r->run.job);
	memset(r, 0, sizeof *r);
}

int tui_op_claim(bool *claimed, cleanup_engine *e, int64_t job_id, cleanup_error *err)
{
	cleanup_runner_holder holder;
	int rc;

	*claimed = false;
	memset(&holder, 0, sizeof holder);
	rc = cleanup_job_runner_claim(claimed, &holder, e, job_id, err);
	if (rc == CLEANUP_OK && !*claimed)
		rc = cleanup_runner_busy_error(err, job_id, &holder);
	return rc;
}

void tui_op_release(cleanup_engine *e, int64_t job_id, bool claimed)
{
	cleanup_error rel;

	if (claimed && cleanup_engine_ok(e))
		cleanup_job_runner_release(e, job_id, &rel);
}

int tui_op_step_next(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, int32_t after_step_no,
                     cleanup_error *err)
{
	return cleanup_job_step_at(out, e, job_id, after_step_no + 1, 0, err);
}

int tui_op_step(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, int32_t after_step_no,
                cleanup_error *err)
{
	bool claimed = false;
	int rc;

	/* Not beside a runner: the step would take its step number. */
	rc = tui_op_claim(&claimed, e, job_id, err);
	if (rc == CLEANUP_OK)
		rc = tui_op_step_next(out, e, job_id, after_step_no, err);
	tui_op_release(e, job_id, claimed);
	return rc;
}

int tui_op_preview(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, cleanup_error *err)
{
	return cleanup_job_step_preview(out, e, job_id, err);
}

int tui_op_transition(cleanup_job *out, cleanup_engine *e, int64_t job_id, tui_action action,
                      cleanup_error *err)
{
	if (action != ACT_PAUSE && action != ACT_RESUME && action != ACT_CANCEL)
		return cleanup_error_set(err, CLEANUP_EINVAL,
		                         "%s is not a transition (pause, resume or cancel)",
		                         tui_action_name(action));
	return cleanup_job_transition(out, e, job_id, tui_action_name(action), err);
}

int tui_op_seal(cleanup_job *out, cleanup_engine *e, int64_t job_id, int64_t expected, cleanup_error *err)
{
	return cleanup_job_seal(out, e, job_id, expected, err);
}

int tui_op_create(cleanup_job *out, cleanup_engine *e, const char *kind, int64_t target, const char *mode,
                  cleanup_error *err)
{
	return cleanup_job_create(out, e, kind, target, mode, err);
}

const char *tui_op_removal_kind(tui_action action)
{
	return action == ACT_REMOVE_LIBRARY  ? "remove-library"
	       : action == ACT_REMOVE_SERVER ? "remove-server"
	                                     : NULL;
}

void tui_op_run_opts_init(cleanup_run_opts *o, double max_rate)
{
	memset(o, 0, sizeof *o);
	/* An option of the run, so that it is set again after a reconnect (a
	 * session setting made beforehand would be lost with the session). */
	o->step_commit = CLEANUP_STEP_COMMIT_ASYNC;
	o->no_pipeline = max_rate > 0;
}

double tui_op_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool tui_op_throttle_sleep(double *next_at, double (*rate)(void *arg), bool (*stop)(void *arg), void *arg,
                           double nap_s)
{
	double now = tui_op_mono_s();

	if (tui_throttle_wait(next_at, now, rate(arg)) <= 0)
		return true;
	while (now < *next_at) {
		double left = *next_at - now;
		struct timespec ts = {0, (long)((left < nap_s ? left : nap_s) * 1e9)};

		if (stop(arg))
			return false;
		nanosleep(&ts, NULL);
		now = tui_op_mono_s();
		if (rate(arg) <= 0)
			break; /* lifted */
	}
	return true;
}

int tui_op_run(cleanup_run_summary *out, cleanup_engine *e, int64_t job_id, const cleanup_run_opts *o,
               cleanup_error *err)
{
	return cleanup_job_run(out, e, job_id, o, err);
}

int tui_op_kill_runner(cleanup_engine *e, int64_t job_id, int pid, cleanup_error *err)
{
	return cleanup_job_runner_terminate(e, job_id, pid, err);
}
