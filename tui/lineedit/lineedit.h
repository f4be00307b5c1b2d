/* The built-in line editor: the console's command line when GNU readline is
 * not available or is switched off (WITH_READLINE=OFF, cleanupctl-norl).
 *
 * Pure logic, no curses calls (only curses' key codes): it takes one key at a
 * time as wgetch() returns it, with UTF-8 text arriving byte by byte, and
 * keeps a bounded UTF-8 buffer, the cursor as a byte offset that always sits
 * on a character boundary, a kill buffer and a bounded history. Emacs keys:
 *
 *   ^A / Home  start of line        ^E / End    end of line
 *   ^B / Left  one character back   ^F / Right  one character forward
 *   Backspace (KEY_BACKSPACE, 127, ^H)  delete the character before the cursor
 *   ^D / Delete  delete the character under the cursor (^D on an empty line cancels)
 *   ^W  delete the word before the cursor (up to whitespace)
 *   ^K  kill to the end of the line     ^U  kill to the start of the line
 *   ^Y  yank the last killed text       ^T  transpose characters
 *   ^P / Up, ^N / Down  history         Enter  submit   Esc, ^C, ^G  cancel
 *   Tab  complete (the caller runs lineedit_complete())
 *
 * Backspace and ^W never split a UTF-8 character; invalid UTF-8 is dropped.
 */
#ifndef CLEANUP_TUI_LINEEDIT_H
#define CLEANUP_TUI_LINEEDIT_H

#include <stdbool.h>
#include <stddef.h>

#define LINEEDIT_MAX 1024        /* buffer bytes, including the terminating NUL */
#define LINEEDIT_HISTORY_MAX 500 /* entries kept; the oldest go first */

typedef enum lineedit_action {
	LE_NONE = 0,   /* the key was handled (or ignored); keep editing */
	LE_SUBMIT,     /* Enter: the text is the submitted line */
	LE_CANCEL,     /* Esc, ^C, ^G, or ^D on an empty line */
	LE_COMPLETE    /* Tab: the caller should call lineedit_complete() */
} lineedit_action;

typedef struct lineedit {
	char buf[LINEEDIT_MAX];
	size_t len;                 /* bytes in buf, excluding the NUL */
	size_t cursor;              /* byte offset, on a character boundary */
	unsigned char pending[4];   /* an incomplete UTF-8 sequence */
	int npending, need;
	char kill[LINEEDIT_MAX];    /* the last killed text (^K ^U ^W), for ^Y */
	char **history;             /* oldest first; each malloc'd */
	size_t nhistory;
	size_t hpos;                /* browsing position; == nhistory on the new line */
	char *saved;                /* the new line while browsing history (malloc'd) */
} lineedit;

/* Candidates collected by a completion callback (lineedit_candidates_add
 * copies each string). */
typedef struct lineedit_candidates {
	char **items;
	size_t n, cap;
} lineedit_candidates;

/* A completion callback: adds the candidates for the word WORD (the text
 * from WORD_START up to the cursor) of LINE (the text before the cursor) to
 * OUT with lineedit_candidates_add(). It may add candidates that do not
 * start with WORD: those are dropped. ARG is the caller's. For example, the
 * console offers commands for the first word and job ids after a command. */
typedef void (*lineedit_complete_fn)(lineedit_candidates *out, const char *line, size_t word_start,
                                     const char *word, void *arg);

/* Initialises LE (empty line, empty history). */
void lineedit_init(lineedit *le);

/* Frees LE's history and saved line; LE can be initialised again. Accepts NULL. */
void lineedit_free(lineedit *le);

/* Clears the line (not the history) and ends history browsing. */
void lineedit_reset(lineedit *le);

/* Handles one key: a curses key code (KEY_LEFT, ...), a control character or
 * one byte of UTF-8 text. Returns what the caller should do. */
lineedit_action lineedit_key(lineedit *le, int key);

/* Inserts the UTF-8 text S at the cursor (invalid sequences and control
 * characters are dropped). Returns false when it did not fit whole; then
 * nothing was inserted. */
bool lineedit_insert(lineedit *le, const char *s);

/* Replaces the line with S and puts the cursor at its end. */
void lineedit_set(lineedit *le, const char *s);

/* The text (NUL-terminated, owned by LE). */
const char *lineedit_text(const lineedit *le);

/* The cursor as a byte offset into the text. */
size_t lineedit_cursor(const lineedit *le);

/* The cursor's display column: the terminal width (wcwidth) of the text
 * before it. Needs an LC_CTYPE with UTF-8 (setlocale); characters wcwidth
 * does not know count as 1. */
int lineedit_cursor_col(const lineedit *le);

/* The display width of the N bytes of UTF-8 at S (as lineedit_cursor_col). */
int lineedit_width(const char *s, size_t n);

/* Length in bytes of the UTF-8 character at S (1 for a stray byte, 0 at NUL). */
size_t lineedit_char_len(const char *s);

/* Adds LINE to the history: ignored when empty or blank or equal to the
 * newest entry; the oldest entry goes when LINEEDIT_HISTORY_MAX are kept.
 * Ends history browsing. Returns false only when out of memory. */
bool lineedit_history_add(lineedit *le, const char *line);

/* Number of history entries, and entry I (0 = oldest). */
size_t lineedit_history_count(const lineedit *le);
const char *lineedit_history_get(const lineedit *le, size_t i);

/* Adds the lines of the file PATH (one entry a line) to the history.
 * Returns 0 (also when PATH does not exist) or -1 with errno set. */
int lineedit_history_load(lineedit *le, const char *path);

/* Writes the history to PATH, one entry a line, through a temporary file
 * renamed over PATH. Returns 0 or -1 with errno set. */
int lineedit_history_save(const lineedit *le, const char *path);

/* Completes the word before the cursor: asks FN for candidates, keeps those
 * that start with the word and replaces the word with their longest common
 * prefix, followed by a space when exactly one candidate is left. Returns
 * the number of candidates left (0: nothing changed). When MATCHES is not
 * NULL it receives them (the caller frees it with lineedit_candidates_free). */
size_t lineedit_complete(lineedit *le, lineedit_complete_fn fn, void *arg, lineedit_candidates *matches);

/* Adds a copy of S; returns false when out of memory. */
bool lineedit_candidates_add(lineedit_candidates *c, const char *s);

/* Frees the candidates and empties C. Accepts NULL. */
void lineedit_candidates_free(lineedit_candidates *c);

/* Start of the word ending at byte END of LINE (after the last space). */
size_t lineedit_word_start(const char *line, size_t end);

#endif
