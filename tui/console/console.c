/* The console's loop (console.h): terminal set-up and restore (also on
 * crash signals), one poll() over the keyboard, the monitor's socket and a
 * self-pipe that carries SIGWINCH, SIGINT/SIGTERM/SIGHUP and action
 * results, key handling, and the glue between panels, confirmations and
 * the action worker. The UI thread never calls a blocking database
 * function: the monitor is asynchronous and actions run on the worker. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "cmdline.h"
#include "console_int.h"
#include "ops.h"
#include "sanitize.h"

static const tui_panel_class *const classes[PANEL__COUNT] = {
	&panel_servers, &panel_libraries, &panel_jobs, &panel_detail, &panel_locks, &panel_log,
};

/* ---- signals and terminal restore ------------------------------------ */

static volatile sig_atomic_t pending_signal;
static int wake_write_fd = -1;
static struct termios saved_termios;
static bool have_termios;
static char restore_seq[512];
static size_t restore_len;

static void wake_byte(char b)
{
	int saved = errno;
	ssize_t w;

	if (wake_write_fd >= 0) {
		do
			w = write(wake_write_fd, &b, 1);
		while (w < 0 && errno == EINTR);
	}
	errno = saved;
}

static void on_signal(int sig)
{
	if (sig == SIGWINCH) {
		wake_byte('W');
		return;
	}
	pending_signal = sig;
	wake_byte('S');
}

/* A crash: put the terminal back with async-signal-safe calls only (write
 * of escape sequences prepared at start-up, tcsetattr), then die of the
 * same signal. */
static void on_crash(int sig)
{
	ssize_t w;

	if (restore_len > 0)
		w = write(STDOUT_FILENO, restore_seq, restore_len);
	(void)w;
	if (have_termios)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void add_restore(const char *cap)
{
	char *s = tigetstr((char *)cap);
	size_t l;

	if (!s || s == (char *)-1)
		return;
	l = strlen(s);
	if (restore_len + l < sizeof restore_seq) {
		memcpy(restore_seq + restore_len, s, l);
		restore_len += l;
	}
}

static void install_signals(void)
{
	struct sigaction sa;
	static const int wake_sigs[] = {SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	static const int crash_sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
	size_t i;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < sizeof wake_sigs / sizeof wake_sigs[0]; i++)
		sigaction(wake_sigs[i], &sa, NULL);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < sizeof crash_sigs / sizeof crash_sigs[0]; i++)
		sigaction(crash_sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void reset_signals(void)
{
	static const int sigs[] = {SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
	size_t i;

	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL);
}

/* ---- messages --------------------------------------------------------- */

void console_message(console *c, theme_role role, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->message, sizeof c->message, fmt, ap);
	va_end(ap);
	c->message_role = role;
	c->message_at = cleanup_monitor_now();
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void console_note_add(console *c, theme_role role, const char *text)
{
	console_note *n = &c->notes[c->note_head];

	n->at = wall_now();
	n->role = role;
	snprintf(n->text, sizeof n->text, "%.500s", text);
	c->note_head = (c->note_head + 1) % CONSOLE_NOTES;
	if (c->nnotes < CONSOLE_NOTES)
		c->nnotes++;
}

/* ---- selection -------------------------------------------------------- */

/* The row of ROWS (N rows of SIZE bytes each) whose int64_t id at
 * ID_OFF is ID, or NULL: the snapshot's jobs and libraries by id. */
static const void *find_row(const void *rows, size_t n, size_t size, size_t id_off, int64_t id)
{
	const char *row = rows;
	int64_t row_id;

	for (; n > 0; n--, row += size) {
		memcpy(&row_id, row + id_off, sizeof row_id);
		if (row_id == id)
			return row;
	}
	return NULL;
}

const cleanup_mon_job *console_find_job(const console *c, int64_t id)
{
	return find_row(c->snap->jobs, c->snap->njobs, sizeof *c->snap->jobs, offsetof(cleanup_mon_job, job.id), id);
}

const cleanup_mon_job *console_selected_job(const console *c)
{
	return c->sel_job_id > 0 ? console_find_job(c, c->sel_job_id) : NULL;
}

const cleanup_mon_job *console_view_job(const console *c, int k)
{
	if (k < 0 || k >= c->njobs_view || c->jobs_view[k] >= c->snap->njobs)
		return NULL;
	return &c->snap->jobs[c->jobs_view[k]];
}

const cleanup_mon_library *console_view_library(const console *c, int k)
{
	if (k < 0 || k >= c->nlibs_view || c->libs_view[k] >= c->snap->nlibraries)
		return NULL;
	return &c->snap->libraries[c->libs_view[k]];
}

const cleanup_mon_library *console_find_library(const console *c, int64_t id)
{
	return find_row(c->snap->libraries, c->snap->nlibraries, sizeof *c->snap->libraries,
	                offsetof(cleanup_mon_library, row.id), id);
}

/* Puts the libraries panel's selection on library sel_lib_id when the
 * view lists it (else keeps the row index). */
static void sync_library(console *c)
{
	int k;

	for (k = 0; k < c->nlibs_view; k++)
		if (c->snap->libraries[c->libs_view[k]].row.id == c->sel_lib_id) {
			c->sel[PANEL_LIBRARIES] = k;
			return;
		}
	if (c->sel[PANEL_LIBRARIES] >= c->nlibs_view)
		c->sel[PANEL_LIBRARIES] = c->nlibs_view > 0 ? c->nlibs_view - 1 : 0;
	c->sel_lib_id = c->nlibs_view > 0 ? c->snap->libraries[c->libs_view[c->sel[PANEL_LIBRARIES]]].row.id : -1;
}

void console_build_views(console *c)
{
	c->njobs_view = (int)tui_jobs_view(c->jobs_view, sizeof c->jobs_view / sizeof c->jobs_view[0], c->snap->jobs,
	                                   c->snap->njobs, c->job_filter, c->job_sort);
	c->nlibs_view = (int)tui_libs_view(c->libs_view, sizeof c->libs_view / sizeof c->libs_view[0],
	                                   c->snap->libraries, c->snap->nlibraries, c->lib_filter, c->lib_sort);
	sync_library(c);
}

static void build_view(console *c)
{
	console_build_views(c);
}

void console_select_job(console *c, int64_t id)
{
	int k;

	if (!console_find_job(c, id))
		return;
	if (c->sel_job_id != id) {
		c->sel[PANEL_DETAIL] = 0;
		c->top[PANEL_DETAIL] = 0;
		c->steps_want = -1;
	}
	c->sel_job_id = id;
	for (k = 0; k < c->njobs_view; k++)
		if (c->snap->jobs[c->jobs_view[k]].job.id == id) {
			c->sel[PANEL_JOBS] = k;
			return;
		}
	/* Filtered out: shown in the detail; the filter is the operator's. */
}

/* Keeps the selected job selected by id across refreshes; picks the newest
 * unfinished job (else the newest) when none is selected or it vanished.
 * The locks panel's rows follow the snapshot too. */
static void sync_selection(console *c)
{
	const cleanup_mon_snapshot *s = c->snap;
	size_t i;

	console_locks_sync(c);
	build_view(c);
	if (s->njobs == 0) {
		c->sel_job_id = -1;
		return;
	}
	if (c->sel_job_id > 0 && console_find_job(c, c->sel_job_id)) {
		int k;

		for (k = 0; k < c->njobs_view; k++)
			if (c->snap->jobs[c->jobs_view[k]].job.id == c->sel_job_id) {
				c->sel[PANEL_JOBS] = k; /* the detail keeps its scroll position */
				break;
			}
		return;
	}
	for (i = 0; i < s->njobs; i++)
		if (!cleanup_job_phase_is_final(s->jobs[i].job.phase))
			break;
	if (i == s->njobs)
		i = 0;
	console_select_job(c, s->jobs[i].job.id);
}

void console_relayout(console *c)
{
	tui_layout_compute(&c->layout, COLS, LINES, c->zoom);
	if (!tui_layout_visible(&c->layout, c->focus) && !c->layout.too_small)
		c->focus = c->zoom ? PANEL_DETAIL : PANEL_JOBS;
}

/* ---- actions ---------------------------------------------------------- */

bool console_fill_job_target(const console *c, tui_action a, const cleanup_mon_job *v, confirm_target *t)
{
	(void)c;
	memset(t, 0, sizeof *t);
	if (!v)
		return false;
	t->action = a;
	t->job_id = v->job.id;
	snprintf(t->kind, sizeof t->kind, "%s", v->job.kind);
	snprintf(t->phase, sizeof t->phase, "%s", v->job.phase);
	t->step_no = v->job.step_no;
	t->target_id = strcmp(v->job.kind, "remove-server") == 0 ? v->job.server_id : v->job.library_id;
	snprintf(t->target_name, sizeof t->target_name, "%s", v->job.target_name);
	t->seal_count = -1; /* the operator types the expected count (C3) */
	t->manifest_count = v->job.manifest_count;
	t->items = -1;
	t->runner_pid = v->runner_pid;
	/* every domain row the job has deleted, as the engine's cancel counts them */
	t->gone = v->job.deleted + v->job.retries_deleted + v->job.previews_deleted + v->job.collections_deleted +
	          v->job.sync_status_deleted + v->job.history_detached + v->job.libraries_deleted + v->job.servers_deleted;
	return true;
}

static void submit(console *c, const confirm_target *t, const char *confirmation, bool audit_only,
                   const char *outcome)
{
	tui_request q;

	memset(&q, 0, sizeof q);
	q.target = *t;
	snprintf(q.confirmation, sizeof q.confirmation, "%s", confirmation ? confirmation : "");
	q.audit_only = audit_only;
	snprintf(q.outcome, sizeof q.outcome, "%s", outcome ? outcome : "");
	if (actions_submit(c->act, &q) != 0) {
		console_message(c, ROLE_WARNING, "another action is still in progress; nothing was done");
		return;
	}
	if (!audit_only) {
		if (t->job_id > 0)
			console_message(c, ROLE_INFO, "%s job %" PRId64 "...", tui_action_name(t->action), t->job_id);
		else
			console_message(c, ROLE_INFO, "%s %" PRId64 " \"%s\"...", tui_action_name(t->action), t->target_id,
			                t->target_name);
	}
}

static void hhmm_ss(char *buf, size_t len, double wall)
{
	time_t tt = (time_t)wall;
	struct tm tm;

	localtime_r(&tt, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

/* True when what action T acts on is shown from stale rows:
 * the monitor's connection is lost, or the part T's target comes
 * from timed out (jobs for a job's action, servers and libraries for a
 * removal, the lock query for terminate-holder); WHY says which, since
 * when. */
static bool stale_for(const console *c, const confirm_target *t, char *why, size_t len)
{
	const cleanup_mon_snapshot *s = c->snap;
	unsigned parts;
	double since;
	char at[16];

	if (cleanup_monitor_stale(c->mon, &since)) {
		hhmm_ss(at, sizeof at, since);
		snprintf(why, len, "the console lost its connection at %s and is reconnecting", at);
		return true;
	}
	if (t->action == ACT_TERMINATE_HOLDER) {
		if (!s->locks_error[0])
			return false;
		hhmm_ss(at, sizeof at, s->locks_at);
		snprintf(why, len, "%s; the locks panel shows the backends as of %s", s->locks_error, at);
		return true;
	}
	parts = t->action == ACT_REMOVE_LIBRARY || t->action == ACT_REMOVE_SERVER
	            ? CLEANUP_MON_PART_SERVERS | CLEANUP_MON_PART_LIBRARIES
	            : CLEANUP_MON_PART_JOBS;
	if (!(s->stale_parts & parts))
		return false;
	hhmm_ss(at, sizeof at, s->stale_parts_at);
	snprintf(why, len, "the %s panel%s did not refresh (the database was slow to answer); its rows are from %s",
	         parts == CLEANUP_MON_PART_JOBS ? "jobs" : "servers and libraries",
	         parts == CLEANUP_MON_PART_JOBS ? "" : "s", at);
	return true;
}

void console_request_action(console *c, const confirm_target *t)
{
	tui_action busy_what = ACT_NONE;
	int64_t busy_job = -1;
	char why[256];

	if (c->opts.readonly) {
		console_message(c, ROLE_WARNING, "read-only console: %s is not available", tui_action_name(t->action));
		return;
	}
	if (!confirm_precheck(t, why, sizeof why)) {
		/* Nothing the engine could do: no dialog, no audit row. */
		console_message(c, ROLE_WARNING, "%s not done: %s", tui_action_name(t->action), why);
		return;
	}
	if (console_refuse_second_runner(c, t))
		return;
	if (actions_busy(c->act, &busy_what, &busy_job)) {
		if (busy_what == ACT_RUN)
			console_message(c, ROLE_WARNING, "job %" PRId64 " is running; press t to stop it first", busy_job);
		else
			console_message(c, ROLE_WARNING, "%s of job %" PRId64 " is still in progress", tui_action_name(busy_what),
			                busy_job);
		return;
	}
	if (!c->stale_ok && stale_for(c, t, why, sizeof why)) {
		c->stale_target = *t;
		confirm_stale_question(t, why, c->stale_question, sizeof c->stale_question);
		c->stale_ask = true;
		return;
	}
	c->stale_ok = false;
	if (confirm_begin(&c->confirm, t) == CONFIRM_ACCEPTED)
		submit(c, t, "", false, NULL);
}

/* A key while the stale-data question is open: y goes on to the action's
 * own confirmation, n / Enter / Esc drop it; other keys do nothing. */
static void stale_key(console *c, int key)
{
	if (key == 'y' || key == 'Y') {
		confirm_target t = c->stale_target;

		c->stale_ask = false;
		c->stale_ok = true;
		console_request_action(c, &t);
		c->stale_ok = false;
	} else if (key == 'n' || key == 'N' || key == 27 || key == '\n' || key == '\r' || key == KEY_ENTER) {
		c->stale_ask = false;
		console_message(c, ROLE_INFO, "%s not done: the data was stale", tui_action_name(c->stale_target.action));
	}
}

static void confirm_key_pressed(console *c, int key)
{
	confirm_result r = confirm_key(&c->confirm, key);
	const confirm_target *t = &c->confirm.target;
	char outcome[512];

	switch (r) {
	case CONFIRM_ACCEPTED:
		submit(c, t, confirm_audit_text(&c->confirm), false, NULL);
		break;
	case CONFIRM_DECLINED:
		console_message(c, ROLE_INFO, "%s not done: declined", tui_action_name(t->action));
		break;
	case CONFIRM_MISMATCH:
		snprintf(outcome, sizeof outcome, "not confirmed: typed \"%.80s\" but the confirmation needs \"%.80s\"; nothing was done",
		         c->confirm.typed, c->confirm.expect);
		console_message(c, ROLE_WARNING, "%s %s", tui_action_name(t->action), outcome);
		submit(c, t, c->confirm.typed, true, outcome);
		break;
	case CONFIRM_PENDING:
		break;
	}
}

static void job_action(console *c, tui_action a)
{
	const cleanup_mon_job *v = console_selected_job(c);
	confirm_target t;

	if (!v) {
		console_message(c, ROLE_WARNING, "no job selected: choose one in the jobs panel");
		return;
	}
	if (a == ACT_PAUSE && strcmp(v->job.phase, "paused") == 0)
		a = ACT_RESUME;
	console_fill_job_target(c, a, v, &t);
	console_request_action(c, &t);
}

/* The holder the newest busy answer of job V names ("held by pid 4411
 * (role ...) holds ...", cleanup.holders_text): into T; false when none. */
static bool busy_holder(const console *c, const cleanup_mon_job *v, confirm_target *t)
{
	const cleanup_mon_snapshot *s = c->snap;
	const char *srcs[2] = {NULL, c->run_status};
	size_t i;
	int k;

	for (i = 0; i < s->nevents && !srcs[0]; i++)
		if (!s->events[i].audit && s->events[i].job_id == v->job.id && strcmp(s->events[i].kind, "busy") == 0)
			srcs[0] = s->events[i].message;
	for (k = 0; k < 2; k++) {
		const char *p = srcs[k] ? strstr(srcs[k], "held by pid ") : NULL;
		const char *end;
		long pid;

		if (!p)
			continue;
		p += strlen("held by ");
		pid = strtol(p + 4, NULL, 10);
		if (pid <= 0 || pid > INT32_MAX)
			continue;
		end = strstr(p, "; ");
		t->holder_pid = (int)pid;
		snprintf(t->holder_text, sizeof t->holder_text, "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
		return true;
	}
	return false;
}

/* T: terminate-holder for the backend selected in the locks panel, else
 * for the holder the selected job's busy answer names. The engine ends it
 * only if it still holds up a cleanup job (cleanup.terminate_holder). */
static void terminate_holder(console *c)
{
	const cleanup_mon_job *v;
	confirm_target t;

	memset(&t, 0, sizeof t);
	t.action = ACT_TERMINATE_HOLDER;
	t.job_id = -1;
	t.seal_count = -1;
	t.items = -1;
	if (c->focus == PANEL_LOCKS) {
		if (!console_locks_holder_target(c, c->sel[PANEL_LOCKS], &t)) {
			console_message(c, ROLE_WARNING, "terminate-holder: no backend selected in the locks panel");
			return;
		}
	} else if (!(v = console_selected_job(c)) || !busy_holder(c, v, &t)) {
		console_message(c, ROLE_WARNING,
		                "terminate-holder: %s; select the holder in the locks panel (Tab to it) and press T",
		                v ? "the selected job's busy answers name no holder" : "no job selected");
		return;
	}
	t.target_id = t.holder_pid;
	snprintf(t.target_name, sizeof t.target_name, "backend");
	console_request_action(c, &t);
}

bool console_refuse_second_runner(console *c, const confirm_target *t)
{
	const cleanup_mon_job *v;

	if (t->action != ACT_STEP && t->action != ACT_RUN)
		return false;
	v = console_find_job(c, t->job_id);
	if (!v || v->runner_pid <= 0)
		return false;
	console_message(c, ROLE_WARNING,
	                "%s not done: job %" PRId64 " is already being run by backend %d (%s, on %s:%d, since %s); one "
	                "runner per job: stop that runner first",
	                tui_action_name(t->action), t->job_id, v->runner_pid, v->runner_app[0] ? v->runner_app : "?",
	                v->runner_client[0] ? v->runner_client : "?", v->runner_os_pid,
	                v->runner_since[0] ? v->runner_since : "?");
	return true;
}

void console_quit(console *c)
{
	tui_action what = ACT_NONE;
	int64_t job = -1;
	const cleanup_mon_job *v;
	char where[CLEANUP_NAME_SIZE + 64] = "its target", state[96] = "";

	if (!actions_busy(c->act, &what, &job) || what != ACT_RUN) {
		c->quit = true;
		return;
	}
	/* What quitting leaves: the job (its phase and step as last seen), no
	 * runner, and its library or server still closed to writers. */
	v = console_find_job(c, job);
	if (v) {
		const cleanup_job *j = &v->job;
		bool server = strcmp(j->kind, "remove-server") == 0;
		char name[CLEANUP_NAME_SIZE];

		snprintf(where, sizeof where, "%s %" PRId64 " \"%s\"", server ? "server" : "library",
		         server ? j->server_id : j->library_id, tui_sanitize_cut(name, sizeof name, j->target_name, 40));
		snprintf(state, sizeof state, " (%s, %s, step %d)", j->kind, j->phase, j->step_no);
	}
	snprintf(c->quit_question, sizeof c->quit_question,
	         "This console is running job %" PRId64 "%s. Quitting stops the run after its current step and leaves "
	         "job %" PRId64 " unfinished with NO RUNNER, and %s closed to writers until someone runs it again "
	         "(r in a console, or cleanupctl job run %" PRId64 "). Nothing is rolled back. Quit anyway? [y/N]",
	         job, state, job, where, job);
	c->quit_ask = true;
}

/* A key while the quit question is open: y quits, n / Enter / Esc keep
 * the console and its run; other keys do nothing. */
static void quit_key(console *c, int key)
{
	if (key == 'y' || key == 'Y') {
		c->quit_ask = false;
		c->quit = true;
	} else if (key == 'n' || key == 'N' || key == 27 || key == '\n' || key == '\r' || key == KEY_ENTER) {
		c->quit_ask = false;
		/* in the log too: the run's progress soon takes the footer */
		console_message(c, ROLE_INFO, "quit not done: the run goes on (t stops it after its current step)");
		console_note_add(c, ROLE_INFO, c->message);
	}
}

void console_stop_run(console *c)
{
	tui_action what = ACT_NONE;

	if (actions_busy(c->act, &what, NULL) && what == ACT_RUN) {
		actions_stop_run(c->act);
		console_message(c, ROLE_INFO, "stopping the run after its current step...");
	} else if (what != ACT_NONE && c->run_status[0]) {
		/* an action retrying a busy answer (:wait): the busy answer stands */
		actions_stop_run(c->act);
		console_message(c, ROLE_INFO, "stopping the wait: the busy answer stands");
	} else {
		console_message(c, ROLE_INFO, "no run in progress in this console");
	}
}

bool console_fill_remove_target(console *c, tui_action a, int64_t id, confirm_target *t)
{
	size_t i;

	memset(t, 0, sizeof *t);
	t->action = a;
	t->job_id = -1;
	t->target_id = id;
	if (a == ACT_REMOVE_LIBRARY) {
		const cleanup_mon_library *l = console_find_library(c, id);

		if (l) {
			tui_count_kind k = tui_count_kind_of(l->count_state, l->count_reason);

			cleanup_text_copy(t->target_name, sizeof t->target_name, l->row.name);
			/* only a count that is the library's now: a fresh cache
			 * count or the counter's; else "item count unknown" */
			t->items = k == COUNT_FRESH || k == COUNT_COUNTER ? l->row.item_count : -1;
			return true;
		}
		console_message(c, ROLE_WARNING, "library %" PRId64 " is not on the dashboard; nothing done", id);
	} else {
		for (i = 0; i < c->snap->nservers; i++)
			if (c->snap->servers[i].row.id == id) {
				cleanup_text_copy(t->target_name, sizeof t->target_name, c->snap->servers[i].row.name);
				t->items = c->snap->servers[i].row.item_count;
				return true;
			}
		console_message(c, ROLE_WARNING, "server %" PRId64 " is not on the dashboard; nothing done", id);
	}
	return false;
}

static void take_results(console *c)
{
	/* the outcome's colour from the one table of both front ends (ops.h) */
	static const theme_role role_of[] = {
		[TUI_OP_SEVERITY_OK] = ROLE_OK,
		[TUI_OP_SEVERITY_WARNING] = ROLE_WARNING,
		[TUI_OP_SEVERITY_DANGER] = ROLE_DANGER,
	};
	tui_result r;

	while (actions_poll(c->act, &r)) {
		if (!r.final) {
			snprintf(c->run_status, sizeof c->run_status, "%.500s", r.message);
			c->run_status_at = cleanup_monitor_now();
			c->run_status_action = r.action;
			continue;
		}
		c->run_status[0] = '\0';
		c->run_status_action = ACT_NONE;
		console_message(c, role_of[tui_op_error_severity(r.status)], "%s%s%s", r.message,
		                r.hint[0] ? " — hint: " : "", r.hint);
		if (!r.audited)
			console_note_add(c, r.status == CLEANUP_OK ? ROLE_INFO : ROLE_DANGER, c->message);
		if (r.action == ACT_REMOVE_LIBRARY || r.action == ACT_REMOVE_SERVER) {
			if (r.job_id > 0)
				c->sel_job_id = r.job_id;
		}
		cleanup_monitor_refresh_now(c->mon);
	}
}

/* ---- narration (a demo scenario) -------------------------------------- */

/* Says in the log what happened to the scenario's job since the last
 * snapshot: its runner gone (NO RUNNER, library closed), a runner back
 * (resumed at step N), the job completed (the counters). */
static void narrate(console *c)
{
	const cleanup_mon_job *v;
	char text[512];
	bool active;

	if (c->opts.narrate_job <= 0 || c->snap->seq == 0 || c->paused)
		return;
	v = console_find_job(c, c->opts.narrate_job);
	if (!v)
		return;
	active = strcmp(v->job.phase, "draining") == 0 || strcmp(v->job.phase, "finalizing") == 0;
	if (c->narr_runner > 0 && v->runner_pid == 0 && active) {
		snprintf(text, sizeof text,
		         "demo: job %" PRId64 " lost its runner (backend %d) after step %d: NO RUNNER, %s %" PRId64
		         " stays closed to writers. Press r to resume it.",
		         v->job.id, c->narr_runner, v->job.step_no,
		         strcmp(v->job.kind, "remove-server") == 0 ? "server" : "library",
		         strcmp(v->job.kind, "remove-server") == 0 ? v->job.server_id : v->job.library_id);
		console_note_add(c, ROLE_DANGER, text);
		c->narr_gap = true;
		c->narr_gap_step = v->job.step_no;
	} else if (c->narr_runner == 0 && v->runner_pid > 0 && c->narr_gap) {
		snprintf(text, sizeof text,
		         "demo: job %" PRId64 " resumed at step %d by backend %d (%s), from the last committed step and "
		         "its cursor",
		         v->job.id, c->narr_gap_step + 1, v->runner_pid, v->runner_app[0] ? v->runner_app : "?");
		console_note_add(c, ROLE_OK, text);
	}
	if (c->narr_phase[0] && strcmp(c->narr_phase, v->job.phase) != 0 && strcmp(v->job.phase, "completed") == 0) {
		snprintf(text, sizeof text,
		         "demo: job %" PRId64 " completed at step %d: deleted %" PRId64 ", kept %" PRId64 ", moved %" PRId64
		         ", absent %" PRId64 ": %" PRId64 " examined, each once, of %" PRId64 " in scope at sealing",
		         v->job.id, v->job.step_no, v->job.deleted, v->job.kept, v->job.moved, v->job.absent, v->job.examined,
		         v->job.total_estimate);
		console_note_add(c, ROLE_OK, text);
	}
	c->narr_runner = v->runner_pid;
	snprintf(c->narr_phase, sizeof c->narr_phase, "%s", v->job.phase);
}

/* ---- keys ------------------------------------------------------------- */

static void set_paused(console *c, bool paused)
{
	cleanup_error err;

	if (paused == c->paused)
		return;
	if (paused) {
		if (cleanup_mon_snapshot_copy(&c->frozen, cleanup_monitor_snapshot(c->mon), &err) != CLEANUP_OK) {
			console_message(c, ROLE_DANGER, "cannot pause the display: %s", err.message);
			return;
		}
		c->paused = true;
		c->snap = c->frozen;
		console_message(c, ROLE_INFO, "display paused (p resumes); the database is still watched");
	} else {
		c->paused = false;
		c->snap = cleanup_monitor_snapshot(c->mon);
		cleanup_mon_snapshot_free(c->frozen);
		c->frozen = NULL;
		console_locks_sync(c);
		console_message(c, ROLE_INFO, "display resumed");
	}
}

static void move_sel(console *c, int delta, bool absolute)
{
	int n = classes[c->focus]->rows(c);

	if (n <= 0)
		return;
	if (absolute)
		c->sel[c->focus] = delta < 0 ? 0 : n - 1;
	else
		c->sel[c->focus] += delta;
	if (c->sel[c->focus] < 0)
		c->sel[c->focus] = 0;
	if (c->sel[c->focus] >= n)
		c->sel[c->focus] = n - 1;
	if (c->focus == PANEL_JOBS && console_view_job(c, c->sel[PANEL_JOBS]))
		console_select_job(c, console_view_job(c, c->sel[PANEL_JOBS])->job.id);
	if (c->focus == PANEL_LIBRARIES && console_view_library(c, c->sel[PANEL_LIBRARIES]))
		c->sel_lib_id = console_view_library(c, c->sel[PANEL_LIBRARIES])->row.id;
}

static void next_panel(console *c, int dir)
{
	int i, p = c->focus;

	for (i = 0; i < PANEL__COUNT; i++) {
		p = (p + dir + PANEL__COUNT) % PANEL__COUNT;
		if (tui_layout_visible(&c->layout, (tui_panel_id)p)) {
			c->focus = (tui_panel_id)p;
			return;
		}
	}
}

static int page_rows(const console *c)
{
	int h = c->layout.panels[c->focus].h - 3;

	return h > 1 ? h : 1;
}

/* The keys that move the selection: DIR rows, or DIR pages (PAGE), or to
 * the first or last row (END). */
static const struct move_key {
	tui_cmd cmd;
	int dir;
	bool page, end;
} move_keys[] = {
	{CMD_UP, -1, false, false},     {CMD_DOWN, 1, false, false}, {CMD_PAGE_UP, -1, true, false},
	{CMD_PAGE_DOWN, 1, true, false}, {CMD_HOME, -1, false, true}, {CMD_END, 1, false, true},
};

/* The keys that act: ACTION on the selected job, or (ACT_NONE) CALL. */
static const struct act_key {
	tui_cmd cmd;
	tui_action action;
	void (*call)(console *c);
} act_keys[] = {
	{CMD_STEP, ACT_STEP, NULL},
	{CMD_RUN, ACT_RUN, NULL},
	{CMD_PAUSE_JOB, ACT_PAUSE, NULL},
	{CMD_CANCEL, ACT_CANCEL, NULL},
	{CMD_SEAL, ACT_SEAL, NULL},
	{CMD_PREVIEW, ACT_PREVIEW, NULL},
	{CMD_KILL_RUNNER, ACT_KILL_RUNNER, NULL},
	{CMD_STOP_RUN, ACT_NONE, console_stop_run},
	{CMD_TERMINATE_HOLDER, ACT_NONE, terminate_holder},
	{CMD_QUIT, ACT_NONE, console_quit},
	{CMD_CMDLINE, ACT_NONE, console_cmdline_open},
};

static void handle_cmd(console *c, tui_cmd cmd)
{
	size_t i;
	int ms;

	/* the focused panel's own meaning of the key first */
	if (classes[c->focus]->key && classes[c->focus]->key(c, cmd))
		return;
	for (i = 0; i < sizeof move_keys / sizeof move_keys[0]; i++)
		if (move_keys[i].cmd == cmd) {
			move_sel(c, move_keys[i].page ? move_keys[i].dir * page_rows(c) : move_keys[i].dir, move_keys[i].end);
			return;
		}
	for (i = 0; i < sizeof act_keys / sizeof act_keys[0]; i++)
		if (act_keys[i].cmd == cmd) {
			if (act_keys[i].action != ACT_NONE)
				job_action(c, act_keys[i].action);
			else
				act_keys[i].call(c);
			return;
		}
	switch (cmd) {
	case CMD_NEXT_PANEL:
		next_panel(c, 1);
		break;
	case CMD_PREV_PANEL:
		next_panel(c, -1);
		break;
	case CMD_OPEN:
		classes[c->focus]->open(c);
		break;
	case CMD_CLOSE:
		if (c->zoom) {
			c->zoom = false;
			c->focus = PANEL_JOBS;
			console_relayout(c);
		}
		c->message[0] = '\0';
		break;
	case CMD_HELP:
		c->help = true;
		c->help_top = 0;
		break;
	case CMD_PAUSE_DISPLAY:
		set_paused(c, !c->paused);
		break;
	case CMD_SLOWER:
	case CMD_FASTER:
		ms = keys_next_interval(cleanup_monitor_interval(c->mon), cmd == CMD_SLOWER ? 1 : -1);
		cleanup_monitor_set_interval(c->mon, ms);
		console_message(c, ROLE_INFO, "refresh every %g s", ms / 1000.0);
		break;
	case CMD_REDRAW:
		clearok(curscr, TRUE);
		cleanup_monitor_refresh_now(c->mon);
		break;
	case CMD_FILTER:
		/* the libraries or the log when they have the focus, else the jobs */
		if (c->focus != PANEL_LIBRARIES && c->focus != PANEL_LOG)
			c->focus = PANEL_JOBS;
		if (c->zoom) {
			c->zoom = false;
			console_relayout(c);
		}
		c->filter_panel = c->focus;
		c->filter_editing = true;
		break;
	case CMD_SORT: /* the jobs' (the libraries panel sorts its own) */
		c->job_sort = (tui_job_sort)((c->job_sort + 1) % JOB_SORT__COUNT);
		build_view(c);
		console_select_job(c, c->sel_job_id);
		console_message(c, ROLE_INFO, "jobs sorted by %s (o changes it)", tui_job_sort_name(c->job_sort));
		break;
	case CMD_LOG_KIND:
		c->log_kind = (console_log_kind)((c->log_kind + 1) % LOG_KIND__COUNT);
		c->sel[PANEL_LOG] = 0;
		c->top[PANEL_LOG] = 0;
		if (c->log_kind == LOG_KIND_ALL)
			console_message(c, ROLE_INFO, "log: every kind of line (f shows one kind)");
		else
			console_message(c, ROLE_INFO, "log: %s lines only (f: the next kind)", console_log_kind_name(c->log_kind));
		break;
	case CMD_NEXT_GAP:
	case CMD_PREV_GAP: /* the detail's keys (panel_detail.c) */
		console_message(c, ROLE_INFO, "%s: the step history's gaps: Tab to the job detail (or Enter on a job) first",
		                cmd == CMD_NEXT_GAP ? "]" : "[");
		break;
	case CMD_REMOVE: /* the servers' and libraries' key */
		console_message(c, ROLE_WARNING, "D removes the selected library or server: Tab to that panel first");
		break;
	default:
		break;
	}
}

/* A key while the jobs filter is being typed: printable bytes add to it,
 * Backspace removes one, Enter keeps it, Esc clears it. The view follows
 * every key. */
static void filter_key(console *c, int key)
{
	bool libs = c->filter_panel == PANEL_LIBRARIES, log = c->filter_panel == PANEL_LOG;
	char *f = log ? c->log_filter : libs ? c->lib_filter : c->job_filter;
	size_t size = log ? sizeof c->log_filter : libs ? sizeof c->lib_filter : sizeof c->job_filter, l = strlen(f);

	if (key == '\n' || key == '\r' || key == KEY_ENTER) {
		c->filter_editing = false;
	} else if (key == 27) {
		c->filter_editing = false;
		f[0] = '\0';
	} else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (l > 0)
			f[l - 1] = '\0';
	} else if (key >= 0x20 && key < 0x7f && l + 1 < size) {
		f[l] = (char)key;
		f[l + 1] = '\0';
	}
	if (log) {
		c->sel[PANEL_LOG] = 0;
		c->top[PANEL_LOG] = 0;
		return;
	}
	if (libs) {
		c->sel[PANEL_LIBRARIES] = 0;
		c->top[PANEL_LIBRARIES] = 0;
		c->sel_lib_id = -1;
		build_view(c);
		return;
	}
	c->sel[PANEL_JOBS] = 0;
	c->top[PANEL_JOBS] = 0;
	build_view(c);
	if (c->njobs_view > 0 && !c->filter_editing && key != 27)
		console_select_job(c, c->snap->jobs[c->jobs_view[0]].job.id);
}

/* A log line shown whole: any key closes it, and does nothing else. */
static void log_open_key(console *c, int key)
{
	(void)key;
	c->log_open = false;
}

/* The help: scroll keys scroll it; any other key closes it, and does nothing
 * else. */
static void help_key(console *c, int key)
{
	tui_cmd h = keys_dispatch(key, true);

	if (h == CMD_DOWN || h == CMD_UP || h == CMD_PAGE_DOWN || h == CMD_PAGE_UP || h == CMD_HOME || h == CMD_END) {
		int page = c->layout.rows - 8 > 1 ? c->layout.rows - 8 : 1;

		c->help_top += h == CMD_DOWN ? 1 : h == CMD_UP ? -1 : h == CMD_PAGE_DOWN ? page : h == CMD_PAGE_UP ? -page
		               : h == CMD_HOME ? -100000 : 100000;
		/* console_draw clamps help_top to what there is */
	} else {
		c->help = false;
	}
}

/* The modes that take every key while they last, the first that is on
 * first: ACTIVE is the offset of the console's bool that says it is on. */
static const struct key_mode {
	size_t active;
	void (*key)(console *c, int key);
} key_modes[] = {
	{offsetof(console, quit_ask), quit_key},
	{offsetof(console, stale_ask), stale_key},
	{offsetof(console, log_open), log_open_key},
	{offsetof(console, confirm.active), confirm_key_pressed},
	{offsetof(console, cmdline), console_cmdline_key},
	{offsetof(console, filter_editing), filter_key},
	{offsetof(console, help), help_key},
};

static void handle_key(console *c, int key)
{
	size_t i;

	if (key == KEY_RESIZE) {
		console_relayout(c);
		return;
	}
	for (i = 0; i < sizeof key_modes / sizeof key_modes[0]; i++)
		if (*(const bool *)((const char *)c + key_modes[i].active)) {
			key_modes[i].key(c, key);
			return;
		}
	if (c->opts.demo_key) { /* a demo's presenter key (cmd_demo.c) */
		char note[512] = "";

		if (c->opts.demo_key(c->opts.demo_arg, key, note, sizeof note)) {
			if (note[0])
				console_note_add(c, ROLE_WARNING, note);
			return;
		}
	}
	handle_cmd(c, keys_dispatch(key, c->opts.readonly));
}

/* ---- the loop --------------------------------------------------------- */

static void resize_from_tty(console *c)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	console_relayout(c);
	clearok(curscr, TRUE);
}

static int setup_pipe(int fds[2])
{
	int i;

	if (pipe(fds) != 0)
		return -1;
	for (i = 0; i < 2; i++) {
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	}
	return 0;
}

int console_run(const console_opts *opts, cleanup_error *err)
{
	console *c = NULL;
	cleanup_monitor_opts mo;
	int code = 0, sig = 0;
	bool curses_on = false;
	long last_second = -1;

	c = calloc(1, sizeof *c);
	if (!c)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory"), 1;
	c->opts = *opts;
	c->wake[0] = c->wake[1] = -1;
	c->sel_job_id = -1;
	c->sel_lib_id = -1;
	c->steps_want = -1;
	c->focus = PANEL_JOBS;
	c->filter_panel = PANEL_JOBS;
	setlocale(LC_ALL, "");
	c->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	if (theme_select(&c->t, opts->theme_name, c->theme_msg, sizeof c->theme_msg) != 0)
		console_message(c, ROLE_WARNING, "theme: %s", c->theme_msg);
	if (setup_pipe(c->wake) != 0) {
		cleanup_error_set(err, CLEANUP_ERROR, "cannot create a pipe: %s", strerror(errno));
		code = 1;
		goto out;
	}
	wake_write_fd = c->wake[1];
	memset(&mo, 0, sizeof mo);
	mo.conninfo = opts->conninfo;
	mo.app_name = "cleanupctl:console";
	mo.refresh_ms = opts->refresh_ms;
	mo.steps_limit = CLEANUP_MON_STEPS_PAGE;
	if (cleanup_monitor_open(&c->mon, &mo, err) != CLEANUP_OK ||
	    actions_start(&c->act, opts->conninfo, c->wake[1], err) != CLEANUP_OK) {
		code = 1;
		goto out;
	}
	c->snap = cleanup_monitor_snapshot(c->mon);
	if (opts->max_rate > 0)
		actions_set_max_rate(c->act, opts->max_rate);
	if (opts->narrate && *opts->narrate) {
		/* one note a line, the first on top (the log is newest first) */
		const char *end = opts->narrate + strlen(opts->narrate), *p = end;

		while (p > opts->narrate) {
			const char *q = p;
			char line[512];

			while (q > opts->narrate && q[-1] != '\n')
				q--;
			snprintf(line, sizeof line, "%.*s", (int)(p - q), q);
			if (line[0])
				console_note_add(c, ROLE_INFO, line);
			p = q > opts->narrate ? q - 1 : q;
		}
	}
	c->narr_runner = -1;

	have_termios = tcgetattr(STDIN_FILENO, &saved_termios) == 0;
	install_signals(); /* before initscr: ncurses then leaves SIGWINCH to us */
	if (!initscr()) {
		cleanup_error_set(err, CLEANUP_ERROR, "cannot initialise the terminal (TERM=%s)",
		                  getenv("TERM") ? getenv("TERM") : "");
		code = 1;
		goto out;
	}
	curses_on = true;
	add_restore("sgr0");
	add_restore("cnorm");
	add_restore("rmkx");
	add_restore("rmcup");
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	theme_apply(&c->t);
	bkgdset(theme_attr(ROLE_NORMAL));
	console_relayout(c);

	while (!c->quit) {
		struct pollfd p[3];
		double mono = cleanup_monitor_now(), wall = wall_now();
		int np = 0, mfd, t, bits, key;
		short mev = 0;

		take_results(c);
		if (c->quit_ask) {
			tui_action what = ACT_NONE;

			/* the run ended while asking: the question no longer holds */
			if (!actions_busy(c->act, &what, NULL) || what != ACT_RUN) {
				c->quit_ask = false;
				console_message(c, ROLE_INFO, "the run ended while quit was being asked; nothing runs now (q quits)");
			}
		}
		if (!c->paused)
			c->snap = cleanup_monitor_snapshot(c->mon);
		sync_selection(c);
		narrate(c);
		console_narrate_connection(c, wall);
		cleanup_monitor_set_detail_job(c->mon, c->sel_job_id);
		console_draw(c, wall);
		/* the page of steps the detail panel asked for while drawing */
		cleanup_monitor_set_steps_upto(c->mon, c->steps_want);
		last_second = (long)wall;

		p[np].fd = STDIN_FILENO;
		p[np].events = POLLIN;
		np++;
		p[np].fd = c->wake[0];
		p[np].events = POLLIN;
		np++;
		mfd = cleanup_monitor_fd(c->mon, &mev);
		if (mfd >= 0) {
			p[np].fd = mfd;
			p[np].events = mev;
			np++;
		}
		/* Wake for the monitor's timers and for the clock's next second. */
		t = cleanup_monitor_timeout_ms(c->mon, mono);
		{
			int to_second = (int)((1.0 - (wall - (double)last_second)) * 1000.0) + 5;

			if (to_second < t)
				t = to_second;
		}
		if (poll(p, (nfds_t)np, t) < 0 && errno != EINTR)
			break;
		if (p[1].revents & POLLIN) {
			char buf[64];
			ssize_t n;

			while ((n = read(c->wake[0], buf, sizeof buf)) > 0) {
				ssize_t i;

				for (i = 0; i < n; i++)
					if (buf[i] == 'W')
						resize_from_tty(c);
			}
		}
		if (pending_signal) {
			sig = pending_signal;
			break;
		}
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL) && !(p[0].revents & POLLIN))
			break; /* the terminal is gone */
		while ((key = getch()) != ERR)
			handle_key(c, key);
		bits = cleanup_monitor_service(c->mon, cleanup_monitor_now());
		(void)bits;
	}
out:
	if (c->cmdline)
		cmdline_close();
	actions_shutdown(c->act); /* a run stops after its current step */
	if (curses_on) {
		endwin();
		reset_signals();
	}
	wake_write_fd = -1;
	cleanup_monitor_close(c->mon);
	cleanup_mon_snapshot_free(c->frozen);
	if (c->wake[0] >= 0)
		close(c->wake[0]);
	if (c->wake[1] >= 0)
		close(c->wake[1]);
	free(c);
	cmdline_shutdown();
	if (sig) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	return code;
}
