/* Fuzz target: the command lines. The first byte of the input picks one:
 *
 *   0, 1 (mod 4)  the console's `:` command line (cmdline.h, built-in
 *                 backend as in cleanupctl-norl): the rest is keys, coded
 *                 as in fuzz_lineedit.c (00..F7 a key, F8 K a curses key,
 *                 FF B the bytes F8..FF) plus F9 W: draw it W % 100
 *                 columns wide; FA: open it again; FB: close it.
 *   2             cleanupctl's option parsing (cli.h): the rest is argv,
 *                 arguments separated by NUL bytes, parsed as a command
 *                 parses its options: cli_opt() for --library, --max-steps,
 *                 --db and --deadline, cli_parse_id()/cli_parse_int() on the
 *                 values.
 *   3             cli_json_string(): the rest (cut at a NUL) as a string.
 *
 * Properties. Console: every answer is one of CMDLINE_*; the text is clean
 * UTF-8 below LINEEDIT_MAX with the cursor within it; Enter submits
 * exactly the text shown; after a submit or a cancel further keys change
 * nothing; the hint is clean UTF-8; drawing keeps the cursor inside the
 * field. Options: cli_opt() finds a value exactly where the "--name VALUE"
 * / "--name=VALUE" rule says, advances the index only over a separate
 * value, and reports a missing one; an integer is accepted exactly when it
 * is [-]DIGITS within the range, with that value. JSON: the output is one
 * JSON string literal (RFC 8259) that decodes to the input; invalid UTF-8
 * passed through is a known bug (reported, not failed).
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
	cmdline_render(win, 1, x, width);
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
	render(40);
	if (cmdline_history_count() > LINEEDIT_HISTORY_MAX)
		fuzz_fail("history of %zu entries", cmdline_history_count());
	/* Each input starts from nothing: no history carried over. */
	cmdline_shutdown();
}

/* ---- cleanupctl's option parsing ---------------------------------- */

/* The integer rule: [-]DIGITS, in [MIN, MAX]. Returns true with *OUT. */
static bool ref_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	bool neg = *s == '-';
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

/* What strtoll() also takes before the digits: blanks and a sign. */
static bool lenient_prefix(const char *s)
{
	return *s == ' ' || *s == '\t' || *s == '\n' || *s == '\v' || *s == '\f' || *s == '\r' || *s == '+';
}

static void check_int(const char *opt, const char *value, int64_t min, int64_t max, bool id)
{
	cli_ctx ctx = {0};
	int64_t got = -7, want = 0;
	bool ok, ref;

	ok = id ? cli_parse_id(&ctx, opt, value, &got) : cli_parse_int(&ctx, opt, value, min, max, &got);
	ref = ref_int(value, min, max, &want);
	if (ok && ref && got != want)
		fuzz_fail("%s \"%s\" parsed as %" PRId64 ", not %" PRId64, opt, value, got, want);
	if (ok && !ref) {
		const char *p = value;
		int64_t lenient;

		while (lenient_prefix(p) && *p != '+')
			p++;
		if (*p == '+')
			p++;
		if (p != value && ref_int(p, min, max, &lenient) && lenient == got)
			fuzz_known_bug("cli-int-lenient", "%s \"%s\" is accepted as %" PRId64
			                                  " (blanks or '+' before the digits)", opt, value, got);
		else
			fuzz_fail("%s \"%s\" accepted as %" PRId64 "; the rule is [-]DIGITS in %" PRId64 "..%" PRId64, opt,
			          value, got, min, max);
	}
	if (!ok && ref)
		fuzz_fail("%s \"%s\" refused; it is an integer in %" PRId64 "..%" PRId64, opt, value, min, max);
	if (!ok && got != -7)
		fuzz_fail("%s \"%s\" refused but the output was written", opt, value);
}

static void options(const uint8_t *d, size_t n)
{
	static const struct {
		const char *name;
		int64_t min, max;
		bool id, numeric;
	} opts[] = {
		{"--library", 1, INT64_MAX, true, true},
		{"--max-steps", 1, 1000000, false, true},
		{"--max-busy", 0, 1000, false, true},
		{"--db", 0, 0, false, false},
		{"--deadline", 0, 0, false, false},
	};
	char *buf = malloc(n + 1), *argv[16];
	int argc = 1, i;
	size_t k, start = 0;

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
	for (i = 1; i < argc; i++) {
		bool matched = false;
		size_t o;

		for (o = 0; o < sizeof opts / sizeof opts[0] && !matched; o++) {
			const char *name = opts[o].name, *want = NULL, *v;
			size_t len = strlen(name);
			bool missing = true, want_missing = false;
			int j = i, want_j = i;

			if (strncmp(argv[i], name, len) == 0) {
				if (argv[i][len] == '=') {
					want = argv[i] + len + 1;
				} else if (argv[i][len] == '\0') {
					if (i + 1 < argc)
						want = argv[++want_j];
					else
						want_missing = true;
				}
			}
			v = cli_opt(argc, argv, &j, name, &missing);
			if (v != want || j != want_j || missing != want_missing)
				fuzz_fail("cli_opt(\"%s\") on \"%s\": value %s, index %d, missing %d; expected %s, %d, %d", name,
				          argv[i], v ? v : "(none)", j, missing, want ? want : "(none)", want_j, want_missing);
			if (v) {
				matched = true;
				if (opts[o].numeric)
					check_int(name, v, opts[o].min, opts[o].max, opts[o].id);
				i = j;
			} else if (missing) {
				matched = true;
			}
		}
		if (!matched)
			check_int("job id", argv[i], 1, INT64_MAX, true);
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

static void json(const uint8_t *d, size_t n)
{
	char *in = malloc(n + 1), *out = NULL, *back = NULL;
	size_t outlen = 0, i, o = 0, inlen;
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
	back = malloc(outlen + 1);
	if (!back)
		fuzz_fail("out of memory");
	if (outlen < 2 || out[0] != '"' || out[outlen - 1] != '"')
		fuzz_fail("cli_json_string: not in quotes: %s", out);
	/* RFC 8259 section 7, decoded as we go. */
	for (i = 1; i < outlen - 1;) {
		unsigned char c = (unsigned char)out[i];

		if (c < 0x20 || c == '"')
			fuzz_fail("cli_json_string: raw byte 0x%02x inside the string", c);
		if (c != '\\') {
			back[o++] = (char)c;
			i++;
			continue;
		}
		if (i + 1 >= outlen - 1)
			fuzz_fail("cli_json_string: a backslash at the end");
		switch (out[i + 1]) {
		case '"': back[o++] = '"'; break;
		case '\\': back[o++] = '\\'; break;
		case '/': back[o++] = '/'; break;
		case 'b': back[o++] = '\b'; break;
		case 'f': back[o++] = '\f'; break;
		case 'n': back[o++] = '\n'; break;
		case 'r': back[o++] = '\r'; break;
		case 't': back[o++] = '\t'; break;
		case 'u': {
			int h[4], k;

			if (i + 5 >= outlen - 1)
				fuzz_fail("cli_json_string: a short \\u escape");
			for (k = 0; k < 4; k++)
				if ((h[k] = hexval(out[i + 2 + k])) < 0)
					fuzz_fail("cli_json_string: a bad \\u escape");
			if (h[0] || h[1] || h[2] > 1)
				fuzz_fail("cli_json_string: \\u escape beyond the C0 range, which the input cannot need");
			back[o++] = (char)(h[2] * 16 + h[3]);
			i += 4;
			break;
		}
		default:
			fuzz_fail("cli_json_string: unknown escape \\%c", out[i + 1]);
		}
		i += 2;
	}
	if (o != inlen || memcmp(back, in, inlen) != 0)
		fuzz_fail("cli_json_string: the literal does not decode to the input");
	if (!fuzz_clean_utf8((const uint8_t *)in, inlen)) {
		/* JSON text is UTF-8 (RFC 8259 8.1); control characters are escaped,
		 * so only invalid UTF-8 is at issue here. */
		size_t p = 0;

		while (p < inlen) {
			uint32_t cp;
			size_t k = fuzz_utf8_char((const uint8_t *)in + p, inlen - p, &cp);

			if (k == 0) {
				fuzz_known_bug("json-invalid-utf8",
				               "cli_json_string passes bytes that are not UTF-8 into the JSON document");
				break;
			}
			p += k;
		}
	}
	free(in);
	free(out);
	free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_set_input(data, size);
	if (size == 0)
		return 0;
	switch (data[0] % 4) {
	case 2:
		options(data + 1, size - 1);
		break;
	case 3:
		json(data + 1, size - 1);
		break;
	default:
		console_line(data + 1, size - 1);
		break;
	}
	return 0;
}
