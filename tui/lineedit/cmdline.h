/* The console's command line (`:` opens it): GNU readline through its
 * callback interface when built with it (HAVE_READLINE and not
 * CLEANUP_NO_READLINE), else the built-in line editor (lineedit.h).
 *
 * The console owns the screen and the keyboard. While the command line is
 * open the console passes every key it read with wgetch() to cmdline_feed()
 * and calls cmdline_render() on every redraw; neither backend ever reads
 * from or writes to the terminal itself (readline's streams point at
 * /dev/null, its terminal preparation, signal handlers and environment
 * changes are switched off, its redisplay only records the line).
 *
 * History is kept for the process and saved after every submitted line to
 * $XDG_STATE_HOME/cleanupctl/history (else ~/.local/state/cleanupctl/history),
 * one entry a line, at most LINEEDIT_HISTORY_MAX entries.
 *
 * One command line per process (the functions keep static state); not
 * thread-safe.
 */
#ifndef CLEANUP_TUI_CMDLINE_H
#define CLEANUP_TUI_CMDLINE_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include "lineedit.h"

enum {
	CMDLINE_ACTIVE = 0,    /* still editing */
	CMDLINE_SUBMITTED = 1, /* Enter: cmdline_result() is the line */
	CMDLINE_CANCELLED = 2  /* Esc, ^C, ^G, ^D on an empty line */
};

/* Completion: the same callback as the built-in editor's (lineedit.h). It
 * gets the text before the cursor, the start of the word being completed
 * and the word, and adds candidates (commands, job ids); candidates that
 * do not start with the word are dropped. */
typedef lineedit_complete_fn cmdline_complete_fn;

/* Opens the command line with PROMPT (e.g. ":") and an empty text;
 * COMPLETE (may be NULL: Tab completes nothing) is called with ARG. Loads
 * the history file the first time. Closes a command line that is still
 * open. Returns 0, or -1 when the backend could not start (then the
 * command line stays closed). */
int cmdline_open(const char *prompt, cmdline_complete_fn complete, void *arg);

/* Feeds one key as wgetch() returned it (curses KEY_* codes, control
 * characters, UTF-8 bytes one at a time). Returns CMDLINE_ACTIVE,
 * CMDLINE_SUBMITTED or CMDLINE_CANCELLED; after the latter two the line is
 * no longer edited (further keys return the same) until the next
 * cmdline_open(). KEY_RESIZE and unknown keys are ignored. */
int cmdline_feed(int key);

/* The submitted line (after CMDLINE_SUBMITTED; "" otherwise). Owned by the
 * command line, valid until the next cmdline_open(). */
const char *cmdline_result(void);

/* True from cmdline_open() until the line is submitted or cancelled. */
bool cmdline_active(void);

/* The text being edited and the cursor (byte offset), for tests and for
 * consoles that draw the line themselves. */
const char *cmdline_text(void);
size_t cmdline_cursor(void);

/* A hint for the status line: the candidates after an ambiguous Tab
 * ("step  seal  show"), or "" when none. Owned by the command line. */
const char *cmdline_message(void);

/* Draws the prompt and the text at row Y, columns X .. X+WIDTH-1 of W,
 * scrolling the text horizontally so that the cursor stays visible, and
 * moves W's cursor to the editing position (the console shows the cursor
 * with curs_set(1) while the command line is open), the prompt in
 * PROMPT_ATTR and the text in TEXT_ATTR (the caller's colours: the line
 * editor knows no theme). Draws nothing when WIDTH < 2. */
void cmdline_render(WINDOW *w, int y, int x, int width, attr_t prompt_attr, attr_t text_attr);

/* Closes the command line (idempotent). The history stays in memory. */
void cmdline_close(void);

/* "readline" or "builtin". */
const char *cmdline_backend(void);

/* The history file's path into BUF ("" and -1 when neither XDG_STATE_HOME
 * nor HOME gives one). Does not create anything. */
int cmdline_history_path(char *buf, size_t len);

/* Number of history entries in memory (loaded and added). */
size_t cmdline_history_count(void);

/* Closes the command line and frees the history (at exit; optional). */
void cmdline_shutdown(void);

#endif
