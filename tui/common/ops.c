/* The operation layer (ops.h): the table of the error words of both front
 * ends, and the job actions on an engine handle, each with the runner lease
 * where the one-runner rule wants it. */
#include "ops.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cleanup/runner.h"
#include "progress.h"
#include "sanitize.h"

/* The one table: busy and refused read the same in both front ends; the
 * console's message line also says what kind of failure the rest were. */
static const tui_op_error_words error_words[] = {
	{CLEANUP_OK, "", "", TUI_OP_SEVERITY_OK},
	{CLEANUP_EBUSY, TUI_BUSY_PREFIX, TUI_BUSY_PREFIX, TUI_OP_SEVERITY_WARNING},
	{CLEANUP_EREFUSED, "refused: ", "refused: ", TUI_OP_SEVERITY_WARNING},
	{CLEANUP_ECONN, "", "connection lost: ", TUI_OP_SEVERITY_DANGER},
	{CLEANUP_EREADONLY, "read-only server: ", "read-only server: ", TUI_OP_SEVERITY_WARNING},
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

/* ---- the success wording ---------------------------------------------- */

/* The one table of what a done action is called, in both front ends. */
static const struct {
	tui_action action;
	const char *verb;
} done_words[] = {
	{ACT_REMOVE_LIBRARY, "created"}, {ACT_REMOVE_SERVER, "created"}, {ACT_SEAL, "sealed"},
	{ACT_PAUSE, "paused"},           {ACT_RESUME, "resumed"},        {ACT_CANCEL, "cancelled"},
};

const char *tui_op_done_verb(tui_action action)
{
	size_t i;

	for (i = 0; i < sizeof done_words / sizeof done_words[0]; i++)
		if (done_words[i].action == action)
			return done_words[i].verb;
	return NULL;
}

const char *tui_op_job_line(char *buf, size_t len, const cleanup_job *job)
{
	char kind[64], name[CLEANUP_NAME_SIZE], phase[64];
	bool server = strcmp(job->kind, "remove-server") == 0;

	snprintf(buf, len, "job %" PRId64 ": %s of %s %" PRId64 " (%s), phase %s, step %d", job->id,
	         tui_sanitize(kind, sizeof kind, job->kind), server ? "server" : "library",
	         server ? job->server_id : job->library_id, tui_sanitize(name, sizeof name, job->target_name),
	         tui_sanitize(phase, sizeof phase, job->phase), job->step_no);
	return buf;
}

const char *tui_op_done_text(char *buf, size_t len, tui_action action, const cleanup_job *job)
{
	const char *verb = tui_op_done_verb(action);
	char line[CLEANUP_NAME_SIZE + 256];
	size_t o;

	tui_op_job_line(line, sizeof line, job);
	snprintf(buf, len, "%s%s%s", verb ? verb : "", verb ? " " : "", line);
	o = strlen(buf);
	if (action == ACT_SEAL && o < len)
		snprintf(buf + o, len - o, "; library fenced at high-water id %" PRId64, job->high_water_id);
	else if ((action == ACT_REMOVE_LIBRARY || action == ACT_REMOVE_SERVER) && o < len)
		snprintf(buf + o, len - o, "; admission is closed");
	return buf;
}

const char *tui_op_created_text(char *buf, size_t len, const cleanup_job *job)
{
	tui_action a = strcmp(job->kind, "remove-library") == 0  ? ACT_REMOVE_LIBRARY
	               : strcmp(job->kind, "remove-server") == 0 ? ACT_REMOVE_SERVER
	                                                         : ACT_NONE;
	char line[CLEANUP_NAME_SIZE + 256];

	if (a != ACT_NONE)
		return tui_op_done_text(buf, len, a, job);
	snprintf(buf, len, "created %s", tui_op_job_line(line, sizeof line, job));
	return buf;
}

/* ---- the id rule --------------------------------------------------------- */

const char *tui_op_int_syntax(const char *s, int64_t min, int64_t max, int64_t *out)
{
	const char *p = s;
	bool neg = false;
	uint64_t v = 0, limit;

	if (!s || !*s)
		return "an empty value";
	if (*p == '-' && min < 0) {
		neg = true;
		p++;
	}
	if (!*p)
		return "no digits";
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *p; p++) {
		unsigned d;

		if (*p < '0' || *p > '9')
			return p == s && (*p == '+' || *p == '-' || *p == ' ' || *p == '\t')
			           ? "digits only: no sign, space or prefix"
			           : "digits only: no spaces, letters, prefixes or fractions";
		d = (unsigned)(*p - '0');
		if (v > (limit - d) / 10)
			return "out of range";
		v = v * 10 + d;
	}
	if (neg) {
		int64_t r = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;

		if (r < min)
			return "out of range";
		*out = r;
		return NULL;
	}
	if ((int64_t)v < min || (int64_t)v > max)
		return "out of range";
	*out = (int64_t)v;
	return NULL;
}

bool tui_op_parse_int(int64_t *out, char *msg, size_t len, const char *what, const char *s, int64_t min,
                      int64_t max)
{
	int64_t v = 0;
	const char *why = tui_op_int_syntax(s, min, max, &v);

	if (why) {
		snprintf(msg, len, "%s must be an integer from %" PRId64 " to %" PRId64 ", not \"%.200s\": %s", what, min,
		         max, s ? s : "", why);
		return false;
	}
	*out = v;
	return true;
}

bool tui_op_parse_id(int64_t *out, char *msg, size_t len, const char *what, const char *s)
{
	return tui_op_parse_int(out, msg, len, what, s, 1, INT64_MAX);
}

/* ---- the retry rule -------------------------------------------------------- */

void tui_op_wait_begin(tui_op_wait *w, double seconds, const char *what)
{
	memset(w, 0, sizeof *w);
	w->seconds = seconds;
	w->deadline = tui_op_mono_s() + seconds;
	w->attempts = 1;
	w->delay_ms = TUI_OP_WAIT_FIRST_MS;
	w->what = what ? what : "--wait";
}

bool tui_op_wait_again(tui_op_wait *w, cleanup_error *err)
{
	double left, until;

	if (err->status != CLEANUP_EBUSY || w->seconds <= 0 || (w->stop && w->stop(w->arg)))
		return false;
	left = w->deadline - tui_op_mono_s();
	if (left <= 0) {
		char note[160];
		size_t l = strlen(err->detail);

		snprintf(note, sizeof note, "still busy after %s %g s (%d attempts)", w->what, w->seconds, w->attempts);
		if (l)
			snprintf(err->detail + l, sizeof err->detail - l, "; %s", note);
		else
			snprintf(err->detail, sizeof err->detail, "%s", note);
		return false;
	}
	if (w->retrying)
		w->retrying(w, err, left, w->arg);
	until = tui_op_mono_s() + (w->delay_ms < left * 1000 ? w->delay_ms : left * 1000) / 1000.0;
	for (;;) {
		double now = tui_op_mono_s(), nap = until - now;
		struct timespec ts;

		if (nap <= 0)
			break;
		if (w->stop && nap > 0.05)
			nap = 0.05; /* short naps: a stop is seen at once */
		ts.tv_sec = (time_t)nap;
		ts.tv_nsec = (long)((nap - (double)ts.tv_sec) * 1e9);
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		if (w->stop && w->stop(w->arg))
			return false;
	}
	w->delay_ms = w->delay_ms * 2 > TUI_OP_WAIT_MAX_MS ? TUI_OP_WAIT_MAX_MS : w->delay_ms * 2;
	w->attempts++;
	cleanup_error_clear(err);
	return true;
}

/* ---- operations ------------------------------------------------------------ */

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

int tui_op_step(cleanup_step_result *out, cleanup_engine *e, int64_t job_id, cleanup_error *err)
{
	cleanup_runner_opts o;
	cleanup_runner *r = NULL;
	int rc;

	memset(&o, 0, sizeof o);
	o.claim_grace_s = -1; /* beside a runner: busy at once, naming it */
	memset(out, 0, sizeof *out);
	rc = cleanup_runner_open(&r, e, job_id, &o, NULL, err);
	if (rc == CLEANUP_OK)
		rc = cleanup_runner_step(r, out, err);
	cleanup_runner_close(r, NULL, NULL);
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
