/* The console's inside (console.h is what its callers see): its state
 * (struct console), the panel class, and what the console's own files
 * share. One poll() loop over the keyboard, the monitor's libpq socket, a
 * wake-up pipe (action results and signals) and timers; panels drawn
 * from the monitor's snapshots; actions confirmed in dialogs and run by
 * the worker (actions.h). Not included outside tui/console/ (and the
 * console's unit tests).
 */
#ifndef CLEANUP_TUI_CONSOLE_INT_H
#define CLEANUP_TUI_CONSOLE_INT_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "actions.h"
#include "cleanup/monitor.h"
#include "confirm.h"
#include "console.h"
#include "jobview.h"
#include "keys.h"
#include "layout.h"
#include "theme.h"

#define CONSOLE_NOTES 64
/* The parts of a snapshot that can go stale (CLEANUP_MON_PART_*, bit k). */
#define CONSOLE_PARTS 6
#define CONSOLE_LOCK_TREE 512    /* the locks panel's tree rows, at most */
#define CONSOLE_LOCK_HOLDERS 64  /* and the idle holders listed below it */

/* A line the console itself adds to the log (outcomes arrive as audit rows
 * too; these cover what could not be recorded). */
typedef struct console_note {
	double at;          /* wall clock */
	char text[512];
	theme_role role;
} console_note;

typedef struct console console;

/* The log's kind filter (f cycles it). */
typedef enum console_log_kind {
	LOG_KIND_ALL = 0,
	LOG_KIND_LIFECYCLE,   /* engine events but busy retries: created, sealed, completed, ... */
	LOG_KIND_AUDIT,       /* operator actions and the engine's audited deletions (cleanup.audit) */
	LOG_KIND_BUSY,        /* busy retries */
	LOG_KIND_CONSOLE,     /* this console's own notes */
	LOG_KIND__COUNT
} console_log_kind;

/* "all", "lifecycle", "audit", "busy", "console". */
const char *console_log_kind_name(console_log_kind k);

/* A panel: a constant class of functions (as htop's Panel). */
typedef struct tui_panel_class {
	tui_panel_id id;
	/* Number of selectable rows. */
	int (*rows)(const console *c);
	/* Draws the panel's content inside R (the border is drawn by the caller). */
	void (*draw)(console *c, tui_rect r, bool focused);
	/* Enter on the selected row. */
	void (*open)(console *c);
	/* A key of the panel's own, while it has the focus (NULL: none):
	 * true when it handled CMD, else the console's default for CMD
	 * applies (keys.c maps keys to commands; the panel decides what a
	 * command means on its rows). */
	bool (*key)(console *c, tui_cmd cmd);
} tui_panel_class;

extern const tui_panel_class panel_servers, panel_libraries, panel_jobs, panel_detail, panel_locks,
	panel_log;

/* The locks panel's rows, computed once per snapshot (console_locks_sync,
 * panel_locks.c) and read by its drawing, its keys and T: the blocking tree
 * (cleanup_locks_tree), then the sessions idle in a transaction that the
 * tree does not show. */
typedef struct console_locks {
	uint64_t seq;                         /* the snapshot's they were computed from */
	size_t order[CONSOLE_LOCK_TREE];      /* the tree's rows: indexes into snap->locks */
	int depth[CONSOLE_LOCK_TREE];
	size_t n;                             /* the tree's rows */
	size_t blocked;                       /* how many of them wait for a listed backend */
	size_t idx[CONSOLE_LOCK_HOLDERS];     /* the holders' rows: indexes into snap->holders */
	size_t nx;
	/* every row's backend (the tree's, then the holders'): the selection
	 * follows the selected backend across refreshes */
	int pid[CONSOLE_LOCK_TREE + CONSOLE_LOCK_HOLDERS];
} console_locks;

struct console {
	console_opts opts;
	cleanup_monitor *mon;
	tui_actions *act;
	const cleanup_mon_snapshot *snap; /* shown: the monitor's, or FROZEN while paused */
	cleanup_mon_snapshot *frozen;
	bool paused;
	bool utf8;
	bool quit;
	/* q (or :quit) while this console runs a job: the
	 * y/N question saying what quitting leaves behind, shown in the
	 * dialog style of confirmations; "" when not asking. */
	bool quit_ask;
	char quit_question[1024];
	/* An action asked for on stale data: the y/N
	 * question first (stale_question), then the action's own dialog. */
	bool stale_ask;
	bool stale_ok;                    /* answered y: the next request goes on */
	confirm_target stale_target;
	char stale_question[1600];
	tui_layout layout;
	tui_panel_id focus;
	int sel[PANEL__COUNT];            /* selected row per panel */
	int top[PANEL__COUNT];            /* first row shown per panel */
	int64_t sel_job_id;               /* the selected job (stable across refreshes), -1 none */
	bool zoom;                        /* the detail panel fills the body */
	bool help;
	confirm_state confirm;
	bool cmdline;
	char message[1024];               /* the footer's message line */
	theme_role message_role;
	double message_at;                /* monotonic; messages fade after a while */
	console_note notes[CONSOLE_NOTES];
	int nnotes, note_head;
	char run_status[512];             /* progress of a run in progress, or of an action retrying
	                                   * a busy answer (:wait), "" when none */
	tui_action run_status_action;     /* whose progress run_status is */
	double run_status_at;             /* monotonic: when it last changed */
	int help_top;                     /* first row of the help shown (it scrolls) */
	/* The jobs panel's view: filter (`/`) and sort (`o`), rebuilt from
	 * each snapshot; sel[PANEL_JOBS] indexes jobs_view. */
	char job_filter[64];
	bool filter_editing;
	tui_panel_id filter_panel;        /* what `/` is editing: PANEL_JOBS or PANEL_LIBRARIES */
	tui_job_sort job_sort;
	size_t jobs_view[1024];
	int njobs_view;
	/* The libraries panel's view, the same way; sel[PANEL_LIBRARIES]
	 * indexes libs_view, sel_lib_id keeps the selection across refreshes. */
	char lib_filter[64];
	tui_lib_sort lib_sort;
	size_t libs_view[2048];
	int nlibs_view;
	int64_t sel_lib_id;
	/* The locks panel's rows; sel[PANEL_LOCKS] indexes them. */
	console_locks locks;
	/* The log as a tool: `/` with the log focused
	 * searches it (every word, ignoring case), `f` shows one kind only,
	 * Enter opens the selected line whole in a box (any key closes it). */
	char log_filter[64];
	console_log_kind log_kind;
	bool log_open;
	char log_open_title[128];
	char log_open_text[1600];
	/* The detail's step history: the page of steps the
	 * monitor should read (numbered at most steps_want; -1: the newest),
	 * chosen by the detail panel from its scroll position. */
	int64_t steps_want;
	/* Narration of opts.narrate_job (a demo scenario): what was seen last. */
	int narr_runner;                  /* its runner's backend, 0 none, -1 not seen yet */
	bool narr_gap;                    /* it has been without a runner */
	int narr_gap_step;                /* its last step when the runner was lost */
	char narr_phase[16];
	/* This console's own connection, as narrated in the log
	 * (narrate_conn.c): a loss not yet followed by a reconnect, since
	 * when (wall clock), the last reconnect attempt seen; the stale parts
	 * narrated, since when, and the snapshot they were read from. */
	bool conn_lost;
	double conn_lost_at;
	int conn_attempt_noted;
	unsigned parts_stale;
	double part_since[CONSOLE_PARTS];
	uint64_t parts_seq;
	theme t;
	char theme_msg[256];
	int wake[2];                      /* the self-pipe */
};

/* console.c */
void console_message(console *c, theme_role role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void console_note_add(console *c, theme_role role, const char *text);
/* Starts action T: asks for confirmation when needed, else submits. */
void console_request_action(console *c, const confirm_target *t);
const cleanup_mon_job *console_selected_job(const console *c);
/* Recomputes the layout for the terminal's size and the zoom state. */
void console_relayout(console *c);
const cleanup_mon_job *console_find_job(const console *c, int64_t id);
void console_select_job(console *c, int64_t id);
bool console_fill_job_target(const console *c, tui_action a, const cleanup_mon_job *j, confirm_target *t);
/* Fills T for creating a removal (ACT_REMOVE_LIBRARY / _SERVER) of ID as
 * the dashboard shows it; false (and a message) when it does not. */
bool console_fill_remove_target(console *c, tui_action a, int64_t id, confirm_target *t);
/* q and :quit: quits at once, unless this console is running a job; then
 * asks first (quit_question), saying what will be left: the job, its
 * runner gone, its library closed to writers. */
void console_quit(console *c);
/* Asks this console's run to stop after its current step (t, :stop). */
void console_stop_run(console *c);
/* True (with a message naming the holder) when T is a step or a run of a
 * job that the snapshot shows another session running. */
bool console_refuse_second_runner(console *c, const confirm_target *t);

/* panel_jobs.c: the pace of V's recent steps in settled rows per second
 * (progress.h), -1 when unknown. */
double console_job_pace(const cleanup_mon_job *v);
/* The ETA column's text (progress.h's tui_eta_text), or "stalled" when a
 * runner holds the job but has not committed a step for 30 s. */
const char *console_job_eta(char *buf, size_t len, const cleanup_mon_job *v);
/* "NO RUNNER for 2m10s: library 4 "Movies" closed to writers for 15m02s"
 * for a draining or finalizing job nobody runs (the first age since its
 * last step, the second since its library was closed), into BUF. */
const char *console_unattended_text(char *buf, size_t len, const cleanup_mon_job *v);

/* panel_locks.c: fills T's holder_pid and holder_text from row K of the
 * locks panel (a backend of the blocking tree, or a session idle in a
 * transaction for more than 10 s below it); false when there is none. */
bool console_locks_holder_target(const console *c, int k, confirm_target *t);
/* Computes the locks panel's rows (c->locks) when the shown snapshot is
 * new, keeping the selection on the backend it was on. */
void console_locks_sync(console *c);

/* The job at row K of the jobs panel's view (NULL when none). */
const cleanup_mon_job *console_view_job(const console *c, int k);
/* The library at row K of the libraries panel's view (NULL when none). */
const cleanup_mon_library *console_view_library(const console *c, int k);
/* The snapshot's library ID (NULL when it is not there). */
const cleanup_mon_library *console_find_library(const console *c, int64_t id);
/* Rebuilds the jobs and libraries views from the shown snapshot. */
void console_build_views(console *c);

/* narrate_conn.c: notes in the log for this console's own connection
 * changes since the last call (lost with the reason, reconnecting,
 * reconnected after N s; a part stale on a statement timeout, and back).
 * WALL: the wall clock now. */
void console_narrate_connection(console *c, double wall);
/* The name of snapshot part K (bit k of stale_parts): "servers",
 * "libraries", "jobs", "steps", "log", "contention". */
const char *console_part_name(int k);

/* console_cmd.c */
void console_cmdline_open(console *c);
void console_cmdline_key(console *c, int key);
/* The id argument S of command CMD (WHAT: "job id", "library id", "server
 * id") by the CLI's rule and in its words (ops.h, tui_op_parse_id): true
 * with *OUT; else false with MSG 'CMD: WHAT must be an integer from 1 to
 * ..., not "S": RULE (usage: USAGE)'. Pure. */
bool console_parse_id_arg(int64_t *out, char *msg, size_t len, const char *cmd, const char *what, const char *s,
                          const char *usage);
/* Runs one command line (also used by tests through the binary). */
void console_execute(console *c, const char *line);

/* console_draw.c */
theme_role console_phase_role(const char *phase);
/* WALL (seconds since 1970) as local HH:MM:SS, into BUF. */
const char *console_clock(char *buf, size_t len, double wall);
/* Writes S at (Y, X), at most W display columns, with ROLE's attributes;
 * returns the columns used. */
int console_put(int y, int x, int w, theme_role role, const char *s);
int console_putf(int y, int x, int w, theme_role role, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Display width of UTF-8 S (at most its first LIMIT bytes). */
int console_width(const char *s);
void console_box(tui_rect r, const char *title, bool focused);
const char *console_count(char *buf, size_t len, int64_t n);
/* N in at most 6 characters: 12,345 / 456k / 12.3M / 1.2G. */
const char *console_compact(char *buf, size_t len, int64_t n);
const char *console_eta(char *buf, size_t len, double seconds);
/* A progress bar of W cells for DONE of TOTAL. */
void console_bar(int y, int x, int w, int64_t done, int64_t total);
/* Scrolls panel P so that its selected row is visible in VISIBLE rows. */
void console_scroll(console *c, tui_panel_id p, int nrows, int visible);

/* list.c: the one list routine every list panel uses (htop's Panel).
 * Draws panel P's list of NROWS rows in R (one row a line): scrolls it
 * so that the selection (sel[P]) is in view, fills row SEL_ROW (-1:
 * none; the selection when the panel has the focus) with the selection
 * colour, and has ROW draw each row in view: row K at line Y of R, SEL
 * when it is the highlighted one (its text then in console_row_role).
 * Returns the number of rows drawn. */
typedef void (*console_row_fn)(console *c, int k, int y, tui_rect r, bool sel, void *ctx);
int console_list(console *c, tui_panel_id p, tui_rect r, int nrows, int sel_row, console_row_fn row, void *ctx);
/* ROLE, or ROLE_SELECTION on the highlighted row. */
theme_role console_row_role(bool sel, theme_role role);
void console_draw(console *c, double now_wall);

#endif
