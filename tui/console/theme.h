/* Console colour themes: semantic roles mapped to colours and attributes.
 *
 * A theme is a text file (themes/NAME.theme), one role a line:
 *
 *     # comment
 *     header           = black on cyan bold
 *     phase.draining   = bright-yellow bold
 *     selection        = reverse
 *
 *     ROLE = [FG] [on BG] [ATTR ...]
 *
 * Colours: default, black, red, green, yellow, blue, magenta, cyan, white,
 * bright-black (also gray / grey), bright-red, ..., bright-white, or a
 * number 0-255. Attributes: bold, dim, underline, reverse, standout,
 * italic, normal (none). Roles that a file does not set look like
 * `normal`. A file is parsed whole or not at all: the first problem is
 * reported with its line number, the role, the word's position and the
 * rule, with a suggestion from the theme vocabulary (`line 7: header: word
 * 1 is not a colour (colours: default, black, ..., 0-255); did you mean
 * "blue"?`), never quoting the file's text, and the caller keeps the
 * default theme.
 *
 * Monochrome: when NO_COLOR is set (to anything non-empty) or the terminal
 * has no colours, theme_apply() ignores colours and uses the attributes of
 * the built-in monochrome theme, so that every role stays distinguishable.
 * Phases are always also written as words: colour is never the only signal.
 */
#ifndef CLEANUP_TUI_THEME_H
#define CLEANUP_TUI_THEME_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum theme_role {
	ROLE_NORMAL = 0,
	ROLE_HEADER,             /* the top bar */
	ROLE_TITLE,              /* panel titles */
	ROLE_BORDER,
	ROLE_SELECTION,          /* the selected row */
	ROLE_DIM,                /* secondary text */
	ROLE_OK,
	ROLE_WARNING,
	ROLE_DANGER,
	ROLE_BADGE,              /* PAUSED, READONLY, STALE badges */
	ROLE_PHASE_COLLECTING,
	ROLE_PHASE_PAUSED,
	ROLE_PHASE_DRAINING,
	ROLE_PHASE_FINALIZING,
	ROLE_PHASE_COMPLETED,
	ROLE_PHASE_CANCELLED,
	ROLE_PROGRESS,           /* progress bars */
	ROLE_SPARK,              /* sparklines */
	ROLE_PROMPT,             /* the command line's and dialogs' prompts */
	ROLE_STALE,              /* "stale since ..." */
	ROLE_KEY,                /* key names in the footer and the help */
	ROLE_INFO,               /* neutral notices, outcomes */
	ROLE__COUNT
} theme_role;

/* Colour values: -1 is the terminal's default, 0-255 a palette index. */
#define THEME_DEFAULT_COLOUR (-1)

/* Attribute bits (independent of curses so that parsing stays pure). */
enum {
	THEME_BOLD = 1,
	THEME_DIM = 2,
	THEME_UNDERLINE = 4,
	THEME_REVERSE = 8,
	THEME_STANDOUT = 16,
	THEME_ITALIC = 32
};

typedef struct theme_style {
	short fg, bg;      /* THEME_DEFAULT_COLOUR or 0-255 */
	unsigned attrs;    /* THEME_* bits */
} theme_style;

typedef struct theme {
	char name[64];
	theme_style roles[ROLE__COUNT];
} theme;

#define THEME_LINE_MAX 256      /* longest line of a theme file, in bytes */
#define THEME_FILE_MAX 65536    /* largest theme file */

/* The role's name in theme files ("header", "phase.draining", ...), and the
 * role for a name (-1 when unknown). */
const char *theme_role_name(theme_role role);
int theme_role_from_name(const char *name);

/* The built-in themes: the default (dark) and monochrome. They equal
 * themes/dark.theme and themes/monochrome.theme. */
void theme_default(theme *out);
void theme_monochrome(theme *out);

/* Parses the theme text TEXT (NUL-terminated) into *OUT. Pure. Returns 0,
 * or -1 with ERR (ERRLEN bytes) saying which line and what is wrong; then
 * *OUT is unchanged. OUT->name is left as it was. */
int theme_parse(theme *out, const char *text, char *err, size_t errlen);

/* Reads and parses the file PATH; the theme's name is the file's base name
 * without ".theme". Returns 0 or -1 with ERR naming the file (and line). */
int theme_load_file(theme *out, const char *path, char *err, size_t errlen);

/* Finds theme NAME (letters, digits, '-', '_') as NAME.theme in the
 * directories DIRS (NULL-terminated, NULL entries skipped), in order, and
 * loads the first found. A NAME containing '/' is a path instead: read
 * only when it names a regular file ending in ".theme" owned by the user
 * or by root (checked on the opened file), so that a theme option cannot
 * be used to read other files. Returns 0, or -1 with ERR (not found, not a
 * theme path, or the file's problem). */
int theme_load_named_in(theme *out, const char *name, const char *const *dirs, char *err, size_t errlen);

/* theme_load_named_in() with the standard directories:
 * $XDG_CONFIG_HOME/cleanupctl/themes (else ~/.config/cleanupctl/themes),
 * then CLEANUP_THEME_DIR (config.h: the source tree's themes/). */
int theme_load_named(theme *out, const char *name, char *err, size_t errlen);

/* The theme name set in the console's config file PATH (NULL: the standard
 * $XDG_CONFIG_HOME/cleanupctl/config, else ~/.config/cleanupctl/config), a
 * line "theme = NAME". Returns 1 and fills BUF when one is set, 0 when the
 * file or the setting is absent, -1 with ERR on a malformed setting. */
int theme_config_name(char *buf, size_t len, const char *path, char *err, size_t errlen);

/* Chooses the console's theme: NAME (--theme) when given, else the config
 * file's, else the default. When the chosen theme cannot be loaded, *OUT is
 * the default theme and MSG says why (shown to the operator); MSG is ""
 * otherwise. Returns 0 when the chosen theme loaded, -1 when the default
 * replaced it. */
int theme_select(theme *out, const char *name, char *msg, size_t msglen);

/* True when NO_COLOR asks for monochrome (set and non-empty). */
bool theme_no_color_env(void);

/* Installs THEME in curses: call after initscr(); calls start_color() and
 * use_default_colors() itself when the terminal has colours, and init_pair()
 * for each role. Monochrome (attributes of the built-in monochrome theme)
 * when theme_no_color_env() or !has_colors(). Colours the terminal lacks
 * are approximated (bright-* as the base colour in bold, 256-colour
 * indexes as the nearest of the 8 basic colours). */
void theme_apply(const theme *t);

/* The curses attributes of ROLE (colour pair and attributes) as applied
 * last; A_NORMAL before theme_apply(). */
attr_t theme_attr(theme_role role);

/* True when the last theme_apply() chose monochrome. */
bool theme_is_monochrome(void);

/* The nearest of the 8 basic colours to palette index C (0-255). Pure. */
short theme_nearest_basic(short c);

#endif
