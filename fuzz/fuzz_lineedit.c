/* Fuzz target: the built-in line editor's key handling (lineedit.h).
 *
 * The input is a program of editor operations, one or a few bytes each:
 *
 *   00..F7        lineedit_key(byte): control keys, ASCII, UTF-8 bytes
 *   F8 K          lineedit_key(special[K % N]): curses keys (arrows, Home,
 *                 End, Delete, Backspace, Enter, Up/Down, F1, resize, ...)
 *   F9 N BYTES    lineedit_insert() of N % 32 raw bytes (cut at a NUL)
 *   FA R N BYTES  lineedit_set() of N % 32 raw bytes repeated to N + 6 R
 *                 bytes (long lines: the 1024-byte bound)
 *   FB            lineedit_history_add() of the current text
 *   FC N BYTES    lineedit_history_add() of N % 64 raw bytes
 *   FD            lineedit_complete() with a fixed candidate list
 *   FE            lineedit_reset()
 *   FF B          lineedit_key(0xF8 | (B & 7)): the bytes F8..FF as keys
 *
 * Properties after every operation: the text is well-formed UTF-8 without
 * control characters, its length is below LINEEDIT_MAX and equals
 * strlen(), the cursor is within it and on a character boundary; the
 * history holds at most LINEEDIT_HISTORY_MAX non-blank entries. And each
 * key does what lineedit.h says, checked against a small model kept here:
 * movements leave the text alone and move by one whole character,
 * deletions remove exactly the character, word or span they name, ^Y puts
 * back the last killed text, ^T swaps two characters, text bytes insert a
 * character when its UTF-8 sequence completes (and only then), history
 * keys load an entry (cleaned) or the line being edited, and Enter, Esc,
 * ^C, ^G, Tab and ^D on an empty line answer as documented without
 * touching the text.
 */
#include <curses.h>
#include <limits.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "lineedit.h"

#define CTRL(c) ((c) & 0x1f)

static const int special[] = {KEY_LEFT, KEY_RIGHT, KEY_HOME,   KEY_END,    KEY_BACKSPACE, KEY_DC, KEY_UP,
                              KEY_DOWN, KEY_ENTER, KEY_RESIZE, KEY_F(1),   KEY_NPAGE,     KEY_PPAGE, KEY_BTAB,
                              0x100,    0x1FF,     -1,         INT_MIN,    INT_MAX,       0x7F,   0x80,
                              0xFF};
#define N_SPECIAL (sizeof special / sizeof special[0])

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* lineedit_cursor_col() uses wcwidth(), as the console does. */
	setlocale(LC_CTYPE, "C.UTF-8");
	return 0;
}

/* ---- the model ------------------------------------------------------- */

typedef struct model {
	char kill[LINEEDIT_MAX]; /* what ^Y must insert */
	uint8_t pending[4];      /* a UTF-8 sequence being typed */
	size_t npending, need;
} model;

static size_t prev_char(const char *s, size_t pos)
{
	if (pos == 0)
		return 0;
	do
		pos--;
	while (pos > 0 && ((uint8_t)s[pos] & 0xC0) == 0x80);
	return pos;
}

static size_t next_char(const char *s, size_t len, size_t pos)
{
	uint32_t cp;
	size_t k;

	if (pos >= len)
		return len;
	k = fuzz_utf8_char((const uint8_t *)s + pos, len - pos, &cp);
	return pos + (k ? k : 1);
}

/* S (N bytes) with invalid sequences and control characters dropped, into
 * OUT (room for N + 1); returns the length. */
static size_t sanitize(const uint8_t *s, size_t n, char *out)
{
	size_t i = 0, o = 0;

	while (i < n) {
		uint32_t cp;
		size_t k = fuzz_utf8_char(s + i, n - i, &cp);

		if (k == 0) {
			i++;
			continue;
		}
		if (!fuzz_is_control(cp)) {
			memcpy(out + o, s + i, k);
			o += k;
		}
		i += k;
	}
	out[o] = '\0';
	return o;
}

/* What lineedit_set(S) leaves: S cleaned, or when that does not fit, the
 * cleaned characters before the first one (valid or not) that would not. */
static size_t expect_set(const char *s, char *out)
{
	size_t n = strlen(s), o, i = 0;
	char *clean = malloc(n + 1);

	if (!clean)
		fuzz_fail("out of memory");
	o = sanitize((const uint8_t *)s, n, clean);
	if (o < LINEEDIT_MAX) {
		memcpy(out, clean, o + 1);
		free(clean);
		return o;
	}
	free(clean);
	o = 0;
	while (i < n) {
		uint32_t cp;
		size_t k = fuzz_utf8_char((const uint8_t *)s + i, n - i, &cp);

		if (o + (k ? k : 1) >= LINEEDIT_MAX)
			break;
		if (k && !fuzz_is_control(cp)) {
			memcpy(out + o, s + i, k);
			o += k;
		}
		i += k ? k : 1;
	}
	out[o] = '\0';
	return o;
}

/* ---- checks ---------------------------------------------------------- */

typedef struct snap {
	char text[LINEEDIT_MAX];
	size_t len, cursor;
} snap;

static void take(snap *s, const lineedit *le)
{
	s->len = strlen(lineedit_text(le));
	memcpy(s->text, lineedit_text(le), s->len + 1);
	s->cursor = lineedit_cursor(le);
}

static void check_invariants(const lineedit *le, const char *after)
{
	const char *t = lineedit_text(le);
	size_t len = strnlen(t, LINEEDIT_MAX), cur = lineedit_cursor(le);
	int col;

	if (len >= LINEEDIT_MAX)
		fuzz_fail("after %s: the text is not NUL-terminated within LINEEDIT_MAX", after);
	if (len != le->len)
		fuzz_fail("after %s: len is %zu, strlen %zu", after, le->len, len);
	if (!fuzz_clean_utf8((const uint8_t *)t, len))
		fuzz_fail("after %s: the text \"%s\" is not clean UTF-8", after, t);
	if (cur > len)
		fuzz_fail("after %s: cursor %zu past the end (%zu)", after, cur, len);
	if (cur < len && ((uint8_t)t[cur] & 0xC0) == 0x80)
		fuzz_fail("after %s: cursor %zu inside a character of \"%s\"", after, cur, t);
	/* wcwidth() on every character is the slowest check: not after keys. */
	if (strcmp(after, "a key") != 0) {
		col = lineedit_cursor_col(le);
		if (col < 0 || col > 2 * (int)cur)
			fuzz_fail("after %s: cursor column %d for byte offset %zu", after, col, cur);
	}
	if (lineedit_history_count(le) > LINEEDIT_HISTORY_MAX || le->hpos > le->nhistory)
		fuzz_fail("after %s: history of %zu entries, browsing at %zu", after, lineedit_history_count(le), le->hpos);
	if (le->nhistory > 0) {
		const char *h = lineedit_history_get(le, le->nhistory - 1);

		if (!h || !h[strspn(h, " \t")] || strchr(h, '\n') || strlen(h) >= LINEEDIT_MAX)
			fuzz_fail("after %s: newest history entry blank, multi-line or too long", after);
	}
}

/* The text must be BEFORE[0, A) + MID + BEFORE[B, len) with the cursor at
 * CURSOR. */
static void expect_text(const lineedit *le, const snap *before, size_t a, const char *mid, size_t midlen, size_t b,
                        size_t cursor, const char *what)
{
	const char *t = lineedit_text(le);
	size_t want = a + midlen + (before->len - b);

	if (strlen(t) != want || memcmp(t, before->text, a) != 0 || memcmp(t + a, mid, midlen) != 0 ||
	    memcmp(t + a + midlen, before->text + b, before->len - b) != 0)
		fuzz_fail("%s: \"%s\" (cursor %zu) became \"%s\"; expected %zu bytes", what, before->text, before->cursor, t,
		          want);
	if (lineedit_cursor(le) != cursor)
		fuzz_fail("%s: cursor %zu, expected %zu in \"%s\"", what, lineedit_cursor(le), cursor, t);
}

static void expect_unchanged(const lineedit *le, const snap *before, const char *what)
{
	expect_text(le, before, before->len, "", 0, before->len, before->cursor, what);
}

/* Inserting MID (N bytes) at the cursor, or nothing when it does not fit. */
static void expect_insert(const lineedit *le, const snap *before, const char *mid, size_t n, const char *what)
{
	if (before->len + n >= LINEEDIT_MAX)
		expect_unchanged(le, before, what);
	else
		expect_text(le, before, before->cursor, mid, n, before->cursor, before->cursor + n, what);
}

/* ---- one key ------------------------------------------------------- */

static void kill_range(model *m, const snap *b, size_t from, size_t to)
{
	if (to > from) {
		memcpy(m->kill, b->text + from, to - from);
		m->kill[to - from] = '\0';
	}
}

/* A byte of text (0x20..0xFF but 0x7F) as the model sees it. */
static void text_byte(const lineedit *le, model *m, const snap *b, uint8_t c)
{
	uint32_t cp;

	if (m->npending > 0) {
		if ((c & 0xC0) == 0x80) {
			m->pending[m->npending++] = c;
			if (m->npending < m->need) {
				expect_unchanged(le, b, "a byte inside a UTF-8 sequence");
				return;
			}
			if (fuzz_utf8_char(m->pending, m->npending, &cp) == m->npending && !fuzz_is_control(cp))
				expect_insert(le, b, (const char *)m->pending, m->npending, "a completed UTF-8 character");
			else
				expect_unchanged(le, b, "an invalid UTF-8 sequence");
			m->npending = 0;
			return;
		}
		m->npending = 0;
	}
	if (c < 0x80) {
		char one = (char)c;

		expect_insert(le, b, &one, 1, "an ASCII character");
		return;
	}
	m->need = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
	if (m->need)
		m->pending[m->npending++] = c;
	expect_unchanged(le, b, "a UTF-8 lead byte or a stray byte");
}

static void key(lineedit *le, model *m, int k)
{
	lineedit_action want = LE_NONE, got;
	snap b;
	size_t p, from;

	take(&b, le);
	/* The model's pending sequence, as the editor drops it. */
	if (m->npending > 0 && (k < 0x80 || k > 0xFF))
		m->npending = 0;
	{
		/* History state before the key, for Up and Down. */
		size_t hpos = le->hpos, nh = le->nhistory;
		char *saved = le->saved ? strdup(le->saved) : NULL, *hist = NULL, *exp = NULL;

		if (k == KEY_UP || k == CTRL('p'))
			hist = hpos > 0 && nh > 0 ? strdup(lineedit_history_get(le, hpos - 1)) : NULL;
		else if ((k == KEY_DOWN || k == CTRL('n')) && hpos + 1 < nh)
			hist = strdup(lineedit_history_get(le, hpos + 1));
		got = lineedit_key(le, k);
		check_invariants(le, "a key");
		switch (k) {
		case '\n':
		case '\r':
		case KEY_ENTER:
			want = LE_SUBMIT;
			expect_unchanged(le, &b, "Enter");
			break;
		case 27:
		case CTRL('c'):
		case CTRL('g'):
			want = LE_CANCEL;
			expect_unchanged(le, &b, "Esc/^C/^G");
			break;
		case '\t':
			want = LE_COMPLETE;
			expect_unchanged(le, &b, "Tab");
			break;
		case KEY_LEFT:
		case CTRL('b'):
			expect_text(le, &b, b.len, "", 0, b.len, prev_char(b.text, b.cursor), "Left");
			break;
		case KEY_RIGHT:
		case CTRL('f'):
			expect_text(le, &b, b.len, "", 0, b.len, next_char(b.text, b.len, b.cursor), "Right");
			break;
		case KEY_HOME:
		case CTRL('a'):
			expect_text(le, &b, b.len, "", 0, b.len, 0, "Home");
			break;
		case KEY_END:
		case CTRL('e'):
			expect_text(le, &b, b.len, "", 0, b.len, b.len, "End");
			break;
		case KEY_BACKSPACE:
		case 127:
		case CTRL('h'):
			p = prev_char(b.text, b.cursor);
			expect_text(le, &b, p, "", 0, b.cursor, p, "Backspace");
			break;
		case CTRL('d'):
			if (b.len == 0) {
				want = LE_CANCEL;
				expect_unchanged(le, &b, "^D on an empty line");
				break;
			}
			/* fall through */
		case KEY_DC:
			p = next_char(b.text, b.len, b.cursor);
			expect_text(le, &b, b.cursor, "", 0, p, b.cursor, "Delete");
			break;
		case CTRL('w'):
			from = b.cursor;
			while (from > 0 && (b.text[from - 1] == ' ' || b.text[from - 1] == '\t'))
				from--;
			while (from > 0 && b.text[from - 1] != ' ' && b.text[from - 1] != '\t')
				from--;
			expect_text(le, &b, from, "", 0, b.cursor, from, "^W");
			kill_range(m, &b, from, b.cursor);
			break;
		case CTRL('k'):
			expect_text(le, &b, b.cursor, "", 0, b.len, b.cursor, "^K");
			kill_range(m, &b, b.cursor, b.len);
			break;
		case CTRL('u'):
			expect_text(le, &b, 0, "", 0, b.cursor, 0, "^U");
			kill_range(m, &b, 0, b.cursor);
			break;
		case CTRL('y'):
			expect_insert(le, &b, m->kill, strlen(m->kill), "^Y");
			break;
		case CTRL('t'): {
			size_t x, y, z;
			char mid[8];

			y = b.cursor == b.len ? prev_char(b.text, b.cursor) : b.cursor;
			if (b.len == 0 || b.cursor == 0 || y == 0) {
				expect_unchanged(le, &b, "^T at the start");
				break;
			}
			x = prev_char(b.text, y);
			z = next_char(b.text, b.len, y);
			memcpy(mid, b.text + y, z - y);
			memcpy(mid + (z - y), b.text + x, y - x);
			expect_text(le, &b, x, mid, z - x, z, z, "^T");
			break;
		}
		case KEY_UP:
		case CTRL('p'):
		case KEY_DOWN:
		case CTRL('n'): {
			bool up = k == KEY_UP || k == CTRL('p');
			const char *src = NULL;

			if (up && (hpos == 0 || nh == 0)) {
				expect_unchanged(le, &b, "Up at the oldest entry");
				break;
			}
			if (!up && hpos >= nh) {
				expect_unchanged(le, &b, "Down on the new line");
				break;
			}
			src = hist ? hist : !up && hpos + 1 == nh ? (saved ? saved : "") : NULL;
			if (!src)
				fuzz_fail("model: no history source");
			exp = malloc(LINEEDIT_MAX);
			if (!exp)
				fuzz_fail("out of memory");
			p = expect_set(src, exp);
			if (strcmp(lineedit_text(le), exp) != 0 || lineedit_cursor(le) != p)
				fuzz_fail("%s: the line is \"%s\" (cursor %zu), expected the entry \"%s\"", up ? "Up" : "Down",
				          lineedit_text(le), lineedit_cursor(le), exp);
			if (le->hpos != (up ? hpos - 1 : hpos + 1))
				fuzz_fail("%s: browsing position %zu from %zu", up ? "Up" : "Down", le->hpos, hpos);
			break;
		}
		default:
			if (k >= 0x20 && k <= 0xFF && k != 0x7F)
				text_byte(le, m, &b, (uint8_t)k);
			else
				expect_unchanged(le, &b, "a key without a binding");
			break;
		}
		if (got != want)
			fuzz_fail("key %d returned %d, expected %d", k, (int)got, (int)want);
		free(saved);
		free(hist);
		free(exp);
	}
}

/* ---- the other operations ------------------------------------------- */

static const char *const candidates[] = {"step",  "stop",   "show",    "seal",   "run",   "remove-library",
                                         "remove-server", "thème", "thé", "théâtre", "12", "123", "1234",
                                         "日本", "日本語", "x y", ""};

static void complete_fn(lineedit_candidates *out, const char *line, size_t word_start, const char *word, void *arg)
{
	size_t i;

	(void)arg;
	if (word_start > strlen(line) || strcmp(line + word_start, word) != 0)
		fuzz_fail("completion: word \"%s\" is not the end of \"%s\" from %zu", word, line, word_start);
	for (i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
		if (!lineedit_candidates_add(out, candidates[i]))
			fuzz_fail("out of memory");
}

static void complete(lineedit *le)
{
	lineedit_candidates m;
	snap b;
	size_t start, n, i;

	take(&b, le);
	start = lineedit_word_start(b.text, b.cursor);
	n = lineedit_complete(le, complete_fn, NULL, &m);
	check_invariants(le, "completion");
	if (n > m.n)
		fuzz_fail("completion: %zu matches reported, %zu returned", n, m.n);
	for (i = 0; i < m.n; i++)
		if (strncmp(m.items[i], b.text + start, b.cursor - start) != 0)
			fuzz_fail("completion: candidate \"%s\" does not start with the word", m.items[i]);
	if (strncmp(lineedit_text(le), b.text, start) != 0)
		fuzz_fail("completion changed the text before the word: \"%s\" -> \"%s\"", b.text, lineedit_text(le));
	lineedit_candidates_free(&m);
}

static void insert(lineedit *le, const uint8_t *s, size_t n)
{
	char raw[40], clean[40];
	size_t k;
	snap b;
	bool ok;

	memcpy(raw, s, n);
	raw[n] = '\0';
	take(&b, le);
	ok = lineedit_insert(le, raw);
	check_invariants(le, "lineedit_insert");
	k = sanitize((const uint8_t *)raw, strlen(raw), clean);
	if (ok != (b.len + k < LINEEDIT_MAX))
		fuzz_fail("lineedit_insert returned %d for %zu clean bytes on a %zu-byte line", ok, k, b.len);
	expect_insert(le, &b, clean, k, "lineedit_insert");
}

static void set(lineedit *le, const uint8_t *s, size_t n, size_t total)
{
	char *raw = malloc(total + 1), *exp = malloc(LINEEDIT_MAX);
	size_t i, k;

	if (!raw || !exp)
		fuzz_fail("out of memory");
	for (i = 0; i < total; i++)
		raw[i] = n ? (char)s[i % n] : 'a';
	raw[total] = '\0';
	lineedit_set(le, raw);
	check_invariants(le, "lineedit_set");
	k = expect_set(raw, exp);
	if (strcmp(lineedit_text(le), exp) != 0 || lineedit_cursor(le) != k)
		fuzz_fail("lineedit_set: %zu bytes, expected the %zu of the cleaned text", strlen(lineedit_text(le)), k);
	free(raw);
	free(exp);
}

static void history_add(lineedit *le, const char *line)
{
	size_t before = lineedit_history_count(le), after;
	const char *newest = before ? lineedit_history_get(le, before - 1) : NULL;
	bool takes = line[strspn(line, " \t")] && !(newest && strcmp(newest, line) == 0) && !strchr(line, '\n') &&
	             strlen(line) < LINEEDIT_MAX;

	if (!lineedit_history_add(le, line))
		fuzz_fail("lineedit_history_add: out of memory");
	check_invariants(le, "lineedit_history_add");
	after = lineedit_history_count(le);
	if (takes && (after != (before < LINEEDIT_HISTORY_MAX ? before + 1 : before) ||
	              strcmp(lineedit_history_get(le, after - 1), line) != 0))
		fuzz_fail("history_add: \"%s\" not added as the newest entry (%zu -> %zu entries)", line, before, after);
	if (!takes && after != before)
		fuzz_fail("history_add: \"%s\" added (%zu -> %zu entries); blank, repeated or multi-line", line, before,
		          after);
	if (le->hpos != after || le->saved)
		fuzz_fail("history_add did not end browsing");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lineedit le;
	model m;
	size_t i = 0;

	fuzz_set_input(data, size);
	lineedit_init(&le);
	memset(&m, 0, sizeof m);
	while (i < size) {
		uint8_t op = data[i++];
		size_t n;

		if (op < 0xF8) {
			key(&le, &m, op);
			continue;
		}
		switch (op) {
		case 0xF8:
			if (i < size)
				key(&le, &m, special[data[i++] % N_SPECIAL]);
			break;
		case 0xF9:
			n = i < size ? data[i++] % 32 : 0;
			n = n < size - i ? n : size - i;
			insert(&le, data + i, n);
			i += n; /* not a key: a pending UTF-8 sequence stays pending */
			break;
		case 0xFA: {
			size_t r = i < size ? data[i++] : 0;

			n = i < size ? data[i++] % 32 : 0;
			n = n < size - i ? n : size - i;
			set(&le, data + i, n, n + 6 * r);
			i += n;
			break;
		}
		case 0xFB: {
			char copy[LINEEDIT_MAX];

			snprintf(copy, sizeof copy, "%s", lineedit_text(&le));
			history_add(&le, copy);
			break;
		}
		case 0xFC: {
			char raw[64];

			n = i < size ? data[i++] % 64 : 0;
			n = n < size - i ? n : size - i;
			memcpy(raw, data + i, n);
			raw[n < sizeof raw ? n : sizeof raw - 1] = '\0';
			history_add(&le, raw);
			i += n;
			break;
		}
		case 0xFD:
			complete(&le);
			break;
		case 0xFE:
			lineedit_reset(&le);
			check_invariants(&le, "lineedit_reset");
			if (lineedit_text(&le)[0] || lineedit_cursor(&le))
				fuzz_fail("lineedit_reset left text");
			m.npending = 0;
			break;
		default: /* 0xFF */
			if (i < size)
				key(&le, &m, 0xF8 | (data[i++] & 7));
			break;
		}
	}
	check_invariants(&le, "the last operation");
	lineedit_free(&le);
	return 0;
}
