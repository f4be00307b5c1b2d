/* Where cleanupctl keeps a user's files, by the XDG base directory spec:
 * the console's config and themes under $XDG_CONFIG_HOME (else
 * ~/.config), its command-line history under $XDG_STATE_HOME (else
 * ~/.local/state), each in a cleanupctl/ folder. The one place the
 * console and the CLI look these up. Reads the environment; creates
 * nothing.
 */
#ifndef CLEANUP_TUI_XDG_H
#define CLEANUP_TUI_XDG_H

#include <stddef.h>

typedef enum tui_xdg_dir {
	TUI_XDG_CONFIG, /* $XDG_CONFIG_HOME, else ~/.config */
	TUI_XDG_STATE,  /* $XDG_STATE_HOME, else ~/.local/state */
} tui_xdg_dir;

/* <base of DIR>/cleanupctl/NAME into BUF, and 0; "" and -1 when neither
 * the variable nor a home directory gives one. A relative value of the
 * variable is ignored (the spec says it is invalid); an unset or empty
 * HOME falls back to the passwd entry's home. */
int tui_xdg_path(char *buf, size_t len, tui_xdg_dir dir, const char *name);

#endif
