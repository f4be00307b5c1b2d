/* The user's cleanupctl folders, by the XDG base directory spec (see
 * xdg.h). */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "xdg.h"

int tui_xdg_path(char *buf, size_t len, tui_xdg_dir dir, const char *name)
{
	static const struct {
		const char *var, *fallback;
	} dirs[] = {
		[TUI_XDG_CONFIG] = {"XDG_CONFIG_HOME", ".config"},
		[TUI_XDG_STATE] = {"XDG_STATE_HOME", ".local/state"},
	};
	const char *x = getenv(dirs[dir].var), *home = getenv("HOME");

	if (x && x[0] == '/') {
		snprintf(buf, len, "%s/cleanupctl/%s", x, name);
		return 0;
	}
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());

		home = pw ? pw->pw_dir : NULL;
	}
	if (!home || !*home) {
		if (len)
			buf[0] = '\0';
		return -1;
	}
	snprintf(buf, len, "%s/%s/cleanupctl/%s", home, dirs[dir].fallback, name);
	return 0;
}
