/* Numbers as both front ends write and read them (numtext.h). */
#include "numtext.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tui_count_text(char *buf, size_t len, int64_t n)
{
	char tmp[32];
	size_t i, j = 0, l;
	int neg = n < 0;

	snprintf(tmp, sizeof tmp, "%" PRId64, neg ? -n : n);
	l = strlen(tmp);
	if (len < l + l / 3 + 2) {
		snprintf(buf, len, "%" PRId64, n);
		return buf;
	}
	if (neg)
		buf[j++] = '-';
	for (i = 0; i < l; i++) {
		if (i && (l - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
	return buf;
}

const char *tui_seconds_syntax(const char *s, double min, double max, double *out)
{
	const char *p = s;
	char *end = NULL;
	int digits = 0, frac = 0;
	double v;

	if (!s || !*s)
		return "an empty value";
	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			frac++;
	if (*p || digits == 0 || (p[-1] == '.' && frac == 0) || digits > 9)
		return digits > 9 && !*p ? "out of range"
		                         : "a decimal number of seconds: digits with an optional fraction (no sign, "
		                           "space, exponent or hex)";
	v = strtod(s, &end);
	if (!(v >= min && v <= max))
		return "out of range";
	*out = v;
	return NULL;
}
