/* Helpers shared by every fuzz target, with libFuzzer and with the built-in
 * driver alike (see fuzz.h): property failures, known bugs, and the UTF-8
 * reference the targets check the project's code against. Output goes to
 * file descriptor 2 directly, never through stdio's stderr, which some
 * targets point at /dev/null to keep the code under test quiet. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"

static const uint8_t *cur_data;
static size_t cur_size;

void fuzz_set_input(const uint8_t *data, size_t size)
{
	cur_data = data;
	cur_size = size;
}

/* The current input as a C string literal, cut after 512 bytes. */
static void print_input(void)
{
	size_t i, n = cur_size < 512 ? cur_size : 512;

	dprintf(2, "  input (%zu bytes): \"", cur_size);
	for (i = 0; i < n; i++) {
		uint8_t c = cur_data[i];

		if (c == '\\' || c == '"')
			dprintf(2, "\\%c", c);
		else if (c >= 0x20 && c < 0x7F)
			dprintf(2, "%c", c);
		else
			dprintf(2, "\\x%02x", c);
	}
	dprintf(2, "\"%s\n", n < cur_size ? "..." : "");
}

void fuzz_fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	dprintf(2, "property failed: %s\n", msg);
	print_input();
	abort();
}

void fuzz_known_bug(const char *id, const char *fmt, ...)
{
	static char seen[16][48];
	static int nseen;
	const char *strict = getenv("FUZZ_STRICT");
	char msg[1024];
	va_list ap;
	int i;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (strict && strcmp(strict, "1") == 0)
		fuzz_fail("known bug %s (FUZZ_STRICT=1): %s", id, msg);
	for (i = 0; i < nseen; i++)
		if (strcmp(seen[i], id) == 0)
			return;
	if (nseen < 16)
		snprintf(seen[nseen++], sizeof seen[0], "%s", id);
	dprintf(2, "known bug %s (reported, not failing; FUZZ_STRICT=1 fails on it): %s\n", id, msg);
	print_input();
}

size_t fuzz_utf8_char(const uint8_t *s, size_t n, uint32_t *cp)
{
	/* Table 3-7: the lead byte fixes the length and the range allowed for
	 * the second byte; later bytes are always 80..BF. */
	uint8_t lo2 = 0x80, hi2 = 0xBF;
	size_t len, i;

	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] < 0xC2 || s[0] > 0xF4)
		return 0;
	if (s[0] <= 0xDF) {
		len = 2;
	} else if (s[0] <= 0xEF) {
		len = 3;
		if (s[0] == 0xE0)
			lo2 = 0xA0;
		else if (s[0] == 0xED)
			hi2 = 0x9F;
	} else {
		len = 4;
		if (s[0] == 0xF0)
			lo2 = 0x90;
		else if (s[0] == 0xF4)
			hi2 = 0x8F;
	}
	if (n < len || s[1] < lo2 || s[1] > hi2)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	/* Well-formed: the bits can be read without further checks. */
	if (len == 2)
		*cp = ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
	else if (len == 3)
		*cp = ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
	else
		*cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) | ((uint32_t)(s[2] & 0x3F) << 6) |
		      (s[3] & 0x3F);
	return len;
}

bool fuzz_is_control(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
}

bool fuzz_clean_utf8(const uint8_t *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint32_t cp;
		size_t k;

		if (s[i] >= 0x20 && s[i] < 0x7F) {
			i++;
			continue;
		}
		k = fuzz_utf8_char(s + i, n - i, &cp);
		if (k == 0 || fuzz_is_control(cp))
			return false;
		i += k;
	}
	return true;
}

size_t fuzz_utf8_encode(uint32_t cp, uint8_t *out)
{
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xC0 | (cp >> 6));
		out[1] = (uint8_t)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (uint8_t)(0xE0 | (cp >> 12));
		out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (uint8_t)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (uint8_t)(0xF0 | (cp >> 18));
	out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (uint8_t)(0x80 | (cp & 0x3F));
	return 4;
}
