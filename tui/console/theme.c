/* Console colour themes (see theme.h): the parser of theme files (pure),
 * the search for a named theme, and the installation of a theme's colour
 * pairs in curses, with the monochrome fallback for NO_COLOR and terminals
 * without colour. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "theme.h"
#include "xdg.h"

static const char *const role_names[ROLE__COUNT] = {
	[ROLE_NORMAL] = "normal",
	[ROLE_HEADER] = "header",
	[ROLE_TITLE] = "title",
	[ROLE_BORDER] = "border",
	[ROLE_SELECTION] = "selection",
	[ROLE_DIM] = "dim",
	[ROLE_OK] = "ok",
	[ROLE_WARNING] = "warning",
	[ROLE_DANGER] = "danger",
	[ROLE_BADGE] = "badge",
	[ROLE_PHASE_COLLECTING] = "phase.collecting",
	[ROLE_PHASE_PAUSED] = "phase.paused",
	[ROLE_PHASE_DRAINING] = "phase.draining",
	[ROLE_PHASE_FINALIZING] = "phase.finalizing",
	[ROLE_PHASE_COMPLETED] = "phase.completed",
	[ROLE_PHASE_CANCELLED] = "phase.cancelled",
	[ROLE_PROGRESS] = "progress",
	[ROLE_SPARK] = "spark",
	[ROLE_PROMPT] = "prompt",
	[ROLE_STALE] = "stale",
	[ROLE_KEY] = "key",
	[ROLE_INFO] = "info",
};

static const char *const colour_names[] = {"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"};

static const struct {
	const char *name;
	unsigned bit;
} attr_names[] = {
	{"bold", THEME_BOLD},           {"dim", THEME_DIM},         {"underline", THEME_UNDERLINE},
	{"reverse", THEME_REVERSE},     {"standout", THEME_STANDOUT}, {"italic", THEME_ITALIC},
	{"normal", 0},
};

/* The built-in themes, kept equal to themes/dark.theme and
 * themes/monochrome.theme (tests/unit/test_theme.c checks it). */
static const char builtin_dark[] =
	"normal           = default\n"
	"header           = black on cyan bold\n"
	"title            = bright-cyan bold\n"
	"border           = blue\n"
	"selection        = black on bright-cyan\n"
	"dim              = bright-black\n"
	"ok               = bright-green\n"
	"warning          = bright-yellow bold\n"
	"danger           = bright-white on red bold\n"
	"badge            = black on bright-yellow bold\n"
	"phase.collecting = bright-cyan\n"
	"phase.paused     = bright-yellow\n"
	"phase.draining   = bright-magenta bold\n"
	"phase.finalizing = bright-blue bold\n"
	"phase.completed  = bright-green\n"
	"phase.cancelled  = bright-black\n"
	"progress         = bright-green\n"
	"spark            = bright-cyan\n"
	"prompt           = bright-yellow bold\n"
	"stale            = black on bright-red bold\n"
	"key              = bright-cyan bold\n"
	"info             = bright-blue\n";

static const char builtin_monochrome[] =
	"normal           = normal\n"
	"header           = reverse bold\n"
	"title            = bold\n"
	"border           = dim\n"
	"selection        = reverse\n"
	"dim              = dim\n"
	"ok               = normal\n"
	"warning          = bold\n"
	"danger           = bold underline\n"
	"badge            = reverse bold\n"
	"phase.collecting = normal\n"
	"phase.paused     = underline\n"
	"phase.draining   = bold\n"
	"phase.finalizing = bold underline\n"
	"phase.completed  = dim\n"
	"phase.cancelled  = dim\n"
	"progress         = bold\n"
	"spark            = normal\n"
	"prompt           = bold\n"
	"stale            = reverse\n"
	"key              = bold\n"
	"info             = normal\n";

const char *theme_role_name(theme_role role)
{
	return role >= 0 && role < ROLE__COUNT ? role_names[role] : "?";
}

int theme_role_from_name(const char *name)
{
	int i;

	for (i = 0; i < ROLE__COUNT; i++)
		if (strcasecmp(role_names[i], name) == 0)
			return i;
	return -1;
}

/* A colour name or number: returns 1 and sets *OUT, 0 when S is not one,
 * -1 when it is a number out of range. */
static int parse_colour(const char *s, short *out)
{
	const char *base = s;
	int bright = 0, i;

	if (isdigit((unsigned char)s[0])) {
		char *end;
		long v;

		errno = 0;
		v = strtol(s, &end, 10);
		if (*end)
			return 0;
		if (errno || v > 255)
			return -1;
		*out = (short)v;
		return 1;
	}
	if (strcasecmp(s, "default") == 0) {
		*out = THEME_DEFAULT_COLOUR;
		return 1;
	}
	if (strcasecmp(s, "gray") == 0 || strcasecmp(s, "grey") == 0) {
		*out = 8;
		return 1;
	}
	if (strncasecmp(s, "bright-", 7) == 0) {
		bright = 8;
		base = s + 7;
	}
	for (i = 0; i < 8; i++) {
		if (strcasecmp(base, colour_names[i]) == 0) {
			*out = (short)(i + bright);
			return 1;
		}
	}
	return 0;
}

static int parse_attr(const char *s, unsigned *bits)
{
	size_t i;

	for (i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++) {
		if (strcasecmp(s, attr_names[i].name) == 0) {
			*bits |= attr_names[i].bit;
			return 1;
		}
	}
	return 0;
}

/* Error messages never quote the file: a theme path may name any file the
 * user can read (--theme /etc/shadow), and its text must not reach the
 * screen or a log. They name the line, the word's position and the rule,
 * and may suggest the nearest word of our own vocabulary. */

/* Edit distance of A and B (case-insensitive), capped at 9. */
static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int row[33], prev, tmp;

	if (la > 32 || lb > 32)
		return 9;
	for (j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);

			tmp = row[j];
			row[j] = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
			if (prev + cost < row[j])
				row[j] = prev + cost;
			prev = tmp;
		}
	}
	return row[lb] > 9 ? 9 : row[lb];
}

/* "; did you mean \"WORD\"?" for the nearest of WORDS (N of them) within
 * two edits of TOK, into BUF; "" when none is that near. */
static const char *suggest(char *buf, size_t len, const char *tok, const char *const *words, size_t n)
{
	size_t i, best = n;
	int bestd = 3;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		int d = distance(tok, words[i]);

		if (d < bestd) {
			bestd = d;
			best = i;
		}
	}
	if (best < n)
		snprintf(buf, len, "; did you mean \"%s\"?", words[best]);
	return buf;
}

static const char *suggest_colour(char *buf, size_t len, const char *tok)
{
	static const char *const words[] = {"default",      "black",       "red",          "green",
	                                    "yellow",       "blue",        "magenta",      "cyan",
	                                    "white",        "gray",        "grey",         "bright-black",
	                                    "bright-red",   "bright-green", "bright-yellow", "bright-blue",
	                                    "bright-magenta", "bright-cyan", "bright-white"};

	return suggest(buf, len, tok, words, sizeof words / sizeof words[0]);
}

static const char *suggest_attr(char *buf, size_t len, const char *tok)
{
	static const char *const words[] = {"bold", "dim", "underline", "reverse", "standout", "italic", "normal"};

	return suggest(buf, len, tok, words, sizeof words / sizeof words[0]);
}

#define COLOURS_RULE "colours: default, black, red, green, yellow, blue, magenta, cyan, white, bright-*, gray, 0-255"
#define ATTRS_RULE "attributes: bold, dim, underline, reverse, standout, italic, normal"

/* Parses the value of one role (tokens separated by blanks, NUL-terminated
 * and writable). Returns 0, or -1 with the problem in WHY (never the text
 * of the value: see above). */
static int parse_value(theme_style *st, char *v, char *why, size_t whylen)
{
	bool have_fg = false, have_bg = false, any = false, want_bg = false;
	char *tok, *save = NULL, hint[64];
	int word = 0;

	st->fg = st->bg = THEME_DEFAULT_COLOUR;
	st->attrs = 0;
	for (tok = strtok_r(v, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		short c;
		int r;

		word++;
		if (want_bg) {
			r = parse_colour(tok, &c);
			if (r < 0) {
				snprintf(why, whylen, "word %d: a colour number out of range 0-255", word);
				return -1;
			}
			if (r == 0) {
				snprintf(why, whylen, "word %d after \"on\" is not a colour (" COLOURS_RULE ")%s", word,
				         suggest_colour(hint, sizeof hint, tok));
				return -1;
			}
			st->bg = c;
			have_bg = true;
			want_bg = false;
			any = true;
			continue;
		}
		if (strcasecmp(tok, "on") == 0) {
			if (have_bg) {
				snprintf(why, whylen, "a second background colour (\"on\" appears twice)");
				return -1;
			}
			want_bg = true;
			continue;
		}
		r = parse_colour(tok, &c);
		if (r < 0) {
			snprintf(why, whylen, "word %d: a colour number out of range 0-255", word);
			return -1;
		}
		if (r > 0) {
			if (have_fg) {
				snprintf(why, whylen, "word %d is a second foreground colour (write FG on BG)", word);
				return -1;
			}
			if (have_bg) {
				snprintf(why, whylen, "word %d is a foreground colour after the background (write FG on BG)", word);
				return -1;
			}
			st->fg = c;
			have_fg = true;
			any = true;
			continue;
		}
		if (parse_attr(tok, &st->attrs)) {
			any = true;
			continue;
		}
		/* The first word is where a colour goes; later ones are attributes. */
		if (!any)
			snprintf(why, whylen, "word %d is not a colour (" COLOURS_RULE ")%s", word,
			         suggest_colour(hint, sizeof hint, tok));
		else
			snprintf(why, whylen, "word %d is not an attribute (" ATTRS_RULE ")%s", word,
			         suggest_attr(hint, sizeof hint, tok));
		return -1;
	}
	if (want_bg) {
		snprintf(why, whylen, "\"on\" needs a background colour");
		return -1;
	}
	if (!any) {
		snprintf(why, whylen, "no colour or attribute");
		return -1;
	}
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int theme_parse(theme *out, const char *text, char *err, size_t errlen)
{
	theme t;
	int set_on[ROLE__COUNT] = {0};
	const char *p = text;
	int line_no = 0, i;
	char why[320], hint[64];

	if (err && errlen)
		err[0] = '\0';
	memset(&t, 0, sizeof t);
	memcpy(t.name, out->name, sizeof t.name);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[THEME_LINE_MAX], *hash, *eq, *key, *val;
		int role;

		line_no++;
		if (len >= THEME_LINE_MAX) {
			snprintf(err, errlen, "line %d: longer than %d bytes", line_no, THEME_LINE_MAX - 1);
			return -1;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p = nl ? nl + 1 : p + len;
		for (i = 0; line[i]; i++) {
			if ((unsigned char)line[i] < 0x20 && line[i] != '\t' && line[i] != '\r') {
				snprintf(err, errlen, "line %d: control character 0x%02x", line_no, (unsigned char)line[i]);
				return -1;
			}
		}
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		key = trim(line);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			snprintf(err, errlen, "line %d: expected \"ROLE = [FG] [on BG] [ATTR ...]\" (no \"=\" on the line)",
			         line_no);
			return -1;
		}
		*eq = '\0';
		val = trim(eq + 1);
		key = trim(key);
		if (!*key) {
			snprintf(err, errlen, "line %d: a role name is missing before \"=\"", line_no);
			return -1;
		}
		role = theme_role_from_name(key);
		if (role < 0) {
			snprintf(err, errlen, "line %d: unknown role before \"=\" (roles: normal, header, title, ..., see "
			         "themes/dark.theme)%s", line_no, suggest(hint, sizeof hint, key, role_names, ROLE__COUNT));
			return -1;
		}
		if (set_on[role]) {
			snprintf(err, errlen, "line %d: role \"%s\" is set twice (first on line %d)", line_no,
			         role_names[role], set_on[role]);
			return -1;
		}
		if (parse_value(&t.roles[role], val, why, sizeof why) != 0) {
			snprintf(err, errlen, "line %d: %s: %s", line_no, role_names[role], why);
			return -1;
		}
		set_on[role] = line_no;
	}
	if (!set_on[ROLE_NORMAL])
		t.roles[ROLE_NORMAL].fg = t.roles[ROLE_NORMAL].bg = THEME_DEFAULT_COLOUR;
	for (i = 0; i < ROLE__COUNT; i++) {
		if (!set_on[i]) {
			t.roles[i] = t.roles[ROLE_NORMAL];
			t.roles[i].attrs = 0;
		}
	}
	*out = t;
	return 0;
}

static void builtin(theme *out, const char *text, const char *name)
{
	char err[200];

	memset(out, 0, sizeof *out);
	if (theme_parse(out, text, err, sizeof err) != 0) {
		/* Our own text: cannot happen unless someone broke it. */
		fprintf(stderr, "cleanupctl: built-in theme %s: %s\n", name, err);
		abort();
	}
	snprintf(out->name, sizeof out->name, "%s", name);
}

void theme_default(theme *out)
{
	builtin(out, builtin_dark, "dark");
}

void theme_monochrome(theme *out)
{
	builtin(out, builtin_monochrome, "monochrome");
}

/* Reads and parses the open file F (named PATH in messages; closed here). */
static int load_stream(theme *out, const char *path, FILE *f, char *err, size_t errlen)
{
	char *text = NULL, why[400];
	const char *base, *dot;
	size_t n;
	theme t;
	int rc = -1;

	memset(&t, 0, sizeof t);
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	n = dot && strcmp(dot, ".theme") == 0 ? (size_t)(dot - base) : strlen(base);
	if (n >= sizeof t.name)
		n = sizeof t.name - 1;
	memcpy(t.name, base, n);
	t.name[n] = '\0';

	{
		struct stat sb;

		/* What was opened, not what the path names now. */
		if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
			snprintf(err, errlen, "theme %s: not a regular file", path);
			goto out;
		}
	}
	text = malloc(THEME_FILE_MAX + 2);
	if (!text) {
		snprintf(err, errlen, "theme %s: out of memory", path);
		goto out;
	}
	n = fread(text, 1, THEME_FILE_MAX + 1, f);
	if (ferror(f)) {
		snprintf(err, errlen, "theme %s: %s", path, strerror(errno));
		goto out;
	}
	if (n > THEME_FILE_MAX) {
		snprintf(err, errlen, "theme %s: larger than %d bytes", path, THEME_FILE_MAX);
		goto out;
	}
	text[n] = '\0';
	if (strlen(text) != n) {
		snprintf(err, errlen, "theme %s: contains a NUL byte; not a text file", path);
		goto out;
	}
	if (theme_parse(&t, text, why, sizeof why) != 0) {
		snprintf(err, errlen, "theme %s: %s", path, why);
		goto out;
	}
	*out = t;
	rc = 0;
out:
	if (f)
		fclose(f);
	free(text);
	return rc;
}

int theme_load_file(theme *out, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(err, errlen, "theme %s: %s", path, strerror(errno));
		return -1;
	}
	return load_stream(out, path, f, err, errlen);
}

static bool valid_name(const char *name)
{
	const char *p;

	if (!*name || strlen(name) > 60)
		return false;
	for (p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			return false;
	return true;
}

/* A theme given as a path (--theme PATH, or a path in the config file):
 * only a readable regular file whose name ends in ".theme", owned by the
 * user or by root, so that --theme cannot be used to read (and have
 * reported) any other file. Checked on the opened file, then loaded. */
static int load_path(theme *out, const char *path, char *err, size_t errlen)
{
	const char *base = strrchr(path, '/');
	size_t n;
	struct stat sb;
	FILE *f;
	int fd;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n <= 6 || strcmp(base + n - 6, ".theme") != 0) {
		snprintf(err, errlen, "theme %s: not read: a theme path must name a file ending in \".theme\"", path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "theme %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (sb.st_uid != getuid() && sb.st_uid != 0)) {
		snprintf(err, errlen, "theme %s: not read: a theme path must be a regular file owned by you or by root",
		         path);
		close(fd);
		return -1;
	}
	f = fdopen(fd, "r");
	if (!f) {
		snprintf(err, errlen, "theme %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return load_stream(out, path, f, err, errlen); /* the file checked, not the path again */
}

int theme_load_named_in(theme *out, const char *name, const char *const *dirs, char *err, size_t errlen)
{
	char path[4096], tried[1024] = "";
	size_t i;

	if (!name || !*name) {
		snprintf(err, errlen, "no theme name given");
		return -1;
	}
	if (strchr(name, '/'))
		return load_path(out, name, err, errlen);
	if (!valid_name(name)) {
		snprintf(err, errlen, "theme name \"%.80s\" is not valid: use letters, digits, '-' and '_', or a path",
		         name);
		return -1;
	}
	for (i = 0; dirs && dirs[i]; i++) {
		if (!*dirs[i])
			continue;
		snprintf(path, sizeof path, "%s/%s.theme", dirs[i], name);
		if (access(path, F_OK) == 0)
			return theme_load_file(out, path, err, errlen);
		if (strlen(tried) + strlen(dirs[i]) + 3 < sizeof tried) {
			if (*tried)
				strcat(tried, ", ");
			strcat(tried, dirs[i]);
		}
	}
	/* Without the theme files (an installed binary), the built-ins. */
	if (strcmp(name, "dark") == 0 || strcmp(name, "default") == 0) {
		theme_default(out);
		return 0;
	}
	if (strcmp(name, "monochrome") == 0) {
		theme_monochrome(out);
		return 0;
	}
	snprintf(err, errlen, "theme \"%s\" not found (looked for %s.theme in %s)", name, name,
	         *tried ? tried : "no directory");
	return -1;
}

static char data_dir[4096];
static pthread_once_t data_dir_once = PTHREAD_ONCE_INIT;

/* True when PATH is a directory. */
static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Fills data_dir once (see tui_theme_data_dir): the checkout's themes/
 * when <program dir>/../CLEANUP_CHECKOUT_FILE names a source tree that
 * still has them, else <program dir>/CLEANUP_REL_THEME_DIR, else
 * CLEANUP_INSTALL_THEME_DIR. */
static void find_data_dir(void)
{
	char exe[2048], path[2200], line[2048] = "", *slash;
	ssize_t n;
	FILE *f;

	snprintf(data_dir, sizeof data_dir, "%s", CLEANUP_INSTALL_THEME_DIR);
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0 || (size_t)n >= sizeof exe - 1)
		return;
	exe[n] = '\0';
	if (!(slash = strrchr(exe, '/')))
		return;
	*slash = '\0';
	snprintf(path, sizeof path, "%s/../%s", exe, CLEANUP_CHECKOUT_FILE);
	if ((f = fopen(path, "r")) != NULL) {
		bool ok = fgets(line, sizeof line, f) != NULL;

		fclose(f);
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof path, "%s/themes", line);
		if (ok && line[0] == '/' && is_dir(path)) {
			snprintf(data_dir, sizeof data_dir, "%s", path);
			return;
		}
	}
	snprintf(path, sizeof path, "%s/%s", exe, CLEANUP_REL_THEME_DIR);
	if (is_dir(path))
		snprintf(data_dir, sizeof data_dir, "%s", path);
}

const char *tui_theme_data_dir(void)
{
	pthread_once(&data_dir_once, find_data_dir);
	return data_dir;
}

int theme_load_named(theme *out, const char *name, char *err, size_t errlen)
{
	char user[2100];
	const char *dirs[3] = {user, CLEANUP_THEME_DIR, NULL};

	tui_xdg_path(user, sizeof user, TUI_XDG_CONFIG, "themes");
	return theme_load_named_in(out, name, dirs, err, errlen);
}

int theme_config_name(char *buf, size_t len, const char *path, char *err, size_t errlen)
{
	char std[2200], line[512];
	FILE *f;
	int line_no = 0, found = 0;

	if (!path) {
		if (tui_xdg_path(std, sizeof std, TUI_XDG_CONFIG, "config") < 0)
			return 0;
		path = std;
	}
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		char *k, *v, *eq, *hash;

		line_no++;
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		line[strcspn(line, "\n")] = '\0';
		eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		k = trim(line);
		v = trim(eq + 1);
		if (strcmp(k, "theme") != 0)
			continue;
		if (!valid_name(v) && !strchr(v, '/')) {
			snprintf(err, errlen, "%s: line %d: theme name \"%.80s\" is not valid", path, line_no, v);
			fclose(f);
			return -1;
		}
		snprintf(buf, len, "%s", v);
		found = 1;
	}
	fclose(f);
	return found;
}

int theme_select(theme *out, const char *name, char *msg, size_t msglen)
{
	char cfg[256], err[600];
	int r;

	msg[0] = '\0';
	theme_default(out);
	if (!name || !*name) {
		r = theme_config_name(cfg, sizeof cfg, NULL, err, sizeof err);
		if (r < 0) {
			snprintf(msg, msglen, "%s; using the default theme", err);
			return -1;
		}
		if (r == 0)
			return 0;
		name = cfg;
	}
	if (theme_load_named(out, name, err, sizeof err) != 0) {
		theme_default(out);
		snprintf(msg, msglen, "%s; using the default theme", err);
		return -1;
	}
	return 0;
}

bool theme_no_color_env(void)
{
	const char *v = getenv("NO_COLOR");

	return v && *v;
}

/* ---- curses ---- */

static attr_t applied[ROLE__COUNT];
static bool applied_mono;

static attr_t curses_attrs(unsigned bits)
{
	attr_t a = A_NORMAL;

	if (bits & THEME_BOLD)
		a |= A_BOLD;
	if (bits & THEME_DIM)
		a |= A_DIM;
	if (bits & THEME_UNDERLINE)
		a |= A_UNDERLINE;
	if (bits & THEME_REVERSE)
		a |= A_REVERSE;
	if (bits & THEME_STANDOUT)
		a |= A_STANDOUT;
#ifdef A_ITALIC
	if (bits & THEME_ITALIC)
		a |= A_ITALIC;
#endif
	return a;
}

/* xterm's 256-colour palette as RGB. */
static void palette_rgb(short c, int rgb[3])
{
	static const int basic[16][3] = {
		{0, 0, 0},     {205, 0, 0},   {0, 205, 0},   {205, 205, 0},   {0, 0, 238},   {205, 0, 205},
		{0, 205, 205}, {229, 229, 229}, {127, 127, 127}, {255, 0, 0}, {0, 255, 0},   {255, 255, 0},
		{92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255},
	};
	static const int steps[6] = {0, 95, 135, 175, 215, 255};

	if (c < 16) {
		memcpy(rgb, basic[c], sizeof basic[c]);
	} else if (c < 232) {
		c -= 16;
		rgb[0] = steps[c / 36];
		rgb[1] = steps[(c / 6) % 6];
		rgb[2] = steps[c % 6];
	} else {
		rgb[0] = rgb[1] = rgb[2] = 8 + 10 * (c - 232);
	}
}

short theme_nearest_basic(short c)
{
	int rgb[3], best = 0, i;
	long bestd = -1;

	if (c < 0)
		return c;
	if (c < 8)
		return c;
	if (c < 16)
		return (short)(c - 8);
	palette_rgb(c, rgb);
	for (i = 0; i < 8; i++) {
		int b[3];
		long d;

		palette_rgb((short)i, b);
		d = (long)(rgb[0] - b[0]) * (rgb[0] - b[0]) + (long)(rgb[1] - b[1]) * (rgb[1] - b[1]) +
		    (long)(rgb[2] - b[2]) * (rgb[2] - b[2]);
		if (bestd < 0 || d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return (short)best;
}

/* A theme colour as the terminal can show it; *BOLD when a bright colour
 * became its base colour. */
static short terminal_colour(short c, bool *bold)
{
	if (c < 0 || c < COLORS)
		return c;
	if (c >= 8 && c < 16 && bold)
		*bold = true;
	return theme_nearest_basic(c);
}

void theme_apply(const theme *t)
{
	theme mono;
	bool colour, defaults;
	int r;

	colour = !theme_no_color_env() && has_colors();
	if (colour && start_color() == ERR)
		colour = false;
	if (colour && COLOR_PAIRS < ROLE__COUNT + 1)
		colour = false;
	if (!colour) {
		theme_monochrome(&mono);
		for (r = 0; r < ROLE__COUNT; r++)
			applied[r] = curses_attrs(mono.roles[r].attrs);
		applied_mono = true;
		return;
	}
	defaults = use_default_colors() == OK;
	for (r = 0; r < ROLE__COUNT; r++) {
		const theme_style *st = &t->roles[r];
		bool bold = false;
		short fg = terminal_colour(st->fg, &bold), bg = terminal_colour(st->bg, NULL);

		if (!defaults) {
			if (fg < 0)
				fg = COLOR_WHITE;
			if (bg < 0)
				bg = COLOR_BLACK;
		}
		/* An approximation must not make text invisible. */
		if (fg >= 0 && fg == bg && st->fg != st->bg)
			fg = defaults ? -1 : (bg == COLOR_WHITE ? COLOR_BLACK : COLOR_WHITE);
		init_pair((short)(r + 1), fg, bg);
		applied[r] = COLOR_PAIR(r + 1) | curses_attrs(st->attrs) | (bold ? A_BOLD : A_NORMAL);
	}
	applied_mono = false;
}

attr_t theme_attr(theme_role role)
{
	if (role < 0 || role >= ROLE__COUNT)
		return A_NORMAL;
	return applied[role];
}

bool theme_is_monochrome(void)
{
	return applied_mono;
}
