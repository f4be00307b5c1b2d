/* The built-in line editor (see lineedit.h): a bounded UTF-8 buffer edited
 * with Emacs keys, a bounded history and word completion. No curses calls:
 * only its key codes, so the unit tests drive it directly. */
#define _GNU_SOURCE 1 /* wcwidth */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include "lineedit.h"
#include "sanitize.h"

#define CTRL(c) ((c) & 0x1f)

/* Decodes the UTF-8 character at S (at most N bytes) by tui_utf8_next's
 * rule. Returns its length (0 when S starts no valid character) and the
 * code point in *CP. */
static size_t utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
	int32_t c = -1;
	size_t len = n > 0 ? tui_utf8_next((const char *)s, n, &c) : 0;

	*cp = c < 0 ? 0 : (unsigned)c;
	return c < 0 ? 0 : len;
}

/* Expected length of a sequence starting with lead byte C (0: not a lead). */
static int utf8_need(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return 2;
	if (c >= 0xE0 && c <= 0xEF)
		return 3;
	if (c >= 0xF0 && c <= 0xF4)
		return 4;
	return 0;
}

static bool is_control(unsigned cp)
{
	return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0);
}

size_t lineedit_char_len(const char *s)
{
	unsigned cp;
	size_t n;

	if (!s || !*s)
		return 0;
	n = utf8_decode((const unsigned char *)s, strnlen(s, 4), &cp);
	return n ? n : 1;
}

int lineedit_width(const char *s, size_t n)
{
	size_t i = 0;
	int w = 0;

	while (i < n) {
		unsigned cp = 0;
		size_t l = utf8_decode((const unsigned char *)s + i, n - i, &cp);
		int cw;

		if (l == 0) {
			i++;
			w++;
			continue;
		}
		cw = wcwidth((wchar_t)cp);
		w += cw < 0 ? 1 : cw;
		i += l;
	}
	return w;
}

/* Byte offset of the character before POS. */
static size_t prev_char(const lineedit *le, size_t pos)
{
	if (pos == 0)
		return 0;
	pos--;
	while (pos > 0 && ((unsigned char)le->buf[pos] & 0xC0) == 0x80)
		pos--;
	return pos;
}

/* Byte offset of the character after POS. */
static size_t next_char(const lineedit *le, size_t pos)
{
	if (pos >= le->len)
		return le->len;
	return pos + lineedit_char_len(le->buf + pos);
}

void lineedit_init(lineedit *le)
{
	memset(le, 0, sizeof *le);
}

static void end_browsing(lineedit *le)
{
	free(le->saved);
	le->saved = NULL;
	le->hpos = le->nhistory;
}

/* Frees the N strings of V and V (the history, the candidates). */
static void free_strings(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void lineedit_free(lineedit *le)
{
	if (!le)
		return;
	free_strings(le->history, le->nhistory);
	free(le->saved);
	memset(le, 0, sizeof *le);
}

void lineedit_reset(lineedit *le)
{
	le->len = 0;
	le->cursor = 0;
	le->buf[0] = '\0';
	le->npending = 0;
	le->need = 0;
	end_browsing(le);
}

const char *lineedit_text(const lineedit *le)
{
	return le->buf;
}

size_t lineedit_cursor(const lineedit *le)
{
	return le->cursor;
}

int lineedit_cursor_col(const lineedit *le)
{
	return lineedit_width(le->buf, le->cursor);
}

/* Removes bytes [FROM, TO) and puts the cursor at FROM; when KILL, keeps
 * them for ^Y. */
static void delete_range(lineedit *le, size_t from, size_t to, bool kill)
{
	if (to <= from)
		return;
	if (kill) {
		memcpy(le->kill, le->buf + from, to - from);
		le->kill[to - from] = '\0';
	}
	memmove(le->buf + from, le->buf + to, le->len - to + 1);
	le->len -= to - from;
	le->cursor = from;
}

/* Inserts N bytes of valid UTF-8 at the cursor, or nothing if they do not fit. */
static bool insert_bytes(lineedit *le, const char *s, size_t n)
{
	if (le->len + n >= LINEEDIT_MAX)
		return false;
	memmove(le->buf + le->cursor + n, le->buf + le->cursor, le->len - le->cursor + 1);
	memcpy(le->buf + le->cursor, s, n);
	le->len += n;
	le->cursor += n;
	return true;
}

bool lineedit_insert(lineedit *le, const char *s)
{
	char clean[LINEEDIT_MAX];
	size_t i = 0, n = 0, len = strlen(s);

	while (i < len) {
		unsigned cp;
		size_t l = utf8_decode((const unsigned char *)s + i, len - i, &cp);

		if (l == 0) {
			i++;
			continue;
		}
		if (!is_control(cp)) {
			if (n + l >= sizeof clean)
				return false;
			memcpy(clean + n, s + i, l);
			n += l;
		}
		i += l;
	}
	return insert_bytes(le, clean, n);
}

void lineedit_set(lineedit *le, const char *s)
{
	le->len = 0;
	le->cursor = 0;
	le->buf[0] = '\0';
	if (!lineedit_insert(le, s)) {
		/* Too long: keep as many whole characters as fit. */
		size_t i = 0, len = strlen(s);

		while (i < len) {
			size_t l = lineedit_char_len(s + i);
			char one[5];

			memcpy(one, s + i, l);
			one[l] = '\0';
			if (le->len + l >= LINEEDIT_MAX)
				break;
			lineedit_insert(le, one);
			i += l;
		}
	}
	le->cursor = le->len;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

size_t lineedit_word_start(const char *line, size_t end)
{
	while (end > 0 && !is_space(line[end - 1]))
		end--;
	return end;
}

/* ^W: back over spaces, then over the word (whitespace-delimited, so a
 * multi-byte character is never split). */
static void rubout_word(lineedit *le)
{
	size_t from = le->cursor;

	while (from > 0 && is_space(le->buf[from - 1]))
		from--;
	while (from > 0 && !is_space(le->buf[from - 1]))
		from--;
	delete_range(le, from, le->cursor, true);
}

static void transpose(lineedit *le)
{
	char tmp[8];
	size_t a, b, c, la, lb;

	if (le->len == 0 || le->cursor == 0)
		return;
	/* At the end of the line, swap the two characters before the cursor. */
	b = le->cursor == le->len ? prev_char(le, le->cursor) : le->cursor;
	if (b == 0)
		return;
	a = prev_char(le, b);
	c = next_char(le, b);
	la = b - a;
	lb = c - b;
	memcpy(tmp, le->buf + a, la);
	memmove(le->buf + a, le->buf + b, lb);
	memcpy(le->buf + a + lb, tmp, la);
	le->cursor = c;
}

static void history_move(lineedit *le, int dir)
{
	if (dir < 0) {
		if (le->hpos == 0 || le->nhistory == 0)
			return;
		if (le->hpos == le->nhistory) {
			free(le->saved);
			le->saved = strdup(le->buf);
		}
		le->hpos--;
		lineedit_set(le, le->history[le->hpos]);
	} else {
		if (le->hpos >= le->nhistory)
			return;
		le->hpos++;
		if (le->hpos == le->nhistory) {
			lineedit_set(le, le->saved ? le->saved : "");
			free(le->saved);
			le->saved = NULL;
		} else {
			lineedit_set(le, le->history[le->hpos]);
		}
	}
}

/* A byte of text: collects UTF-8 sequences and inserts whole characters. */
static void text_byte(lineedit *le, unsigned char c)
{
	unsigned cp;

	if (le->npending > 0) {
		if ((c & 0xC0) == 0x80) {
			le->pending[le->npending++] = c;
			if (le->npending < le->need)
				return;
			if (utf8_decode(le->pending, (size_t)le->npending, &cp) == (size_t)le->npending &&
			    !is_control(cp))
				insert_bytes(le, (const char *)le->pending, (size_t)le->npending);
			le->npending = 0;
			return;
		}
		/* The sequence broke off: drop it and treat C afresh. */
		le->npending = 0;
	}
	le->need = utf8_need(c);
	if (le->need == 0)
		return;
	if (le->need == 1) {
		char one = (char)c;

		if (!is_control(c))
			insert_bytes(le, &one, 1);
		return;
	}
	le->pending[0] = c;
	le->npending = 1;
}

lineedit_action lineedit_key(lineedit *le, int key)
{
	/* A control key in the middle of a UTF-8 sequence drops the sequence. */
	if (le->npending > 0 && (key < 0x80 || key > 0xFF))
		le->npending = 0;

	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		return LE_SUBMIT;
	case 27:          /* Esc */
	case CTRL('c'):
	case CTRL('g'):
		return LE_CANCEL;
	case '\t':
		return LE_COMPLETE;
	case KEY_LEFT:
	case CTRL('b'):
		le->cursor = prev_char(le, le->cursor);
		return LE_NONE;
	case KEY_RIGHT:
	case CTRL('f'):
		le->cursor = next_char(le, le->cursor);
		return LE_NONE;
	case KEY_HOME:
	case CTRL('a'):
		le->cursor = 0;
		return LE_NONE;
	case KEY_END:
	case CTRL('e'):
		le->cursor = le->len;
		return LE_NONE;
	case KEY_BACKSPACE:
	case 127:
	case CTRL('h'):
		delete_range(le, prev_char(le, le->cursor), le->cursor, false);
		return LE_NONE;
	case CTRL('d'):
		if (le->len == 0)
			return LE_CANCEL;
		/* fall through */
	case KEY_DC:
		delete_range(le, le->cursor, next_char(le, le->cursor), false);
		return LE_NONE;
	case CTRL('w'):
		rubout_word(le);
		return LE_NONE;
	case CTRL('k'):
		delete_range(le, le->cursor, le->len, true);
		return LE_NONE;
	case CTRL('u'):
		delete_range(le, 0, le->cursor, true);
		return LE_NONE;
	case CTRL('y'):
		insert_bytes(le, le->kill, strlen(le->kill));
		return LE_NONE;
	case CTRL('t'):
		transpose(le);
		return LE_NONE;
	case KEY_UP:
	case CTRL('p'):
		history_move(le, -1);
		return LE_NONE;
	case KEY_DOWN:
	case CTRL('n'):
		history_move(le, +1);
		return LE_NONE;
	default:
		break;
	}
	if (key >= 0x20 && key <= 0xFF && key != 0x7F)
		text_byte(le, (unsigned char)key);
	return LE_NONE;
}

static bool blank(const char *s)
{
	for (; *s; s++)
		if (!is_space(*s))
			return false;
	return true;
}

bool lineedit_history_add(lineedit *le, const char *line)
{
	char *copy;

	end_browsing(le);
	if (!line || blank(line))
		return true;
	if (le->nhistory > 0 && strcmp(le->history[le->nhistory - 1], line) == 0)
		return true;
	if (strchr(line, '\n') || strlen(line) >= LINEEDIT_MAX)
		return true; /* could not be edited, nor saved one a line */
	copy = strdup(line);
	if (!copy)
		return false;
	if (!le->history) {
		le->history = calloc(LINEEDIT_HISTORY_MAX, sizeof *le->history);
		if (!le->history) {
			free(copy);
			return false;
		}
	}
	if (le->nhistory == LINEEDIT_HISTORY_MAX) {
		free(le->history[0]);
		memmove(le->history, le->history + 1, (LINEEDIT_HISTORY_MAX - 1) * sizeof *le->history);
		le->nhistory--;
	}
	le->history[le->nhistory++] = copy;
	le->hpos = le->nhistory;
	return true;
}

size_t lineedit_history_count(const lineedit *le)
{
	return le->nhistory;
}

const char *lineedit_history_get(const lineedit *le, size_t i)
{
	return i < le->nhistory ? le->history[i] : NULL;
}

int lineedit_history_load(lineedit *le, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	if (!f)
		return errno == ENOENT ? 0 : -1;
	while ((n = getline(&line, &cap, f)) >= 0) {
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (!lineedit_history_add(le, line)) {
			rc = -1;
			errno = ENOMEM;
			break;
		}
	}
	if (rc == 0 && ferror(f))
		rc = -1;
	free(line);
	fclose(f);
	return rc;
}

int lineedit_history_save(const lineedit *le, const char *path)
{
	char tmp[4096];
	FILE *f;
	size_t i;
	int saved;

	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	for (i = 0; i < le->nhistory; i++)
		fprintf(f, "%s\n", le->history[i]);
	if (fflush(f) != 0 || ferror(f)) {
		saved = errno;
		fclose(f);
		unlink(tmp);
		errno = saved;
		return -1;
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}

bool lineedit_candidates_add(lineedit_candidates *c, const char *s)
{
	char *copy;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		char **grown = realloc(c->items, cap * sizeof *grown);

		if (!grown)
			return false;
		c->items = grown;
		c->cap = cap;
	}
	copy = strdup(s);
	if (!copy)
		return false;
	c->items[c->n++] = copy;
	return true;
}

void lineedit_candidates_free(lineedit_candidates *c)
{
	if (!c)
		return;
	free_strings(c->items, c->n);
	memset(c, 0, sizeof *c);
}

size_t lineedit_complete(lineedit *le, lineedit_complete_fn fn, void *arg, lineedit_candidates *matches)
{
	lineedit_candidates all = {0}, keep = {0};
	char before[LINEEDIT_MAX], word[LINEEDIT_MAX];
	size_t start, wlen, i, common, n;

	if (matches)
		memset(matches, 0, sizeof *matches);
	memcpy(before, le->buf, le->cursor);
	before[le->cursor] = '\0';
	start = lineedit_word_start(before, le->cursor);
	wlen = le->cursor - start;
	memcpy(word, before + start, wlen);
	word[wlen] = '\0';
	fn(&all, before, start, word, arg);
	for (i = 0; i < all.n; i++) {
		size_t k;
		bool dup = false;

		if (strncmp(all.items[i], word, wlen) != 0)
			continue;
		for (k = 0; k < keep.n && !dup; k++)
			dup = strcmp(keep.items[k], all.items[i]) == 0;
		if (!dup && !lineedit_candidates_add(&keep, all.items[i]))
			break;
	}
	lineedit_candidates_free(&all);
	n = keep.n;
	if (n > 0) {
		/* Longest common prefix, cut back to a character boundary. */
		common = strlen(keep.items[0]);
		for (i = 1; i < n; i++) {
			size_t k = 0;

			while (k < common && keep.items[i][k] == keep.items[0][k])
				k++;
			common = k;
		}
		while (common > wlen && ((unsigned char)keep.items[0][common] & 0xC0) == 0x80)
			common--;
		if (common > wlen || n == 1) {
			char add[LINEEDIT_MAX];
			size_t extra = common - wlen;

			if (extra >= sizeof add)
				extra = 0;
			memcpy(add, keep.items[0] + wlen, extra);
			add[extra] = '\0';
			if (extra == 0 && common > wlen) {
				n = 0;
			} else if (!lineedit_insert(le, add)) {
				n = 0;
			} else if (n == 1) {
				/* The word is done: step over a following space or add one. */
				if (le->buf[le->cursor] == ' ')
					le->cursor++;
				else
					lineedit_insert(le, " ");
			}
		}
	}
	if (matches)
		*matches = keep;
	else
		lineedit_candidates_free(&keep);
	return n;
}
