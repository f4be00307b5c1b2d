/* Terminal-safe text (see sanitize.h): a locale-independent UTF-8 decoder
 * and the one rule for what may reach a terminal. */
#include "sanitize.h"
#include <string.h>

size_t tui_utf8_next(const char *s, size_t n, int32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len, i;
	int32_t c, min;

	*cp = -1;
	if (n == 0)
		return 1;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xC2 && p[0] <= 0xDF) {
		len = 2;
		c = p[0] & 0x1F;
		min = 0x80;
	} else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
		len = 3;
		c = p[0] & 0x0F;
		min = 0x800;
	} else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
		len = 4;
		c = p[0] & 0x07;
		min = 0x10000;
	} else {
		return 1; /* a continuation byte, 0xC0/0xC1 (overlong) or 0xF5-0xFF */
	}
	if (n < len)
		return 1;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 1;
		c = (c << 6) | (p[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 1;
	*cp = c;
	return len;
}

bool tui_unsafe_codepoint(int32_t cp)
{
	return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

const char *tui_sanitize_cell(char *buf, size_t len, const char *s, size_t width)
{
	size_t n, i = 0, o = 0, chars = 0;

	if (!buf || len == 0)
		return buf;
	s = s ? s : "";
	n = strlen(s);
	while (i < n && (width == 0 || chars < width)) {
		int32_t cp;
		size_t l = tui_utf8_next(s + i, n - i, &cp);
		bool bad = tui_unsafe_codepoint(cp);
		size_t out = bad ? 1 : l;

		if (o + out >= len)
			break;
		if (bad)
			buf[o] = '?';
		else
			memcpy(buf + o, s + i, l);
		o += out;
		i += l;
		chars++;
	}
	while (width > 0 && chars < width && o + 1 < len) {
		buf[o++] = ' ';
		chars++;
	}
	buf[o] = '\0';
	return buf;
}

const char *tui_sanitize(char *buf, size_t len, const char *s)
{
	return tui_sanitize_cell(buf, len, s, 0);
}

void tui_fputs_safe(const char *s, FILE *f)
{
	size_t n, i = 0;

	s = s ? s : "";
	n = strlen(s);
	while (i < n) {
		int32_t cp;
		size_t l = tui_utf8_next(s + i, n - i, &cp);

		if (tui_unsafe_codepoint(cp))
			fputc('?', f);
		else
			fwrite(s + i, 1, l, f);
		i += l;
	}
}

bool tui_is_safe(const char *s)
{
	size_t n, i = 0;

	s = s ? s : "";
	n = strlen(s);
	while (i < n) {
		int32_t cp;

		i += tui_utf8_next(s + i, n - i, &cp);
		if (tui_unsafe_codepoint(cp))
			return false;
	}
	return true;
}
