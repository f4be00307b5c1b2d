/* Fuzz target: the command lines. The first byte of the input picks one:
 *
 *   0, 1, 5, 6, 7 (mod 8)  the console's `:` command line (cmdline.h,
 *                 built-in backend as in cleanupctl-norl): the rest is
 *                 keys, coded as in fuzz_lineedit.c (00..F7 a key, F8 K a
 *                 curses key, FF B the bytes F8..FF) plus F9 W: draw it
 *                 W % 100 columns wide; FA: open it again; FB: close it.
 *   2             cleanupctl's option parsing (cli.h): the rest is argv,
 *                 arguments separated by NUL bytes, parsed as a command
 *                 parses its options: cli_parse_argv() with a table of
 *                 one option of each kind; cli_parse_id(), cli_parse_int()
 *                 and cli_int_syntax() on every word as an id and a signed
 *                 value, cli_seconds_syntax() as seconds.
 *   3             cli_json_string(): the rest (cut at a NUL) as a string.
 *   4             tui_sanitize_cell() and tui_is_safe() (sanitize.h): byte
 *                 1 the width, byte 2 the buffer size, the rest the text.
 *
 * Properties. Console: every answer is one of CMDLINE_*; the text is clean
 * UTF-8 below LINEEDIT_MAX with the cursor within it; Enter submits
 * exactly the text shown; after a submit or a cancel further keys change
 * nothing; the hint is clean UTF-8; drawing keeps the cursor inside the
 * field. Options: cli_parse_argv() says why exactly when it refuses, never
 * shows a password, keeps within its room, and every value it accepts obeys
 * its row's rule and is the one "--name VALUE" / "--name=VALUE" gives; an
 * integer is accepted exactly when it
 * is DIGITS (a '-' only where the range goes below 0) within the range,
 * with that value; seconds exactly when DIGITS[.DIGITS] within the range.
 * JSON: the output is one RFC 8259 string literal with nothing a terminal
 * acts on written raw, and it decodes to the input (bytes that are not
 * UTF-8 as U+FFFD). Terminal-safe text: exactly the documented
 * replacements, whole characters, within the buffer and the width.
 */
#define _GNU_SOURCE 1
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmdline.h"
#include "fuzz.h"
#include "sanitize.h"

static const int special[] = {KEY_LEFT, KEY_RIGHT, KEY_HOME,  KEY_END,    KEY_BACKSPACE, KEY_DC,   KEY_UP,
                              KEY_DOWN, KEY_ENTER, KEY_RESIZE, KEY_F(1),  KEY_NPAGE,     KEY_BTAB, 0x100,
                              0x1FF,    -1,        INT_MIN,   INT_MAX,    0x7F,          0x80,     0xFF};
#define N_SPECIAL (sizeof special / sizeof special[0])

static SCREEN *screen;
static WINDOW *win;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *out, *in;

	(void)argc;
	(void)argv;
	setlocale(LC_CTYPE, "C.UTF-8");
	/* The history file: a path that can never be created, so that no
	 * run writes one (loading it fails quietly, as for a new user). */
	setenv("XDG_STATE_HOME", "/dev/null/fuzz", 1);
	/* cli_parse_int() prints usage errors: keep them off the terminal.
	 * Property failures and sanitizer reports use descriptor 2 directly. */
	out = fopen("/dev/null", "w");
	if (out)
		stderr = out;
	/* A curses screen on /dev/null for cmdline_render(). */
	out = fopen("/dev/null", "w");
	in = fopen("/dev/null", "r");
	if (out && in) {
		screen = newterm("xterm", out, in);
		if (!screen)
			screen = newterm("dumb", out, in);
	}
	if (screen)
		win = newwin(3, 120, 0, 0);
	return 0;
}

/* ---- the console's command line ------------------------------------ */

static const char *const commands[] = {"step", "run",  "stop", "pause", "resume", "cancel", "seal",  "preview",
                                       "remove-library", "remove-server", "show", "theme", "refresh", "help",
                                       "quit", "thème", "日本語"};

static void complete_fn(lineedit_candidates *out, const char *line, size_t word_start, const char *word, void *arg)
{
	size_t i;

	(void)line;
	(void)word_start;
	(void)word;
	(void)arg;
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		lineedit_candidates_add(out, commands[i]);
}

static void check_line(const char *after)
{
	const char *t = cmdline_text(), *msg = cmdline_message();
	size_t len = strnlen(t, LINEEDIT_MAX);

	if (len >= LINEEDIT_MAX)
		fuzz_fail("after %s: the text is not NUL-terminated within LINEEDIT_MAX", after);
	if (!fuzz_clean_utf8((const uint8_t *)t, len))
		fuzz_fail("after %s: the text \"%s\" is not clean UTF-8", after, t);
	if (cmdline_cursor() > len)
		fuzz_fail("after %s: cursor %zu past the end (%zu)", after, cmdline_cursor(), len);
	if (strnlen(msg, 512) >= 512 || !fuzz_clean_utf8((const uint8_t *)msg, strlen(msg)))
		fuzz_fail("after %s: the hint is not clean UTF-8 within 512 bytes", after);
}

static void render(int width)
{
	int x = width % 7, cx;

	if (!win)
		return;
	cmdline_render(win, 1, x, width, A_BOLD, A_NORMAL);
	if (width < 2)
		return;
	cx = getcurx(win);
	if (getcury(win) != 1 || cx < x || cx > x + width - 1)
		fuzz_fail("cmdline_render: cursor at %d,%d outside the field (row 1, columns %d..%d)", getcury(win), cx, x,
		          x + width - 1);
}

static void console_line(const uint8_t *d, size_t n)
{
	char before[LINEEDIT_MAX];
	size_t i = 0;
	int state;
	bool open;

	if (cmdline_open(":", complete_fn, NULL) != 0)
		fuzz_fail("cmdline_open failed with the built-in editor");
	open = true;
	state = CMDLINE_ACTIVE;
	if (strcmp(cmdline_backend(), "builtin") != 0)
		fuzz_fail("the fuzz target must use the built-in backend, not %s", cmdline_backend());
	while (i < n) {
		uint8_t op = d[i++];
		int k, r;

		if (op == 0xF9) {
			render(i < n ? d[i++] % 100 : 80);
			continue;
		}
		if (op == 0xFA || op == 0xFB) {
			if (op == 0xFA) {
				if (cmdline_open(":", complete_fn, NULL) != 0)
					fuzz_fail("cmdline_open failed again");
				if (cmdline_text()[0] || cmdline_result()[0] || !cmdline_active())
					fuzz_fail("cmdline_open: not a fresh, active, empty line");
				state = CMDLINE_ACTIVE;
			} else {
				cmdline_close();
				if (cmdline_active() || cmdline_text()[0])
					fuzz_fail("cmdline_close: still active or showing text");
			}
			open = op == 0xFA;
			continue;
		}
		if (op == 0xF8)
			k = i < n ? special[d[i++] % N_SPECIAL] : KEY_ENTER;
		else if (op == 0xFF)
			k = i < n ? 0xF8 | (d[i++] & 7) : 0xFF;
		else
			k = op;
		memcpy(before, cmdline_text(), strnlen(cmdline_text(), sizeof before - 1) + 1);
		r = cmdline_feed(k);
		if (!open) {
			if (r != CMDLINE_CANCELLED)
				fuzz_fail("cmdline_feed on a closed line returned %d", r);
			continue;
		}
		if (r != CMDLINE_ACTIVE && r != CMDLINE_SUBMITTED && r != CMDLINE_CANCELLED)
			fuzz_fail("cmdline_feed returned %d", r);
		if (state != CMDLINE_ACTIVE) {
			if (r != state || strcmp(before, cmdline_text()) != 0)
				fuzz_fail("a key after the line ended changed it (state %d -> %d)", state, r);
		} else if (k == '\n' || k == '\r' || k == KEY_ENTER) {
			if (r != CMDLINE_SUBMITTED || strcmp(cmdline_result(), before) != 0)
				fuzz_fail("Enter on \"%s\" gave state %d and result \"%s\"", before, r, cmdline_result());
		} else if (k == 27 || k == 3 || k == 7) {
			if (r != CMDLINE_CANCELLED)
				fuzz_fail("Esc/^C/^G gave state %d", r);
		}
		state = r;
		if (cmdline_active() != (state == CMDLINE_ACTIVE))
			fuzz_fail("cmdline_active() disagrees with state %d", state);
		if (state != CMDLINE_SUBMITTED && cmdline_result()[0])
			fuzz_fail("a result \"%s\" without a submit", cmdline_result());
		check_line("a key");
	}
	if (cmdline_history_count() > LINEEDIT_HISTORY_MAX)
		fuzz_fail("history of %zu entries", cmdline_history_count());
	/* Each input starts from nothing: no history carried over. */
	cmdline_shutdown();
}

/* ---- cleanupctl's option parsing ---------------------------------- */

/* The integer rule (cli.h): decimal digits only, a leading '-' only when
 * MIN < 0, within [MIN, MAX] without overflow. Returns true with *OUT. */
static bool ref_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	bool neg = *s == '-' && min < 0;
	const char *p = s + neg;
	int64_t v = 0;

	if (!*p)
		return false;
	for (; *p; p++) {
		int d;

		if (*p < '0' || *p > '9')
			return false;
		d = *p - '0';
		/* Accumulate negatively: INT64_MIN has no positive twin. */
		if (v < (INT64_MIN + d) / 10)
			return false;
		v = v * 10 - d;
	}
	if (!neg) {
		if (v == INT64_MIN)
			return false;
		v = -v;
	}
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

static void check_int(const char *opt, const char *value, int64_t min, int64_t max, bool id)
{
	cli_ctx ctx = {0};
	int64_t got = -7, want = 0, raw = -7;
	const char *why;
	bool ok, ref;

	ok = id ? cli_parse_id(&ctx, opt, value, &got) : cli_parse_int(&ctx, opt, value, min, max, &got);
	ref = ref_int(value, min, max, &want);
	if (ok && ref && got != want)
		fuzz_fail("%s \"%s\" parsed as %" PRId64 ", not %" PRId64, opt, value, got, want);
	if (ok && !ref)
		fuzz_fail("%s \"%s\" accepted as %" PRId64 "; the rule is DIGITS in %" PRId64 "..%" PRId64, opt, value, got,
		          min, max);
	if (!ok && ref)
		fuzz_fail("%s \"%s\" refused; it is an integer in %" PRId64 "..%" PRId64, opt, value, min, max);
	if (!ok && got != -7)
		fuzz_fail("%s \"%s\" refused but the output was written", opt, value);
	/* The rule itself, pure, with the rule named on refusal. */
	why = cli_int_syntax(value, min, max, &raw);
	if ((why == NULL) != ok || (ok && raw != got) || (!ok && raw != -7) || (why && !*why))
		fuzz_fail("cli_int_syntax(\"%s\") disagrees with cli_parse_int", value);
}

/* The seconds rule (cli.h): DIGITS[.DIGITS], no sign, space, exponent,
 * hex, inf or nan, at most 9 digits before the point, within [MIN, MAX]. */
static bool ref_seconds(const char *s, double min, double max, double *out)
{
	const char *p = s;
	size_t digits = 0, frac = 0;
	double v;

	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			frac++;
	if (*p || digits == 0 || digits > 9 || (p[-1] == '.' && frac == 0))
		return false;
	v = strtod(s, NULL);
	if (!(v >= min && v <= max))
		return false;
	*out = v;
	return true;
}

static void check_seconds(const char *value, uint8_t pick)
{
	static const double ranges[][2] = {{0.001, 604800}, {0.1, 60}, {0, 1e9}, {1, 1}};
	const double *r = ranges[pick % 4];
	double got = -7, want = 0;
	const char *why = cli_seconds_syntax(value, r[0], r[1], &got);
	bool ref = ref_seconds(value, r[0], r[1], &want);

	if ((why == NULL) != ref)
		fuzz_fail("seconds \"%s\" in [%g, %g]: %s; the rule says %s", value, r[0], r[1], why ? why : "accepted",
		          ref ? "accept" : "refuse");
	if (!why && got != want)
		fuzz_fail("seconds \"%s\" parsed as %g, not %g", value, got, want);
	if (why && (got != -7 || !*why))
		fuzz_fail("seconds \"%s\" refused without a rule, or with the output written", value);
}

/* The options a command's table might hold, one of each kind (cli.h). */
typedef struct fuzz_opts {
	int64_t library, max_steps, offset;
	cli_ints ids;
	double deadline;
	const char *db;
	bool flag;
} fuzz_opts;

static const cli_option fuzz_table[] = {
	CLI_ROW_INT("--library", "ID", "an id", fuzz_opts, library, 1, INT64_MAX),
	CLI_ROW_INT("--max-steps", "N", "a count", fuzz_opts, max_steps, 1, 1000000),
	CLI_ROW_INT("--offset", "N", "a signed value", fuzz_opts, offset, -1000, 1000),
	{"--server", "ID", "repeatable", NULL, CLI_INTS, offsetof(fuzz_opts, ids), 1, INT64_MAX, 0, NULL, NULL},
	{"--deadline", "SECONDS", "seconds", NULL, CLI_DECIMAL, offsetof(fuzz_opts, deadline), 0, 604800000,
	 CLI_ABOVE_MIN, NULL, NULL},
	{"--db", "CONNINFO", "a secret", NULL, CLI_STRING, offsetof(fuzz_opts, db), 0, 0, CLI_SECRET, NULL, NULL},
	CLI_ROW_FLAG("--flag", "a flag", fuzz_opts, flag, 0),
	CLI_ROW_END,
};

static void options(const uint8_t *d, size_t n)
{
	char *buf = malloc(n + 1), *argv[16], msg[512];
	int64_t room[4];
	fuzz_opts o;
	cli_args a;
	int argc = 1, i, k2;
	size_t k, start = 0;
	bool ok, after_dashes = false;

	if (!buf)
		fuzz_fail("out of memory");
	memcpy(buf, d, n);
	buf[n] = '\0';
	argv[0] = (char *)"job";
	for (k = 0; k <= n && argc < 16; k++) {
		if (k == n || buf[k] == '\0') {
			argv[argc++] = buf + start;
			start = k + 1;
		}
	}
	memset(&o, 0, sizeof o);
	o.library = o.max_steps = o.offset = -7;
	o.ids.v = room;
	o.ids.cap = 4;
	memset(&a, 0, sizeof a);
	ok = cli_parse_argv(fuzz_table, argc, argv, 1, 4, &o, &a, msg, sizeof msg);
	/* the message: empty on success, said on failure, never a password */
	if (ok != (msg[0] == '\0'))
		fuzz_fail("cli_parse_argv: %s but message \"%s\"", ok ? "accepted" : "refused", msg);
	if (!ok && strstr(msg, "given twice") && strstr(msg, "--db") && strstr(msg, "password=") &&
	    !strstr(msg, "password=***"))
		fuzz_fail("cli_parse_argv: a password in \"%s\"", msg);
	if (ok) {
		/* every value the parser accepted obeys its row's rule, and is
		 * what "--name VALUE" / "--name=VALUE" says */
		if (a.npos > 4 || o.ids.n > 4)
			fuzz_fail("cli_parse_argv: %d words, %zu ids: more than room", a.npos, o.ids.n);
		if (cli_given(&a, fuzz_table, "--max-steps") != (o.max_steps != -7) ||
		    (o.max_steps != -7 && (o.max_steps < 1 || o.max_steps > 1000000)))
			fuzz_fail("cli_parse_argv: --max-steps %" PRId64 " against its rule", o.max_steps);
		if (o.offset != -7 && (o.offset < -1000 || o.offset > 1000))
			fuzz_fail("cli_parse_argv: --offset %" PRId64 " out of range", o.offset);
		if (cli_given(&a, fuzz_table, "--deadline") && !(o.deadline > 0 && o.deadline <= 604800))
			fuzz_fail("cli_parse_argv: --deadline %g out of range", o.deadline);
		for (i = 1; i < argc; i++) {
			const char *v = NULL;

			if (strcmp(argv[i], "--") == 0 && !after_dashes) {
				after_dashes = true;
				continue;
			}
			if (after_dashes)
				continue;
			if (strncmp(argv[i], "--library=", 10) == 0)
				v = argv[i] + 10;
			else if (strcmp(argv[i], "--library") == 0 && i + 1 < argc)
				v = argv[i + 1];
			if (v) {
				int64_t want;

				if (!ref_int(v, 1, INT64_MAX, &want) || want != o.library)
					fuzz_fail("cli_parse_argv: --library \"%s\" gave %" PRId64, v, o.library);
				break;
			}
			/* a value of an option, or a word that is not an option */
			for (k2 = 0; fuzz_table[k2].name; k2++)
				if (fuzz_table[k2].arg && strcmp(argv[i], fuzz_table[k2].name) == 0)
					break;
			if (fuzz_table[k2].name)
				i++;
		}
	}
	for (i = 1; i < argc; i++) {
		check_int("job id", argv[i], 1, INT64_MAX, true);
		check_int("a signed value", argv[i], INT64_MIN, INT64_MAX, false);
		check_seconds(argv[i], (uint8_t)i);
	}
	free(buf);
}

/* ---- JSON strings --------------------------------------------------- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits at S as a number, or -1. */
static long hex4(const char *s)
{
	long v = 0;
	int k;

	for (k = 0; k < 4; k++) {
		int h = hexval(s[k]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* cli_json_string(): one RFC 8259 string literal, nothing a terminal acts
 * on written raw (C0, DEL, C1, U+2028, U+2029), decoding to the input with
 * each byte that is not UTF-8 as U+FFFD. */
static void json(const uint8_t *d, size_t n)
{
	char *in = malloc(n + 1), *out = NULL, *back = NULL, *want = NULL;
	size_t outlen = 0, i, o = 0, inlen, w = 0;
	FILE *f;

	if (!in)
		fuzz_fail("out of memory");
	memcpy(in, d, n);
	in[n] = '\0';
	inlen = strlen(in);
	f = open_memstream(&out, &outlen);
	if (!f)
		fuzz_fail("open_memstream: %s", strerror(errno));
	cli_json_string(f, in);
	fclose(f);
	back = malloc(outlen + 4);
	want = malloc(3 * inlen + 1);
	if (!back || !want)
		fuzz_fail("out of memory");
	for (i = 0; i < inlen;) {
		uint32_t cp;
		size_t k = fuzz_utf8_char((const uint8_t *)in + i, inlen - i, &cp);

		if (k == 0) {
			memcpy(want + w, "\xEF\xBF\xBD", 3);
			w += 3;
			i++;
		} else {
			memcpy(want + w, in + i, k);
			w += k;
			i += k;
		}
	}
	if (outlen < 2 || out[0] != '"' || out[outlen - 1] != '"')
		fuzz_fail("cli_json_string: not in quotes: %s", out);
	for (i = 1; i < outlen - 1;) {
		unsigned char c = (unsigned char)out[i];
		uint32_t cp;
		long u, lo;
		size_t k;

		if (c == '"')
			fuzz_fail("cli_json_string: a raw quote inside the string");
		if (c != '\\') {
			k = fuzz_utf8_char((const uint8_t *)out + i, outlen - 1 - i, &cp);
			if (k == 0 || fuzz_is_control(cp) || cp == 0x2028 || cp == 0x2029)
				fuzz_fail("cli_json_string: raw byte 0x%02x (not UTF-8, or a control) in the output", c);
			memcpy(back + o, out + i, k);
			o += k;
			i += k;
			continue;
		}
		if (i + 1 >= outlen - 1)
			fuzz_fail("cli_json_string: a backslash at the end");
		i += 2;
		switch (out[i - 1]) {
		case '"': back[o++] = '"'; break;
		case '\\': back[o++] = '\\'; break;
		case '/': back[o++] = '/'; break;
		case 'b': back[o++] = '\b'; break;
		case 'f': back[o++] = '\f'; break;
		case 'n': back[o++] = '\n'; break;
		case 'r': back[o++] = '\r'; break;
		case 't': back[o++] = '\t'; break;
		case 'u':
			if (i + 4 > outlen - 1 || (u = hex4(out + i)) < 0)
				fuzz_fail("cli_json_string: a bad \\u escape");
			i += 4;
			if (u >= 0xDC00 && u <= 0xDFFF)
				fuzz_fail("cli_json_string: a lone low surrogate escape");
			if (u >= 0xD800 && u <= 0xDBFF) {
				if (i + 6 > outlen - 1 || out[i] != '\\' || out[i + 1] != 'u' || (lo = hex4(out + i + 2)) < 0xDC00 ||
				    lo > 0xDFFF)
					fuzz_fail("cli_json_string: a high surrogate escape without its pair");
				u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
				i += 6;
			}
			o += fuzz_utf8_encode((uint32_t)u, (uint8_t *)back + o);
			break;
		default:
			fuzz_fail("cli_json_string: unknown escape \\%c", out[i - 1]);
		}
	}
	if (o != w || memcmp(back, want, w) != 0)
		fuzz_fail("cli_json_string: the literal does not decode to the input (bad bytes as U+FFFD)");
	free(in);
	free(out);
	free(back);
	free(want);
}

/* ---- terminal-safe text --------------------------------------------- */

/* The characters that must not reach a terminal (sanitize.h's list). */
static bool unsafe(uint32_t cp)
{
	return fuzz_is_control(cp) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x2028 || cp == 0x2029;
}

/* tui_sanitize_cell() against the rule: each unsafe character, and each
 * byte that is not UTF-8, becomes '?' (one column); at most WIDTH terminal
 * columns (a character's columns are tui_char_width's, whose table the unit
 * tests check: 0 for combining marks, which stay with their base even in a
 * full cell, 2 for wide characters, which are left out when they would
 * overhang), padded with spaces to WIDTH columns; whole characters only, as
 * many as fit in LEN. */
static void sanitize(const uint8_t *d, size_t n)
{
	size_t width = n > 0 ? d[0] % 24 : 0, len = n > 1 ? 1 + d[1] % 96 : 64, i = 0, o = 0, chars = 0, inlen;
	char *in = malloc(n + 1), *buf = NULL, *want = NULL;
	bool safe = true;

	if (!in)
		fuzz_fail("out of memory");
	memcpy(in, d, n);
	in[n] = '\0';
	inlen = strlen(in);
	buf = malloc(len);
	want = malloc(len);
	if (!buf || !want)
		fuzz_fail("out of memory");
	while (i < inlen) {
		uint32_t cp = 0;
		size_t k = fuzz_utf8_char((const uint8_t *)in + i, inlen - i, &cp);
		bool bad = k == 0 || unsafe(cp);
		size_t w = bad ? 1 : (size_t)tui_char_width((int32_t)cp);

		if ((width > 0 && chars + w > width) || o + (bad ? 1 : k) >= len)
			break;
		if (bad)
			want[o++] = '?';
		else
			memcpy(want + o, in + i, k), o += k;
		i += k ? k : 1;
		chars += w;
	}
	while (width > 0 && chars < width && o + 1 < len)
		want[o++] = ' ', chars++;
	want[o] = '\0';
	tui_sanitize_cell(buf, len, in, width);
	if (strnlen(buf, len) >= len || strcmp(buf, want) != 0)
		fuzz_fail("tui_sanitize_cell(len %zu, width %zu) wrote \"%.*s\", the rule says \"%s\"", len, width,
		          (int)strnlen(buf, len), buf, want);
	/* Whole text: tui_is_safe() is true exactly when nothing is replaced. */
	for (i = 0; i < inlen;) {
		uint32_t cp = 0;
		size_t k = fuzz_utf8_char((const uint8_t *)in + i, inlen - i, &cp);

		if (k == 0 || unsafe(cp)) {
			safe = false;
			break;
		}
		i += k;
	}
	if (tui_is_safe(in) != safe)
		fuzz_fail("tui_is_safe() says %d, the rule says %d", tui_is_safe(in), safe);
	free(in);
	free(buf);
	free(want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_set_input(data, size);
	if (size == 0)
		return 0;
	switch (data[0] % 8) {
	case 2:
		options(data + 1, size - 1);
		break;
	case 3:
		json(data + 1, size - 1);
		break;
	case 4:
		sanitize(data + 1, size - 1);
		break;
	default:
		console_line(data + 1, size - 1);
		break;
	}
	return 0;
}
