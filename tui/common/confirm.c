/* Confirmation of console actions (confirm.h). Pure: curses only for key
 * codes. */
#include "confirm.h"
#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const names[ACT__COUNT] = {
	"none", "step", "run", "pause", "resume", "cancel", "seal", "preview", "remove-library", "remove-server",
	"kill-runner", "terminate-holder",
};

const char *tui_action_name(tui_action a)
{
	return a >= 0 && a < ACT__COUNT ? names[a] : "none";
}

tui_action tui_action_from_name(const char *s)
{
	int i;

	for (i = 1; i < ACT__COUNT; i++)
		if (s && strcmp(s, names[i]) == 0)
			return (tui_action)i;
	return ACT_NONE;
}

static bool is(const char *phase, const char *want)
{
	return strcmp(phase, want) == 0;
}

confirm_kind confirm_required(const confirm_target *t)
{
	const char *ph = t->phase;

	switch (t->action) {
	case ACT_PREVIEW:
		return CONFIRM_NONE;
	case ACT_PAUSE:
		return is(ph, "collecting") ? CONFIRM_YES_NO : CONFIRM_NONE;
	case ACT_RESUME:
		return is(ph, "paused") ? CONFIRM_YES_NO : CONFIRM_NONE;
	case ACT_CANCEL:
		if (is(ph, "collecting") || is(ph, "paused"))
			return CONFIRM_YES_NO;
		/* Cancellable until the first deletion; after it the
		 * engine refuses, saying how many rows are gone. */
		return (is(ph, "draining") || is(ph, "finalizing")) && t->gone == 0 ? CONFIRM_YES_NO : CONFIRM_NONE;
	case ACT_STEP:
		if (!is(ph, "draining") && !is(ph, "finalizing"))
			return CONFIRM_NONE;
		/* The first step of a sealed job starts deletion: the point of no
		 * return. Later steps continue what has begun. */
		return t->step_no == 0 ? CONFIRM_TYPED : CONFIRM_YES_NO;
	case ACT_RUN:
		return is(ph, "draining") || is(ph, "finalizing") ? CONFIRM_TYPED : CONFIRM_NONE;
	case ACT_SEAL:
		return is(ph, "collecting") ? CONFIRM_TYPED : CONFIRM_NONE;
	case ACT_REMOVE_LIBRARY:
	case ACT_REMOVE_SERVER:
		return CONFIRM_TYPED;
	case ACT_KILL_RUNNER:
		/* The job resumes under the next runner: y/N, as a later step. */
		return t->runner_pid > 0 ? CONFIRM_YES_NO : CONFIRM_NONE;
	case ACT_TERMINATE_HOLDER:
		/* Someone else's session and transaction end: typed, naming the pid. */
		return CONFIRM_TYPED;
	default:
		return CONFIRM_NONE;
	}
}

bool confirm_precheck(const confirm_target *t, char *why, size_t whylen)
{
	if (t->action == ACT_TERMINATE_HOLDER && t->holder_pid <= 0) {
		snprintf(why, whylen, "no holder selected: choose a backend in the locks panel, or a job whose busy answer "
		                      "names one");
		return false;
	}
	if (t->action == ACT_KILL_RUNNER && t->runner_pid <= 0) {
		snprintf(why, whylen, "job %" PRId64 " has no runner to kill", t->job_id);
		return false;
	}
	if (t->action == ACT_SEAL && t->seal_count < 0 && !is(t->phase, "collecting")) {
		if (is(t->phase, "paused"))
			snprintf(why, whylen, "job %" PRId64 " is paused: only a collecting job can be sealed (P resumes it)",
			         t->job_id);
		else
			snprintf(why, whylen, "job %" PRId64 " is %s: only a collecting job can be sealed, and it is past that",
			         t->job_id, t->phase);
		return false;
	}
	return true;
}

/* Where the point of no return is: said by the seal, removal,
 * run and cancel dialogs alike. */
#define NO_RETURN "The job can be cancelled (x) until its first step deletes a row; after that it only goes forward."

/* A seal without a count: the typed confirmation is the expected count. */
static bool typed_count(const confirm_state *c)
{
	return c->target.action == ACT_SEAL && c->target.seal_count < 0;
}

/* Parses the typed expected count into the target; false unless it is a
 * plain non-negative integer. */
static bool take_count(confirm_state *c)
{
	int64_t v = 0;
	size_t i;

	if (c->typed_len == 0 || c->typed_len > 18)
		return false;
	for (i = 0; i < c->typed_len; i++) {
		if (c->typed[i] < '0' || c->typed[i] > '9')
			return false;
		v = v * 10 + (c->typed[i] - '0');
	}
	c->target.seal_count = v;
	return true;
}

void confirm_phrase(const confirm_target *t, char *buf, size_t len)
{
	if (t->action == ACT_REMOVE_LIBRARY || t->action == ACT_REMOVE_SERVER)
		snprintf(buf, len, "%s %" PRId64 " %s", tui_action_name(t->action), t->target_id, t->target_name);
	else if (t->action == ACT_TERMINATE_HOLDER)
		snprintf(buf, len, "terminate %d", t->holder_pid);
	else
		snprintf(buf, len, "%s %" PRId64 " %s", t->kind, t->target_id, t->target_name);
}

static void describe(confirm_state *c)
{
	const confirm_target *t = &c->target;
	char what[CLEANUP_NAME_SIZE + 1000], items[48];

	if (t->items >= 0)
		snprintf(items, sizeof items, "%" PRId64 " item%s now", t->items, t->items == 1 ? "" : "s");
	else
		snprintf(items, sizeof items, "item count unknown");

	switch (t->action) {
	case ACT_STEP:
		if (t->step_no == 0)
			snprintf(what, sizeof what,
			         "Run the FIRST step of job %" PRId64 " (%s, %s)? This is the point of no return: until now "
			         "x cancels the job; once this step deletes a row, deletion cannot be undone and the job only "
			         "goes forward.",
			         t->job_id, t->kind, t->phase);
		else
			snprintf(what, sizeof what, "Run step %d of job %" PRId64 " (%s, %s)?", t->step_no + 1, t->job_id,
			         t->kind, t->phase);
		break;
	case ACT_RUN:
		/* before the first deletion, where the point of no return lies */
		snprintf(what, sizeof what,
		         "Run job %" PRId64 " (%s, %s) step after step until it completes or you press t? %sDeleted rows "
		         "cannot be restored.",
		         t->job_id, t->kind, t->phase,
		         t->gone == 0 ? "Nothing is deleted yet: the first step that deletes a row is the point of no return "
		                        "(until then x cancels the job). "
		                      : "");
		break;
	case ACT_PAUSE:
		snprintf(what, sizeof what, "Pause collecting job %" PRId64 "? Appends are refused until it is resumed.",
		         t->job_id);
		break;
	case ACT_RESUME:
		snprintf(what, sizeof what, "Resume paused job %" PRId64 " (back to collecting)?", t->job_id);
		break;
	case ACT_CANCEL:
		if (is(t->phase, "draining") || is(t->phase, "finalizing"))
			snprintf(what, sizeof what,
			         "Cancel job %" PRId64 " (%s, %s)? Nothing has been deleted yet: the job ends and %s %" PRId64
			         " admits writes again. %s",
			         t->job_id, t->kind, t->phase, strcmp(t->kind, "remove-server") == 0 ? "server" : "library",
			         t->target_id, NO_RETURN);
		else
			snprintf(what, sizeof what,
			         "Cancel job %" PRId64 " (%s)? Nothing has been deleted; its manifest is dropped.", t->job_id,
			         t->phase);
		break;
	case ACT_SEAL:
		/* The count asked for is the operator's own statement (C3): the
		 * manifest's size is not shown beside the field, or it would be
		 * copied. */
		if (t->seal_count < 0)
			snprintf(what, sizeof what,
			         "Seal job %" PRId64 "? Sealing states the traversal was complete, closes the library to "
			         "writers and makes deletion possible. %s Count the unique IDs your traversal found (not "
			         "what the manifest holds: the engine compares the two).",
			         t->job_id, NO_RETURN);
		else
			snprintf(what, sizeof what,
			         "Seal job %" PRId64 " with expected count %" PRId64 "? This states the traversal was complete, "
			         "closes the library to writers and makes deletion possible. %s",
			         t->job_id, t->seal_count, NO_RETURN);
		break;
	case ACT_REMOVE_LIBRARY:
	case ACT_REMOVE_SERVER: {
		const char *kind = t->action == ACT_REMOVE_SERVER ? "server" : "library";

		snprintf(what, sizeof what,
		         "Create a remove-%s job for %s %" PRId64 " \"%s\"? Admission closes at once and "
		         "every %s of it (%s) will be deleted, with their dependent records. %s",
		         kind, kind, t->target_id, t->target_name,
		         t->action == ACT_REMOVE_SERVER ? "library and item" : "item", items, NO_RETURN);
		break;
	}
	case ACT_KILL_RUNNER:
		snprintf(what, sizeof what,
		         "Terminate backend %d, the runner of job %" PRId64 " (%s, %s)? Its step in flight rolls back; "
		         "the job resumes from its last committed step under the next runner.",
		         t->runner_pid, t->job_id, t->kind, t->phase);
		break;
	case ACT_TERMINATE_HOLDER:
		snprintf(what, sizeof what,
		         "Terminate backend %d? %s. Its transaction rolls back and its client loses the connection. "
		         "The engine ends it only if it still holds up a cleanup job, and records this in the audit.",
		         t->holder_pid, t->holder_text[0] ? t->holder_text : "(not described)");
		break;
	default:
		snprintf(what, sizeof what, "%s job %" PRId64 "?", tui_action_name(t->action), t->job_id);
		break;
	}
	if (c->kind == CONFIRM_TYPED && t->action == ACT_TERMINATE_HOLDER)
		snprintf(c->question, sizeof c->question, "%s Type \"%s\" to confirm, Esc to cancel.", what, c->expect);
	else if (c->kind == CONFIRM_TYPED && typed_count(c))
		snprintf(c->question, sizeof c->question,
		         "%s Type the expected unique count of the complete traversal to confirm, Esc to cancel.", what);
	else if (c->kind == CONFIRM_TYPED)
		snprintf(c->question, sizeof c->question, "%s Type \"%s\" (kind, target id and name) to confirm, Esc to cancel.",
		         what, c->expect);
	else
		snprintf(c->question, sizeof c->question, "%s [y/N]", what);
}

confirm_result confirm_begin(confirm_state *c, const confirm_target *t)
{
	memset(c, 0, sizeof *c);
	c->target = *t;
	c->kind = confirm_required(t);
	if (c->kind == CONFIRM_NONE)
		return CONFIRM_ACCEPTED;
	if (c->kind == CONFIRM_TYPED) {
		if (typed_count(c))
			snprintf(c->expect, sizeof c->expect, "the expected count (digits)");
		else
			confirm_phrase(t, c->expect, sizeof c->expect);
	}
	describe(c);
	c->active = true;
	return CONFIRM_PENDING;
}

/* Removes the last UTF-8 character of the typed text. */
static void backspace(confirm_state *c)
{
	while (c->typed_len > 0) {
		unsigned char b = (unsigned char)c->typed[--c->typed_len];

		if ((b & 0xC0) != 0x80)
			break;
	}
	c->typed[c->typed_len] = '\0';
}

confirm_result confirm_key(confirm_state *c, int key)
{
	confirm_result r = CONFIRM_PENDING;

	if (!c->active)
		return CONFIRM_DECLINED;
	if (c->kind == CONFIRM_YES_NO) {
		if (key == 'y' || key == 'Y') {
			snprintf(c->typed, sizeof c->typed, "y");
			c->typed_len = 1;
			r = CONFIRM_ACCEPTED;
		} else if (key == 'n' || key == 'N' || key == 27 || key == '\n' || key == '\r' || key == KEY_ENTER) {
			r = CONFIRM_DECLINED;
		}
	} else {
		if (key == 27) {
			r = CONFIRM_DECLINED;
		} else if (key == '\n' || key == '\r' || key == KEY_ENTER) {
			if (typed_count(c))
				r = take_count(c) ? CONFIRM_ACCEPTED : CONFIRM_MISMATCH;
			else
				r = strcmp(c->typed, c->expect) == 0 ? CONFIRM_ACCEPTED : CONFIRM_MISMATCH;
		} else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
			backspace(c);
		} else if (key == 0x15) { /* ^U */
			c->typed_len = 0;
			c->typed[0] = '\0';
		} else if (key >= 0x20 && key <= 0xff && key != 0x7f && c->typed_len + 1 < sizeof c->typed) {
			c->typed[c->typed_len++] = (char)key;
			c->typed[c->typed_len] = '\0';
		}
	}
	if (r != CONFIRM_PENDING)
		c->active = false;
	return r;
}

bool confirm_check_binding(const confirm_target *t, const char *phase, int32_t step_no, char *why,
                           size_t whylen)
{
	if (t->job_id < 0)
		return true; /* a removal binds to its target; the engine checks it */
	if (!phase || strcmp(phase, t->phase) != 0) {
		snprintf(why, whylen,
		         "job %" PRId64 " moved on: it is %s now, the confirmation was for %s; nothing was done",
		         t->job_id, phase && *phase ? phase : "gone", t->phase);
		return false;
	}
	if (t->action == ACT_STEP && step_no != t->step_no) {
		snprintf(why, whylen,
		         "job %" PRId64 " moved on: its last step is %d now, the confirmation was for the step after %d; "
		         "nothing was done",
		         t->job_id, step_no, t->step_no);
		return false;
	}
	return true;
}

const char *confirm_audit_text(const confirm_state *c)
{
	return c->kind == CONFIRM_NONE ? "" : c->typed;
}

void confirm_stale_question(const confirm_target *t, const char *why, char *buf, size_t len)
{
	char what[CLEANUP_NAME_SIZE + 64];

	if (t->action == ACT_TERMINATE_HOLDER)
		snprintf(what, sizeof what, "terminate-holder of backend %d", t->holder_pid);
	else if (t->job_id > 0)
		snprintf(what, sizeof what, "%s of job %" PRId64, tui_action_name(t->action), t->job_id);
	else
		snprintf(what, sizeof what, "%s of %" PRId64 " \"%s\"", tui_action_name(t->action), t->target_id,
		         t->target_name);
	snprintf(buf, len,
	         "The data on screen is STALE: %s. What you see may have moved on since. The engine re-checks before "
	         "it acts, but you decide on old rows. Go on to the %s anyway? [y/N]",
	         why, what);
}
