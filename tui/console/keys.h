/* Key dispatch of the console: a pure mapping from a curses key code to a
 * console command, and the table the `?` overlay and the operator guide
 * list. Dialogs and the command line take their keys before this mapping
 * (console.c); here are the keys of the dashboard itself.
 */
#ifndef CLEANUP_TUI_KEYS_H
#define CLEANUP_TUI_KEYS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum tui_cmd {
	CMD_NONE = 0,
	CMD_QUIT,
	CMD_UP,
	CMD_DOWN,
	CMD_PAGE_UP,
	CMD_PAGE_DOWN,
	CMD_HOME,
	CMD_END,
	CMD_NEXT_PANEL,
	CMD_PREV_PANEL,
	CMD_OPEN,          /* Enter: open the detail of the selected row */
	CMD_CLOSE,         /* Esc: close the detail / overlay; stops nothing */
	CMD_HELP,
	CMD_PAUSE_DISPLAY, /* p: freeze the panels (header and clock go on) */
	CMD_SLOWER,        /* +: longer refresh interval */
	CMD_FASTER,        /* -: shorter refresh interval */
	CMD_REDRAW,        /* ^L: redraw and refresh now */
	CMD_CMDLINE,       /* : */
	CMD_FILTER,        /* /: filter the jobs list */
	CMD_SORT,          /* o: the jobs list's next sort order */
	CMD_LOG_KIND,      /* f: the log's next kind filter (all, lifecycle, audit, busy, console) */
	CMD_NEXT_GAP,      /* ]: the step history's next gap down (older): time, runner, cursor */
	CMD_PREV_GAP,      /* [: the one above (newer) */
	/* actions (none of them in --readonly) */
	CMD_STEP,
	CMD_RUN,
	CMD_STOP_RUN,
	CMD_PAUSE_JOB,     /* pause a collecting job, resume a paused one */
	CMD_CANCEL,
	CMD_SEAL,
	CMD_PREVIEW,
	CMD_KILL_RUNNER,   /* K: terminate the selected job's runner (recovery demo) */
	CMD_TERMINATE_HOLDER, /* T: terminate the selected holder of a cleanup job */
	CMD_REMOVE,        /* create remove-library / remove-server for the selected row */
	CMD__COUNT
} tui_cmd;

/* The command for KEY (a curses key code or a byte). In READONLY mode the
 * action keys map to CMD_NONE. Pure. */
tui_cmd keys_dispatch(int key, bool readonly);

/* True for the commands that act on the database. */
bool keys_is_action(tui_cmd cmd);

typedef struct key_help {
	const char *keys;  /* as shown: "j / Down" */
	const char *what;  /* what it does */
	tui_cmd cmd;
} key_help;

/* The key table, in display order. *N gets its length. */
const key_help *keys_help_table(size_t *n);

/* The console's `:` commands (console_cmd.c's table), in its order: the
 * usage of command I ("seal JOB EXPECTED_COUNT"), *ACTION (may be NULL)
 * true when it acts on the database (not in --readonly); NULL past the
 * end. The man page (man/gendoc.c) lists them from here. */
const char *console_cmd_usage(size_t i, bool *action);

/* Refresh interval ladder for + and -: the next longer (DIR > 0) or shorter
 * (DIR < 0) step from MS. Pure. */
int keys_next_interval(int ms, int dir);

#endif
