/* The operator console (cleanupctl console): what its callers need (the
 * CLI's console and demo commands): its options and the function that
 * runs it. Everything else is the console's own, in console_int.h.
 *
 * console.c     the loop, signals, terminal set-up and restore, keys
 * console_cmd.c the command line (`:`): parsing, completion, dispatch
 * console_draw.c drawing helpers, header, footer, overlays
 * panel_*.c     one file per panel (a constant tui_panel_class each)
 */
#ifndef CLEANUP_TUI_CONSOLE_H
#define CLEANUP_TUI_CONSOLE_H

#include <stdbool.h>
#include <stdint.h>
#include "cleanup/error.h"

typedef struct console_opts {
	const char *conninfo;   /* NULL: libpq environment */
	const char *dbname;     /* for the header */
	bool readonly;          /* --readonly: no actions at all */
	const char *theme_name; /* --theme NAME (NULL: config file, else the default) */
	int refresh_ms;         /* 0: 1000 */
	double max_rate;        /* runs from this console: at most this many steps a second (0: no throttle) */
	const char *narrate;    /* a demo scenario's opening notes for the log, one a line (NULL: none) */
	int64_t narrate_job;    /* the job whose runner changes the console narrates in the log (0: none) */
	/* A demo's presenter key (cmd_demo.c): called with each key the console
	 * would otherwise dispatch; true when it took the key (NOTE, when not
	 * empty, then goes to the log). Must not block. NULL: none. */
	bool (*demo_key)(void *arg, int key, char *note, size_t len);
	void *demo_arg;
} console_opts;

/* Runs the console until the operator quits. Needs a terminal on stdin and
 * stdout (the caller checks). Returns the process exit code: 0 after q, 1
 * when the console could not start (ERR says why). */
int console_run(const console_opts *opts, cleanup_error *err);

#endif
