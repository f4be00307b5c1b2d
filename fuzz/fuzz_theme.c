/* Fuzz target: the theme parser (theme_parse, theme.h).
 *
 * The input is the text of a theme file (cut at its first NUL, as a file
 * read into a C string would be). Properties:
 *  - the verdict and, on success, every role's colours and attributes
 *    equal those of a reference parser written here from the format in
 *    theme.h and themes/README.md;
 *  - a refusal leaves the previous theme byte for byte as it was (a theme
 *    loads completely or not at all) and names the line the reference
 *    found wrong first ("line N: ...");
 *  - on success the theme's name is the previous one and every value is
 *    in range (colours -1..255, only the THEME_* attribute bits);
 *  - an error message is printable ASCII: it never quotes the file (a
 *    theme path may name any file the user can read), so no control
 *    character or invalid UTF-8 from it reaches the terminal.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "fuzz.h"
#include "theme.h"

#define ALL_ATTRS (THEME_BOLD | THEME_DIM | THEME_UNDERLINE | THEME_REVERSE | THEME_STANDOUT | THEME_ITALIC)

static theme previous[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	theme_default(&previous[0]);
	theme_monochrome(&previous[1]);
	strcpy(previous[0].name, "previous-dark");
	strcpy(previous[1].name, "previous-monochrome");
	return 0;
}

/* ---- the reference parser ------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A colour word: 1 and *OUT, 0 when it is none, -1 for a number > 255. */
static int ref_colour(const char *w, size_t n, short *out)
{
	static const char *const names[] = {"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"};
	size_t i;
	int bright = 0;

	if (n > 0 && w[0] >= '0' && w[0] <= '9') {
		unsigned long v = 0;

		for (i = 0; i < n; i++) {
			if (w[i] < '0' || w[i] > '9')
				return 0;
			if (v < 100000)
				v = v * 10 + (unsigned long)(w[i] - '0');
		}
		if (v > 255)
			return -1;
		*out = (short)v;
		return 1;
	}
	if (n == 7 && strncasecmp(w, "default", 7) == 0) {
		*out = THEME_DEFAULT_COLOUR;
		return 1;
	}
	if (n == 4 && (strncasecmp(w, "gray", 4) == 0 || strncasecmp(w, "grey", 4) == 0)) {
		*out = 8;
		return 1;
	}
	if (n > 7 && strncasecmp(w, "bright-", 7) == 0) {
		bright = 8;
		w += 7;
		n -= 7;
	}
	for (i = 0; i < 8; i++) {
		if (strlen(names[i]) == n && strncasecmp(w, names[i], n) == 0) {
			*out = (short)(i + (size_t)bright);
			return 1;
		}
	}
	return 0;
}

/* An attribute word: 1 and its bit in *BIT, else 0. */
static int ref_attr(const char *w, size_t n, unsigned *bit)
{
	static const struct {
		const char *name;
		unsigned bit;
	} attrs[] = {{"bold", THEME_BOLD},         {"dim", THEME_DIM},           {"underline", THEME_UNDERLINE},
	             {"reverse", THEME_REVERSE},   {"standout", THEME_STANDOUT}, {"italic", THEME_ITALIC},
	             {"normal", 0}};
	size_t i;

	for (i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
		if (strlen(attrs[i].name) == n && strncasecmp(w, attrs[i].name, n) == 0) {
			*bit = attrs[i].bit;
			return 1;
		}
	}
	return 0;
}

/* ROLE = [FG] [on BG] [ATTR ...] for the value V (N bytes): 0 or -1. */
static int ref_value(const char *v, size_t n, theme_style *st)
{
	bool fg = false, bg = false, want_bg = false, any = false;
	size_t i = 0;

	st->fg = st->bg = THEME_DEFAULT_COLOUR;
	st->attrs = 0;
	while (i < n) {
		size_t start, len;
		unsigned bit;
		short c;
		int r;

		while (i < n && is_blank(v[i]))
			i++;
		if (i == n)
			break;
		start = i;
		while (i < n && !is_blank(v[i]))
			i++;
		len = i - start;
		r = ref_colour(v + start, len, &c);
		if (want_bg) {
			if (r <= 0)
				return -1;
			st->bg = c;
			bg = true;
			want_bg = false;
			any = true;
		} else if (len == 2 && strncasecmp(v + start, "on", 2) == 0) {
			if (bg)
				return -1;
			want_bg = true;
		} else if (r < 0) {
			return -1;
		} else if (r > 0) {
			if (fg || bg)
				return -1; /* a second foreground, or one after the background */
			st->fg = c;
			fg = true;
			any = true;
		} else if (ref_attr(v + start, len, &bit)) {
			st->attrs |= bit;
			any = true;
		} else {
			return -1;
		}
	}
	return want_bg || !any ? -1 : 0;
}

/* Parses TEXT into ROLES. Returns 0, or the number of the first bad line. */
static int reference(const char *text, theme_style roles[ROLE__COUNT])
{
	bool set[ROLE__COUNT] = {false};
	const char *p = text;
	int line_no = 0, i;

	while (*p) {
		const char *nl = strchr(p, '\n'), *s, *e, *eq, *ks, *ke;
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char name[THEME_LINE_MAX];
		int role = -1;

		line_no++;
		s = p;
		p = nl ? nl + 1 : p + len;
		if (len >= THEME_LINE_MAX)
			return line_no;
		for (e = s; e < s + len; e++)
			if ((unsigned char)*e < 0x20 && *e != '\t' && *e != '\r')
				return line_no;
		e = memchr(s, '#', len);
		if (!e)
			e = s + len;
		/* Blanks around the line; a carriage return only at its end. */
		while (s < e && is_blank(*s))
			s++;
		while (e > s && (is_blank(e[-1]) || e[-1] == '\r'))
			e--;
		if (s == e)
			continue;
		eq = memchr(s, '=', (size_t)(e - s));
		if (!eq)
			return line_no;
		ks = s;
		ke = eq;
		while (ke > ks && (is_blank(ke[-1]) || ke[-1] == '\r'))
			ke--;
		if (ks == ke)
			return line_no;
		memcpy(name, ks, (size_t)(ke - ks));
		name[ke - ks] = '\0';
		for (i = 0; i < ROLE__COUNT; i++)
			if (strcasecmp(name, theme_role_name((theme_role)i)) == 0)
				role = i;
		if (role < 0 || set[role])
			return line_no;
		/* The value, without blanks before it (its end is the line's). */
		s = eq + 1;
		while (s < e && is_blank(*s))
			s++;
		if (ref_value(s, (size_t)(e - s), &roles[role]) != 0)
			return line_no;
		set[role] = true;
	}
	if (!set[ROLE_NORMAL]) {
		roles[ROLE_NORMAL].fg = roles[ROLE_NORMAL].bg = THEME_DEFAULT_COLOUR;
		roles[ROLE_NORMAL].attrs = 0;
	}
	for (i = 0; i < ROLE__COUNT; i++) {
		if (!set[i]) {
			roles[i] = roles[ROLE_NORMAL];
			roles[i].attrs = 0;
		}
	}
	return 0;
}

/* ---- the target ----------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[256];
	theme_style want[ROLE__COUNT];
	const theme *prev = &previous[size % 2];
	theme t;
	int bad_line, rc, i;

	fuzz_set_input(data, size);
	if (!text)
		fuzz_fail("out of memory");
	memcpy(text, data, size);
	text[size] = '\0';
	memset(want, 0, sizeof want);
	bad_line = reference(text, want);

	t = *prev;
	memset(err, 'x', sizeof err);
	rc = theme_parse(&t, text, err, sizeof err);
	if (strnlen(err, sizeof err) == sizeof err)
		fuzz_fail("theme_parse: the error buffer is not NUL-terminated");
	if (rc == 0) {
		if (bad_line)
			fuzz_fail("theme_parse accepted the text; the reference refuses line %d", bad_line);
		if (err[0])
			fuzz_fail("theme_parse succeeded with an error message \"%s\"", err);
		if (strcmp(t.name, prev->name) != 0)
			fuzz_fail("theme_parse changed the name to \"%s\"", t.name);
		for (i = 0; i < ROLE__COUNT; i++) {
			const theme_style *st = &t.roles[i];

			if (st->fg < -1 || st->fg > 255 || st->bg < -1 || st->bg > 255 || (st->attrs & ~(unsigned)ALL_ATTRS))
				fuzz_fail("role %s out of range: fg %d bg %d attrs %#x", theme_role_name((theme_role)i), st->fg,
				          st->bg, st->attrs);
			if (st->fg != want[i].fg || st->bg != want[i].bg || st->attrs != want[i].attrs)
				fuzz_fail("role %s is fg %d bg %d attrs %#x; the reference says fg %d bg %d attrs %#x",
				          theme_role_name((theme_role)i), st->fg, st->bg, st->attrs, want[i].fg, want[i].bg,
				          want[i].attrs);
		}
	} else {
		char expect[32];

		if (rc != -1)
			fuzz_fail("theme_parse returned %d, neither 0 nor -1", rc);
		if (memcmp(&t, prev, sizeof t) != 0)
			fuzz_fail("theme_parse failed (%s) and changed the previous theme", err);
		if (!bad_line)
			fuzz_fail("theme_parse refused a text the reference accepts: %s", err);
		snprintf(expect, sizeof expect, "line %d: ", bad_line);
		if (strncmp(err, expect, strlen(expect)) != 0)
			fuzz_fail("the error \"%s\" does not start with \"%s\"", err, expect);
		/* Errors never quote the file (a theme path may name any readable
		 * file): they are our own words, printable ASCII. */
		for (i = 0; err[i]; i++)
			if ((unsigned char)err[i] < 0x20 || (unsigned char)err[i] > 0x7E)
				fuzz_fail("the error message holds byte 0x%02x: it quotes the file? \"%s\"",
				          (unsigned char)err[i], err);
	}
	free(text);
	return 0;
}
