/* Confirmation of console actions: a pure state machine.
 *
 * An action is bound to what the operator saw: the job id, its phase and
 * step number (or, for a removal, the target's id and name). Reversible
 * actions (pause, resume, cancel of a job that has deleted nothing, a step
 * after deletion has started) ask y/N with No as the default; irreversible ones (the first
 * deleting step, run, seal, creating remove-library or remove-server) need
 * the job id or the target's name typed; a seal started without a count
 * needs the expected unique count typed. Typing something else does
 * nothing. Before acting, the worker re-reads the job and refuses when it
 * moved on (confirm_check_binding); the engine refuses by phase as well.
 */
#ifndef CLEANUP_TUI_CONFIRM_H
#define CLEANUP_TUI_CONFIRM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"

typedef enum tui_action {
	ACT_NONE = 0,
	ACT_STEP,
	ACT_RUN,
	ACT_PAUSE,
	ACT_RESUME,
	ACT_CANCEL,
	ACT_SEAL,
	ACT_PREVIEW,
	ACT_REMOVE_LIBRARY,
	ACT_REMOVE_SERVER,
	ACT_KILL_RUNNER,         /* terminate the backend of the selected job's runner */
	ACT_TERMINATE_HOLDER,    /* terminate a backend that holds up a cleanup job */
	ACT__COUNT
} tui_action;

/* "step", "run", ..., "remove-library", "remove-server". */
const char *tui_action_name(tui_action a);

/* The action named S (as on the command line), ACT_NONE when unknown. */
tui_action tui_action_from_name(const char *s);

/* What the operator saw when asking for the action. */
typedef struct confirm_target {
	tui_action action;
	int64_t job_id;          /* -1 for a removal (the job does not exist yet) */
	char kind[24];           /* the job's kind ("" for a removal) */
	char phase[16];          /* the phase displayed ("" for a removal) */
	int32_t step_no;         /* the step number displayed */
	int64_t target_id;       /* removal: library or server id; else the job's target */
	char target_name[CLEANUP_NAME_SIZE];   /* removal: the name to type */
	int64_t seal_count;      /* seal: the expected count to seal with; -1: the
	                          * operator types it as the confirmation (C3: the
	                          * count is their statement, never the manifest's) */
	int64_t manifest_count;  /* seal: what the manifest holds (never shown beside the field
	                          * that asks for the independent count) */
	int64_t items;           /* removal: items the target holds now, -1 when unknown */
	int runner_pid;          /* kill-runner: the runner's backend the operator saw */
	int holder_pid;          /* terminate-holder: the backend the operator saw */
	char holder_text[640];   /* terminate-holder: who it is and what it holds, as shown:
	                          * "pid 4411 (role r, application psql, client local, idle in
	                          * transaction, transaction 91.2 s old) holds ..." */
	int64_t gone;            /* rows the job had deleted (items, dependents, parents) as
	                          * displayed: a draining or finalizing job can be cancelled
	                          * until its first deletion, so a cancel asks
	                          * y/N at 0 and goes straight to the engine's refusal after */
} confirm_target;

typedef enum confirm_kind {
	CONFIRM_NONE,    /* nothing to confirm: read-only, or the engine will refuse anyway */
	CONFIRM_YES_NO,  /* y/N, No by default */
	CONFIRM_TYPED    /* type the phrase naming kind and target (confirm_phrase) */
} confirm_kind;

/* The confirmation T needs. Actions that cannot succeed in the displayed
 * phase (cancel of a job that has deleted rows, pause of a paused one, ...) need none:
 * they go to the engine, whose refusal and explanation are shown. Pure. */
confirm_kind confirm_required(const confirm_target *t);

typedef enum confirm_result {
	CONFIRM_PENDING,   /* still asking */
	CONFIRM_ACCEPTED,  /* go ahead */
	CONFIRM_DECLINED,  /* No, Esc, or Enter on y/N */
	CONFIRM_MISMATCH   /* typed text differs from what was asked: nothing is done */
} confirm_result;

typedef struct confirm_state {
	bool active;
	confirm_kind kind;
	confirm_target target;
	char expect[CLEANUP_NAME_SIZE + 64];    /* CONFIRM_TYPED: the text to type */
	char typed[CLEANUP_NAME_SIZE + 64];     /* what has been typed so far */
	size_t typed_len;
	char question[2 * CLEANUP_NAME_SIZE + 1200]; /* the dialog's text */
} confirm_state;

/* The phrase an irreversible action asks to have typed, naming the kind
 * and the target ("type the job id" was often one
 * keystroke): a removal "remove-library 4 Movies", a job's first step or
 * run "<job kind> <target id> <target name>" ("prune 7 Movies"). Pure. */
void confirm_phrase(const confirm_target *t, char *buf, size_t len);

/* Starts a dialog for T (C becomes active unless T needs no confirmation;
 * then the result is CONFIRM_ACCEPTED at once). Returns the first result:
 * CONFIRM_PENDING or CONFIRM_ACCEPTED. */
confirm_result confirm_begin(confirm_state *c, const confirm_target *t);

/* Feeds KEY (curses key code or byte) to an active dialog. y / Y accept a
 * y/N question; n, N, Esc and Enter decline it. A typed confirmation
 * collects printable bytes (backspace deletes one character), Enter compares
 * them with the expected text: ACCEPTED when equal, MISMATCH otherwise; Esc
 * declines. Any result but PENDING closes the dialog. */
confirm_result confirm_key(confirm_state *c, int key);

/* Checks that the job still is what the dialog showed: same PHASE, and for
 * a step the same STEP_NO. Returns true when the action may go ahead; else
 * writes the reason (naming both phases or steps) to WHY. Pure. */
bool confirm_check_binding(const confirm_target *t, const char *phase, int32_t step_no, char *why,
                           size_t whylen);

/* Refuses, before any dialog, an action that cannot mean anything in the
 * displayed phase and would only fail on a bad argument: a seal without a
 * count of a job that is not collecting (S on a paused or
 * completed job failed with "expected count -1 is not valid", and that
 * failure was audited). Returns true when the action may go on; else
 * writes the reason, naming the job and its phase, to WHY. Pure. */
bool confirm_precheck(const confirm_target *t, char *why, size_t whylen);

/* The question asked before an action on stale data:
 * WHY says what is stale and since when ("the connection was lost at
 * 12:15:03; reconnecting", "the jobs panel was last refreshed at ...").
 * Names the action and its target, says the rows may have moved on and
 * that the engine re-checks, and ends "[y/N]". Pure. */
void confirm_stale_question(const confirm_target *t, const char *why, char *buf, size_t len);

/* The confirmation text to record in the audit trail for a finished dialog:
 * "y", the typed text, or "" when none was needed. */
const char *confirm_audit_text(const confirm_state *c);

#endif
